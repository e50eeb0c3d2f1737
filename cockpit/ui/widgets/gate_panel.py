"""The gates: one row per gate (state, verdict, duration, how long ago), the selected one's
live log and structured result."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.containers import ScrollableContainer, Vertical
from textual.message import Message
from textual.widgets import Input, Log, Static

from cockpit.files import read_tail
from cockpit.printable import printable
from cockpit.session.state import GateRunRecord
from cockpit.session.status import Activity, fmt_duration
from cockpit.ui.widgets.fix_line import FixLine
from cockpit.ui.widgets.gate_marks import ICON
from cockpit.ui.widgets.lines import TextLines
from cockpit.ui.widgets.phases import budget_bar

if TYPE_CHECKING:
    from cockpit.gates.log_follow import GateOutput
    from cockpit.gates.view import Fix
    from cockpit.ui.widgets.pane_reader import PaneReader, SearchBar

LOG_LINES = 10_000
FLOOD_LINES = 1_000
"""What the pane keeps while a gate floods: its latest lines of the last few looks."""


@dataclass(frozen=True)
class GateRow:
    """What the panel shows for one gate at one moment."""

    name: str
    state: str  # a key of ICON
    summary: str
    duration_s: float | None = None
    ago_s: float | None = None
    activity: Activity | None = None
    elapsed_s: float | None = None


def ago(seconds: float) -> str:
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    return f"{seconds / 3600:.1f} h ago"


def gate_row_cells(row: GateRow) -> tuple[Text, Text, Text]:
    """A row's three cells: the gate, its summary (a bar while it runs), how long and how long ago."""
    icon, style = ICON[row.state]
    head = Text.assemble((icon, style), " ", (row.name, "bold"))
    if row.state == "running" and row.activity is not None:
        return head, *_running_cells(row.activity, row.elapsed_s)
    summary = Text(printable(row.summary), style=style if row.state != "pass" else "", no_wrap=True,
                   overflow="ellipsis")
    when = ""
    if row.duration_s is not None:
        when = fmt_duration(row.duration_s)
    if row.ago_s is not None:
        when += f" · {ago(row.ago_s)}"
    return head, summary, Text(when, style="dim")


def _running_cells(a: Activity, elapsed_s: float | None) -> tuple[Text, Text]:
    """A running gate's progress bar (or "running", or "silent" when its output stopped), then
    the time it has run and the time it expects to take."""
    middle = budget_bar(a.fraction or 0.0, 1.0, "ok", width=10) if a.fraction is not None \
        else Text("running", style="cyan")
    if a.text.endswith("(silent)"):
        middle = Text("silent", style="bold yellow")
    tail = fmt_duration(elapsed_s or 0.0)
    if a.eta_s is not None:
        tail += f" ~{fmt_duration(a.eta_s)}"
    return middle, Text(tail)


def gate_lines(rows: Sequence[GateRow], width: int, selected: str, focused: bool) -> list[Text]:
    """The rows in three columns: gate (at least 10 cells), summary cut to fit, when (right)."""
    cells = [gate_row_cells(row) for row in rows]
    if width < 56:  # a narrow pane: the verdict matters more than how long ago it ran
        cells = [(head, summary, Text(when.plain.split(" · ")[0], style=when.style))
                 for head, summary, when in cells]
    head_w = max([10, *(head.cell_len for head, _, _ in cells)])
    when_w = max([0, *(when.cell_len for _, _, when in cells)])
    summary_w = max(1, width - head_w - when_w - 2)
    lines = []
    for row, (head, summary, when) in zip(rows, cells, strict=True):
        summary.truncate(summary_w, overflow="ellipsis")
        line = Text.assemble(head, " " * (head_w - head.cell_len + 1), summary,
                             " " * (summary_w - summary.cell_len + 1 + when_w - when.cell_len), when,
                             no_wrap=True)
        if row.name == selected:
            line.stylize_before("reverse" if focused else "underline")
        lines.append(line)
    return lines


