"""What the gate panel's rows and the gate pane's head say about a gate: pure, from the journal."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from cockpit.gates.catalog import measures
from cockpit.gates.catalog import summary_said as said_in_words
from cockpit.gates.orphans import running_elsewhere
from cockpit.printable import printable
from cockpit.session.state import GateRunRecord
from cockpit.ui.widgets.gate_marks import status_head
from cockpit.ui.widgets.gate_panel import GateRow

if TYPE_CHECKING:
    from cockpit.gates.result import GateResult
    from cockpit.gates.run import GateRun
    from cockpit.patterns.library import Pattern

COMPACT_BELOW = 16
"""A gate pane shorter than this (80x24) gives each matched pattern a number: the result (headline,
table, checks) is what must show."""


def gate_row(name: str, record: GateRunRecord | None, run: GateRun | None, queue: Sequence[str],
             wanting: Collection[str], now: float) -> GateRow:
    """One gate's row: our own run first, then the queue, then what the journal last holds."""
    if run is not None and run.gate.name == name:
        return GateRow(name, "running", "", activity=run.activity(), elapsed_s=now - run.started_t)
    if name in queue:
        return GateRow(name, "queued", f"queued #{queue.index(name) + 1}")
    if record is None and name in wanting:
        return GateRow(name, "no_workload", "no workload here: cockpit init")
    if record is None:
        return GateRow(name, "never", "not run yet")
    return _journaled_row(record, now)


def _journaled_row(record: GateRunRecord, now: float) -> GateRow:
    """The row of a run the journal holds: finished, running in another cockpit, or interrupted."""
    name = record.gate
    if record.finished:
        return GateRow(name, record.status or "error", summary_said(record),
                       record.duration_s, minutes(now - (record.finished_t or now)))
    if running_elsewhere(record):
        return GateRow(name, "running", f"running in another cockpit (pid {record.owner})",
                       elapsed_s=now - record.started_t)
    return GateRow(name, "interrupted", interrupted_summary(record), ago_s=minutes(now - record.started_t))


def not_run_said(title: str, ended: bool, wants_workload: bool) -> str:
    """The pane of a gate with no run in this session: why, and what to do about it."""
    from cockpit.ui.controllers.key_states import NO_WORKLOAD

    if ended:
        return f"{title}: not run in this session (it has ended)."
    if wants_workload:
        return f"{title} needs a workload. {NO_WORKLOAD}"
    return f"{title}: not run yet — r runs it."


def journaled_head(record: GateRunRecord, matches: Sequence[tuple[Pattern, str]], compact: bool) -> Text:
    """The pane's head for a journaled run: its status and summary, then the patterns it fits
    (by number only when `compact`: on 80x24 the result must keep the room)."""
    elsewhere = running_elsewhere(record)
    status = record.status or ("running" if elsewhere else "interrupted")
    head = Text.assemble(status_head(status), " ", _run_said(record, elsewhere))
    if compact:
        if matches:
            head.append("\n⚑ pattern " + ", ".join(f"{p.id:02d}" for p, _ in matches)
                        + " — o open · A applied", style="magenta")
        return head
    for pattern, why in matches:
        head.append(f"\n⚑ pattern {pattern.id:02d} {printable(pattern.title)}", style="bold magenta")
        head.append(f" ({printable(why)[:60]}) — o open · A applied", style="magenta")
    return head


def _run_said(record: GateRunRecord, elsewhere: bool) -> str:
    """What became of a journaled run, after its status mark."""
    if record.finished:
        return printable(summary_said(record))
    if elsewhere:
        return f"in another cockpit (pid {record.owner}); its output is in the log"
    return interrupted_summary(record)


def bench_speedups(runs: Iterable[GateRunRecord], shown: GateResult | None) -> list[float]:
    """Each bench run's speedup over its baseline, oldest first, for the chart under the shown
    result: runs of its workload only (another workload's speedup is over another baseline)."""
    from cockpit.gates.bench.result import BenchResult
    from cockpit.gates.catalog import read_result

    if not isinstance(shown, BenchResult):
        return []
    return [b.speedup for r in runs if measures(r.gate)
            and isinstance(b := read_result(r.gate, r.result), BenchResult) and b.speedup is not None
            and b.workload == shown.workload]


def summary_said(record: GateRunRecord) -> str:
    """A run's summary in today's words (gates/catalog.py's `summary_said`)."""
    return said_in_words(record.gate, record.summary, record.result_inline)


def minutes(seconds: float) -> float:
    """"How long ago" to the minute: rows that read the same compare equal, so an idle panel
    is not redrawn every second."""
    return seconds // 60 * 60


def interrupted_summary(record: GateRunRecord) -> str:
    """A run with no finish: the cockpit that ran it went away."""
    from cockpit.gates.pids import pid_alive

    if pid_alive(record.pid):
        return f"interrupted: its process (pid {record.pid}) is still running"
    return "interrupted: the cockpit closed before it finished"
