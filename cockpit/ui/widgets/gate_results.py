"""A gate run's result as the detail pane draws it: the run's view (`gates/<name>/view.py`, the same one
the report writes) in colour: what failed first, the gate's table, then its facts and warnings.
Every word of a view comes from a child's result file: each passes the door (cockpit/printable.py)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from cockpit.gates.bench.result import BenchResult
from cockpit.gates.catalog import measures, read_result, view_of
from cockpit.gates.result import GateResult, HeadlineFigure
from cockpit.gates.view import Cell, Fact, Fix, GateView, Tone, ViewTable
from cockpit.printable import printable
from cockpit.session.state import GateRunRecord
from cockpit.ui.widgets.fitted_table import FittedTable, least_widths

STYLE: dict[Tone, str] = {"": "", "good": "green", "warn": "yellow", "bad": "bold red", "dim": "dim",
                          "strong": "bold", "fix": "bold cyan", "quiet": "italic"}
ICON: dict[Tone, str] = {"good": "✓", "warn": "!", "bad": "✗"}
SPARK = "▁▂▃▄▅▆▇█"


def render_result(gate: str, result: GateResult | None, speedups: list[float] | None = None
                  ) -> RenderableType | None:
    """The gate's result as the detail pane shows it; `speedups`: the session's bench runs, for
    the chart under the bench's table. A result's headline (a bench's speedup) leads, the biggest
    thing in it."""
    view = view_of(gate, result)
    if view is None or result is None:
        return None
    shown = render_view(view, speedups)
    lead = result.headline()
    return Group(headline_line(lead), shown) if lead is not None else shown


def fix_of(gate: str, result: GateResult | None) -> Fix | None:
    """What a run's view says to do first, a line to copy whole; None when it says nothing."""
    view = view_of(gate, result)
    return view.fix if view is not None else None


def headline_line(lead: HeadlineFigure) -> Text:
    """The one number a session is about, readable from across the room, coloured by whether it
    counts and by which side of the bar it is on."""
    colour = {"good": "bold white on dark_green", "bad": "bold white on red3", "warn": "bold black on yellow"}
    said = "  NOT VALID: a number to re-measure, not a result · " if lead.tone == "warn" else "  "
    line = Text.assemble((f" {lead.figure} ", colour[lead.tone]), " vs ", (printable(lead.against), "bold"),
                         said, (printable(lead.words), "italic"))
    if lead.over:
        line.append(f" · {lead.over} configs", style="dim")
    return line


def render_view(view: GateView, speedups: list[float] | None = None) -> RenderableType:
    parts: list[RenderableType] = []
    if view.problems:
        parts.append(Text("\n").join(_text(c) for c in view.problems))
    parts += [table(t) for t in view.tables]
    if speedups:
        parts.append(speedup_chart(speedups))
    if view.facts:
        parts.append(facts_table(view.facts))
    parts += [Text(f"! {printable(w)}", style="yellow") for w in view.warnings]
    return parts[0] if len(parts) == 1 else Group(*parts)


def table(view: ViewTable) -> FittedTable:
    """The view's table where its columns fit the pane, a card per row where they do not: a number
    is never cut (at 80x24 every one read `0.…`)."""
    caption = Text(printable("\n".join(view.notes)), style="dim italic") if view.notes else None
    out = Table(box=None, padding=(0, 1), expand=True, header_style="dim", caption=caption,
                caption_justify="left")
    rows = [tuple(_icon(cell) if column.status else _text(cell)
                  for column, cell in zip(view.columns, row, strict=True)) for row in view.rows]
    header = tuple((printable(c.title), "icon" if c.status else "number" if c.numeric else "text")
                   for c in view.columns)
    at_least = tuple(c.least for c in view.columns)
    for column, (title, _), least in zip(view.columns, header, least_widths(header, rows, at_least),
                                         strict=True):
        if column.status:
            out.add_column("", no_wrap=True, width=1)
        elif column.numeric:
            out.add_column(Text(title), justify="right", no_wrap=True, min_width=least)
        else:
            # wrapped, never cut: at 120x40 a cut value hid which Python the gates ran
            out.add_column(Text(title), ratio=column.share or None, overflow="fold", min_width=least)
    for row in rows:
        out.add_row(*row)
    return FittedTable(out, header, rows, caption, at_least)


def facts_table(facts: tuple[Fact, ...]) -> Table:
    """Label and value, a bar beside a share of peak, a kernel's name fitted to the width."""
    from cockpit.ui.widgets.kernel_name import KernelName

    out = Table(box=None, padding=(0, 1), expand=True, show_header=False)
    out.add_column(style="dim", no_wrap=True)
    out.add_column(ratio=1)
    for fact in facts:
        value: RenderableType = KernelName(fact.value) if fact.kernel else _text(Cell(fact.value, fact.tone))
        if fact.meter is not None:
            value = bar(fact.meter) + Text(f" {printable(fact.value)}")
        out.add_row(Text(printable(fact.label)), value)
    return out


def bar(percent: float | None, width: int = 20) -> Text:
    if percent is None:
        return Text("n/a".ljust(width), style="dim")
    filled = round(min(100.0, percent) / 100 * width)
    style = "red" if percent >= 80 else "yellow" if percent >= 60 else "green"
    return Text("█" * filled + "·" * (width - filled), style=style)


def speedup_chart(speedups: list[float]) -> Text:
    """Each bench run of the session, oldest first: a bar and its speedup."""
    text = Text("runs: ", style="dim")
    top = max(speedups)
    for i, s in enumerate(speedups):
        level = min(len(SPARK) - 1, int(s / top * (len(SPARK) - 1))) if top > 0 else 0
        style = "red" if s < 0.5 else "yellow" if s < 1.0 else "green"
        text.append(f"{' ' if i else ''}{SPARK[level]}{s:.2f}x", style=style)
    return text


def _text(cell: Cell) -> Text:
    return Text(printable(cell.text), style=STYLE[cell.tone])


def _icon(cell: Cell) -> Text:
    return Text(ICON.get(cell.tone, "?"), style=STYLE[cell.tone] if cell.tone in ICON else "dim")


def gate_markdown(run: GateRunRecord) -> str:
    """A gate run as a small markdown table, for the session log."""
    when = f"{run.duration_s:.1f} s" if run.duration_s is not None else "?"
    lines = ["| gate | status | result | took |", "|---|---|---|---|",
             f"| {run.gate} | {run.status} | {run.summary.replace('|', '/')} | {when} |"]
    bench = read_result(run.gate, run.result) if measures(run.gate) else None
    if isinstance(bench, BenchResult) and bench.rows:
        lines += ["", f"| config | {bench.ours_label} ms | {bench.baseline_label} ms | speedup |",
                  "|---|---|---|---|"]
        for row in bench.rows:
            ours, base = row.median_ms(bench.ours), row.median_ms(bench.baseline)
            if ours is not None and base is not None:
                lines.append(f"| {row.config} | {ours:.3f} | {base:.3f} | "
                             f"{row.speedups.get(bench.baseline, 0):.2f}x |")
    return "\n".join(lines)