class GatePanel(TextLines, can_focus=True):
    """The list of gates; up/down selects, the app's keys run and cancel."""

    DEFAULT_CSS = """
    GatePanel { height: auto; border: round $primary; padding: 0 1; }
    """
    BINDINGS = [Binding("up", "move(-1)", "Gate above", show=False,
                        tooltip="Its latest run (log and result) shows on the right"),
                Binding("down", "move(1)", "Gate below", show=False,
                        tooltip="Its latest run (log and result) shows on the right")]

    class Selected(Message):
        def __init__(self, gate: str) -> None:
            super().__init__()
            self.gate = gate

    def __init__(self, gates: Sequence[str], **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.border_title = "Gates"
        self.gates = list(gates)
        self.selected = self.gates[0]
        self._rows: tuple[GateRow, ...] = ()

    def show(self, rows: tuple[GateRow, ...]) -> None:
        if rows != self._rows:
            self._rows = rows
            self.rebuild()

    def action_move(self, step: int) -> None:
        index = (self.gates.index(self.selected) + step) % len(self.gates)
        self.selected = self.gates[index]
        self.rebuild()
        self.post_message(self.Selected(self.selected))

    def on_focus(self) -> None:
        self.rebuild()

    def on_blur(self) -> None:
        self.rebuild()

    def build(self, width: int) -> list[Text]:
        return gate_lines(self._rows, width, self.selected, self.has_focus)


class GateResultPane(Static, can_focus=True):
    """A finished run's result: it takes focus, so the keys scroll it and ctrl+f zooms the pane."""

    BINDINGS = ScrollableContainer.BINDINGS  # the arrows, PgUp and PgDn scroll it, as they do a log


class GateDetail(Vertical):
    """The selected gate's latest run: what ran, the fix it names first (a row of its own, copied
    whole), its result, and its output. A live run's output comes a few times a second, in a flood
    only its latest lines, with a line saying how many were left out; the border counts the lines.
    Zoomed (ctrl+f, or /), a reader shows the result or the log with long lines wrapped at words,
    and searches it."""

    ALLOW_MAXIMIZE = True  # ctrl+f on its result or its log zooms the whole pane, head and border too
    DEFAULT_CSS = """
    GateDetail { border: round $primary; height: 2fr; padding: 0 1; }
    GateDetail > #gate-head { height: auto; }
    GateDetail > #gate-result { height: auto; max-height: 60%; overflow-y: auto; }
    GateDetail.result-only > #gate-result { height: 1fr; max-height: 100%; }
    GateDetail.result-only > Log { display: none; }
    GateDetail > Log { height: 1fr; min-height: 3; }
    GateDetail > PaneReader { display: none; }
    GateDetail.-maximized > PaneReader { display: block; }
    GateDetail.-maximized > #gate-result, GateDetail.-maximized > Log { display: none; }
    """
    BINDINGS = [Binding("escape", "close_search", "Close search", show=False,
                        tooltip="Zoomed: the search closes (the highlights go); esc again leaves the zoom")]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Gate"
        self.run_id: str | None = None
        self._count = ""
        self._log_path = ""
        """Where the shown run's log is, in the border (a head line wrapped it over three at 80x24)."""
        self.raw_log = False
        """l: the raw log instead of a finished run's result (it repeated the result's table)."""
        self._result_only = False
        self._result: RenderableType | None = None
        self.zoomed = False
        self._reader: PaneReader | None = None
        self._search_bar: SearchBar | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static("", id="gate-head")
        yield FixLine(id="gate-fix")
        yield GateResultPane("", id="gate-result")
        yield Log(max_lines=LOG_LINES, id="gate-log", auto_scroll=True)

    def _zoom_parts(self) -> tuple[PaneReader, SearchBar]:
        """The zoom's reader and its search bar, mounted together at the first zoom (an idle
        cockpit, and most sessions, never need them)."""
        if self._reader is None or self._search_bar is None:
            from cockpit.ui.widgets.pane_reader import PaneReader, SearchBar

            self._reader, self._search_bar = PaneReader(id="gate-reader"), SearchBar(id="gate-search")
            self.mount(self._reader, self._search_bar)
        return self._reader, self._search_bar

    @property
    def reader(self) -> PaneReader:
        return self._zoom_parts()[0]

    @property
    def search_bar(self) -> SearchBar:
        return self._zoom_parts()[1]

    @property
    def output_log(self) -> Log:
        return self.query_one(Log)

    def show_run(self, gate: str, run: GateRunRecord | None, result: RenderableType | None,
                 head: Text, live: bool = False, fix: Fix | None = None) -> None:
        """Switch to `run`: a finished run's log is read from its file; a live one streams in.
        `fix`: what its result says to do first."""
        self.border_title = f"Gate: {gate}"
        self.query_one("#gate-head", Static).update(self._head_to_show(head, result is not None))
        self.query_one(FixLine).show(fix if run is not None and result is not None else None)
        self.query_one("#gate-result", Static).update(result or "")
        self._result = result
        self._result_only = result is not None and not live
        self._show_result_only()
        run_id = run.run_id if run else None
        if run_id != self.run_id:
            self.run_id = run_id
            self._count = ""
            self.output_log.clear()
            self.output_log.max_lines = LOG_LINES
            if run is not None and not live:
                self.output_log.write_lines(tail_of_file(Path(run.log), LOG_LINES))
        if self.zoomed:
            self._fill_reader()
        self.show_count()

    def _head_to_show(self, head: Text, result_follows: bool) -> Text:
        """The head whole, wrapped at words; above a result, one that would take more than a third
        of the pane (a bench's or a build's summary at 80x24) keeps its first line to one row: the
        result says it in full, and it must show."""
        width, rows = self.content_region.width, self.content_region.height
        first, *rest = head.split("\n", allow_blank=True) or [head]
        if not result_follows or width <= 0 or len(first.wrap(self.app.console, width)) * 3 <= rows:
            return head
        first.truncate(width, overflow="ellipsis")
        return Text("\n").join([first, *rest])

    def append(self, run_id: str, output: GateOutput) -> None:
        if run_id != self.run_id:
            return
        from cockpit.gates.log_follow import lines_text, skipped_lines  # with the first run

        log = self.output_log
        lines = output.lines
        if output.skipped:
            # A flood: its latest lines, after a line saying how many were left out. The pane then
            # keeps FLOOD_LINES, so each look replaces as many lines as it adds: the pane's size
            # stays put and it is repainted, never laid out again.
            log.max_lines = FLOOD_LINES
            lines = [f"… {skipped_lines(output)} not shown here: the log has them all", *lines]
        if lines:
            log.write_lines(lines)
            if self.zoomed:
                self.reader.append_lines(lines, log.max_lines or LOG_LINES)
        self._count = lines_text(output.total, output.estimated)

    def show_log_path(self, path: str) -> None:
        self._log_path = path
        self.show_count()

    def toggle_raw_log(self) -> bool:
        """The raw log, or the result again; True when the log is shown now."""
        self.raw_log = not self.raw_log
        self._show_result_only()
        if self.zoomed:
            self._fill_reader()
        return self.raw_log

    def _show_result_only(self) -> None:
        """A finished run's result fills the pane; its raw log is one key away (l)."""
        self.set_class(self._result_only and not self.raw_log, "result-only")

    # Zoom and search --------------------------------------------------------------------------

    def zoom(self, on: bool) -> None:
        """The pane fills the window (the screen maximized it) or is back in its place: zoomed, the
        reader shows what the pane showed (the result, or the log) with long lines wrapped."""
        if on == self.zoomed:
            return
        self.zoomed = on
        if on:
            self._fill_reader()
            self.reader.focus()
            return
        self.close_search()
        if self.has_class("result-only"):
            self.query_one(GateResultPane).focus()
        else:
            self.output_log.focus()

    def _fill_reader(self) -> None:
        if self._result is not None and self.has_class("result-only"):
            self.reader.show_renderable(self._result)
        else:
            self.reader.show_lines(self.output_log.lines, top_line=self.output_log.scroll_offset.y)

    def search_zoomed(self) -> None:
        """/ outside the zoom: the pane zoomed, its search open."""
        self.screen.maximize(self, container=False)  # the screen's watch_maximized zooms it
        self.open_search()

    @property
    def searching(self) -> bool:
        return self._search_bar is not None and bool(self._search_bar.display)

    def open_search(self) -> None:
        self.search_bar.display = True
        self.search_bar.term.focus()

    def close_search(self) -> None:
        """The highlights go, the bar closes; the reader keeps its place."""
        if not self.searching:
            return
        self.search_bar.display = False
        self.search_bar.term.value = ""
        self.reader.search("")
        if self.zoomed:
            self.reader.focus()

    def action_close_search(self) -> None:
        self.close_search()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape closes the search while there is one; otherwise it is not this pane's."""
        return action != "close_search" or self.searching

    def on_pane_reader_search_asked(self, _message: PaneReader.SearchAsked) -> None:
        self.open_search()

    def on_pane_reader_stepped(self, _message: PaneReader.Stepped) -> None:
        self._count_matches()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.reader.search(event.value)
        self._count_matches()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter keeps the match shown; the reader takes the keys (n, N, Enter: the next)."""
        event.stop()
        self.reader.focus()

    def _count_matches(self) -> None:
        self.search_bar.count(self.reader.current, len(self.reader.matches), self.reader.term)

    def show_count(self) -> None:
        """The border: the line count a run streamed (once a second, the clock's frame: a border
        redrawn at every look would cost a flood a third of what it costs in all) and the log's
        path."""
        log = f"log {self._log_path}" if self._log_path else ""
        subtitle = " · ".join(part for part in (self._count, log) if part)
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle


def tail_of_file(path: Path, lines: int) -> list[str]:
    """The last `lines` lines of a log file, as a terminal would show them (the log keeps the
    child's bytes); a missing file reads as one line saying so."""
    from cockpit.gates.output import text_lines

    try:
        data, _ = read_tail(path, 200 * lines)  # through the door: a FIFO in its place is a line
    except OSError as exc:
        return [printable(f"(the log {path.name} cannot be read: {exc.strerror})")]
    return text_lines(data)[-lines:]
