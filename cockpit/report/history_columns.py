"""The history table's columns, in the order a kernel engineer reads them, fitted to a width: the one
engine behind `cockpit history` and the History screen (H).

The outcome comes first (the best valid speedup and its level, or why there is none), then the
speedups against the workload's other references where a view has them, the date, duration, time
to the first valid baseline, repeated mistakes and patterns applied; the long names last: the
workload, the session's id, the objective. Where they do not all fit, the long ones are cut with
"…" (the id down to its stem, which tells sessions apart), then whole columns are left out, the
least read first; a cell is never wrapped. The outcome and the speedups are always there.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from cockpit.analysis.fix_payoff import FixPayoff
from cockpit.printable import printable
from cockpit.report.formats import utc
from cockpit.report.history import SessionSummary
from cockpit.report.trend import minutes, pattern_ids, times

GAP = 2
"""Cells between two columns."""
STEM = len("20261123-0849-2108") + 1
"""An id cut to its date, time and tag, and the "…"."""


@dataclass(frozen=True)
class HistoryColumn:
    key: str
    """What `history_cells` names the column's cell: "outcome", "vs:<reference id>", "date", …"""
    title: str
    """As the History screen heads it; `cockpit history` in capitals."""
    want: int
    """Cells it takes where there is room (a longer cell is cut with "…" even then)."""
    least: int
    """Cells it may be cut to before it is left out; `want` for a column never cut (a number)."""
    keep: int
    """Which columns are left out first where the narrowest do not fit: the lowest."""


def history_columns(id_width: int, references: Sequence[tuple[str, str]] = (),
                    workload: bool = True, fixes: bool = True) -> list[HistoryColumn]:
    """Every column, in the order shown. `id_width`: the longest session id; `references`: (id,
    label) of the workload's references, each a column of its own (the History screen's per-workload
    view); `workload` False: one workload's sessions, its name said once above them; `fixes` False:
    without the profile's fix against what it realized (the History screen, whose per-workload view
    gives the outcome and the speedups the room)."""
    titles = [(ref, f"vs {printable(label)}") for ref, label in references]
    versus = [HistoryColumn(f"vs:{ref}", title, width := max(len("0.00x"), cell_width(title)), width, 90 - i)
              for i, (ref, title) in enumerate(titles)]
    # Left out last: the outcome, the speedups, the duration, the id, the objective, the date.
    columns = [
        HistoryColumn("outcome", "outcome", 26, 16, 100), *versus,
        HistoryColumn("date", "date", 16, 16, 60),
        HistoryColumn("duration", "duration", 8, 8, 80),
        HistoryColumn("first_valid", "1st valid", 9, 9, 50),
        HistoryColumn("fix", "fix → realized", 48, 14, 65),
        HistoryColumn("mistakes", "mistakes", 11, 8, 40),
        HistoryColumn("patterns", "patterns", 11, 8, 10),
        HistoryColumn("workload", "workload", 14, 9, 20),
        # The id's slug repeats the objective: cut to its stem, the id still names the session.
        HistoryColumn("session", "session", max(id_width, 7), min(max(id_width, 7), STEM), 75),
        HistoryColumn("objective", "objective", 60, 20, 70),
    ]
    return [c for c in columns if (workload or c.key != "workload") and (fixes or c.key != "fix")]


def fit_columns(columns: Sequence[HistoryColumn], room: int | None) -> list[tuple[HistoryColumn, int]]:
    """The columns shown in `room` cells (GAP between two), in their order, each with its width.
    The least-kept go until the rest fit at their narrowest; the room left widens them left to
    right, each up to what it wants. `room` None: every column at the width it wants."""
    if room is None:
        return [(c, c.want) for c in columns]
    shown = list(columns)
    for gone in sorted(columns, key=lambda c: c.keep)[:-1]:  # the most kept always stays
        if _narrowest(shown) <= room:
            break
        shown.remove(gone)
    spare = room - _narrowest(shown)
    widths = []
    for c in shown:
        more = max(0, min(spare, c.want - c.least))
        widths.append(c.least + more)
        spare -= more
    return list(zip(shown, widths, strict=True))


def _narrowest(columns: Sequence[HistoryColumn]) -> int:
    return sum(c.least for c in columns) + GAP * max(0, len(columns) - 1)


def history_row(s: SessionSummary, columns: Sequence[HistoryColumn]) -> list[str]:
    """One session's cells under `columns`: "—" under a reference its best run did not measure."""
    cells = history_cells(s)
    return [cells.get(c.key, "—") for c in columns]


def history_cells(s: SessionSummary) -> dict[str, str]:
    """One session's cells by column key, each one clean line (a cell for each of its references)."""
    mistakes = f"{len(s.mistakes)} ({pattern_ids(m.id for m in s.mistakes)})" if s.mistakes else "0"
    cells = {
        "outcome": s.outcome + ("" if s.ended_t is not None else " (open)"),
        "date": utc(s.started_t)[:16], "duration": minutes(s.duration_s),
        "first_valid": minutes(s.first_valid_s), "mistakes": mistakes,
        "patterns": pattern_ids(s.patterns_applied), "workload": s.workload or "—",
        "fix": fix_cell(s.payoffs), "session": s.id, "objective": s.objective,
        **{f"vs:{r.reference}": times(r.speedup) for r in s.best_vs},
    }
    return {key: printable(text) for key, text in cells.items()}


def fix_cell(payoffs: Sequence[FixPayoff]) -> str:
    """The session's last profile fix, the numbers first ("47.7 % → 1.20x [1.18, 1.20] keep ·
    TheoreticalOccupancy": a cut cell keeps what was predicted and realized), and how many more;
    "—" when no bench followed a profile."""
    if not payoffs:
        return "—"
    last = payoffs[-1]
    p = last.predicted
    said = f"{p.estimate_pct:.3g} %" if p.estimate_pct is not None else "no est."
    got = (f"{last.realized[0]:.2f}x [{last.realized[1]:.2f}, {last.realized[2]:.2f}]" if last.realized
           else "not measured")
    more = f" (+{len(payoffs) - 1} more)" if len(payoffs) > 1 else ""
    return f"{said} → {got} {last.action} · {p.rule or 'the decision tree'}{more}"


def cell_width(text: str) -> int:
    """The cells `text` takes on a terminal: a wide (East Asian) character two, a combining one none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def cut(text: str, width: int) -> str:
    """`text` in at most `width` cells: whole if it fits, else its start and "…"."""
    if cell_width(text) <= width:
        return text
    kept, used = [], 0
    for ch in text:
        used += cell_width(ch)
        if used > width - 1:
            break
        kept.append(ch)
    return "".join(kept) + "…"


def table_line(cells: Sequence[str], widths: Sequence[int]) -> str:
    """One line of the table: each cell cut to its column and padded to it (the last one not)."""
    fitted = [cut(c, w) for c, w in zip(cells, widths, strict=True)]
    padded = [c + " " * (w - cell_width(c)) for c, w in zip(fitted[:-1], widths, strict=False)]
    return (" " * GAP).join([*padded, fitted[-1]]).rstrip() if fitted else ""
