"""The History screen: the sessions of one workload side by side, each against that workload's
references, the latest against the one before it, the trend as sparklines, and regressions
called out. A workspace with several workloads shows the latest session's first; w goes on to
the next. The rows arrive as the sessions are read (a workspace of 10,000 shows its first rows at
once, every session of every workload as it comes); the per-workload view replaces them when all are
read. Leaving the screen, or the cockpit, stops the reading between two sessions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Label, Sparkline, Static
from textual.worker import get_current_worker

from cockpit.printable import printable
from cockpit.session.workspace import Workspace
from cockpit.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from cockpit.report.history import SessionSummary
    from cockpit.report.history_columns import HistoryColumn
    from cockpit.report.trend import HistoryTable, WorkloadHistory

REFERENCE_COLUMNS = 3
"""The workload's baseline and the next references (`cockpit history --json` has them all)."""
BATCH_S = 0.25
"""How often the rows read so far are drawn while reading."""


class HistoryScreen(Screen[None]):
    DEFAULT_CSS = """
    HistoryScreen { layout: vertical; }
    HistoryScreen > #title { height: 1; background: $panel; padding: 0 1; text-style: bold; }
    HistoryScreen DataTable { height: 1fr; border: round $primary; }
    HistoryScreen #trend { height: auto; max-height: 50%; border: round $primary; padding: 0 1; }
    HistoryScreen .spark { height: 3; }
    HistoryScreen .spark > Label { width: 22; }
    HistoryScreen .spark > Sparkline { width: 1fr; }
    HistoryScreen .spark > .note { width: 1fr; color: $text-muted; }
    HistoryScreen #regressions { color: $error; }
    """
    BINDINGS = [Binding("escape,q,H", "app.pop_screen", "Back"),
                Binding("w", "next_workload", "Next workload")]

    def __init__(self, workspace: Workspace, now: float) -> None:
        super().__init__()
        self.workspace = workspace
        self.now = now
        self.table: HistoryTable | None = None
        self.shown = 0
        """Which of the table's workloads is on screen."""
        self.rows: list[SessionSummary] = []
        """The sessions in the table: every one read so far, then those of the workload shown."""
        self.references: tuple[tuple[str, str], ...] = ()
        self.by_workload = False
        self.id_width = 0
        self.fitted: list[tuple[HistoryColumn, int]] = []
        self.laid_for: int | None = None
        """The room the columns were fitted to; None before the first row."""

    def compose(self) -> ComposeResult:
        yield Static("History: reading the sessions…", id="title")
        yield DataTable(id="sessions", zebra_stripes=True, cursor_type="row")
        with Vertical(id="trend"):
            with Horizontal(classes="spark"):
                yield Label("duration (min)")
                yield Sparkline([], id="durations").set_styles("display: none;")
                yield Static("reading…", id="durations-note", classes="note")
            with Horizontal(classes="spark"):
                yield Label("best valid speedup", id="speedup-label")
                yield Sparkline([], id="speedups").set_styles("display: none;")
                yield Static("reading…", id="speedups-note", classes="note")
            yield Static("", id="comparison")
            yield Static("", id="regressions")
        yield KeyBar()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="history")
    def load(self) -> None:
        import time

        from cockpit.report.history_columns import cell_width
        from cockpit.report.history_reader import HistoryReader

        worker = get_current_worker()
        reader = HistoryReader(self.workspace, self.now)
        id_width = max((cell_width(r.id) for r in reader.refs), default=0)
        batch: list[SessionSummary] = []
        drawn = time.monotonic()
        for _ in reader:
            if worker.is_cancelled:  # the screen left: Textual cancels its workers as it unmounts
                return
            batch.append(reader.rows[-1])  # the row as the reader keeps it, without per-config medians
            if time.monotonic() - drawn >= BATCH_S:
                self._from_thread(self.add_read, batch, len(reader.rows), len(reader), id_width)
                batch, drawn = [], time.monotonic()
        if not worker.is_cancelled:
            self._from_thread(self.show, reader.table())

    def _from_thread(self, *call: object) -> None:
        """Run a draw on the app's thread; nothing when the app has stopped meanwhile."""
        try:
            self.app.call_from_thread(*call)  # type: ignore[arg-type]
        except RuntimeError:  # the app is gone: the reading ends with it
            get_current_worker().cancel()

    def add_read(self, batch: list[SessionSummary], read: int, total: int, id_width: int) -> None:
        """Rows of every workload as they are read, in the order they come; `id_width`: the longest
        session id of the workspace (the columns are fitted once, before the first row)."""
        self.id_width, self.references, self.by_workload = id_width, (), False
        self.rows += batch
        if self.laid_for is None:
            self.lay_out()
        else:
            self.query_one(DataTable).add_rows(self.cells(s) for s in batch)
        self.query_one("#title", Static).update(
            Text(f"History: reading {read:,} of {total:,} sessions, oldest first · esc: back"))

    def room(self) -> int:
        """The cells the table's columns may take: the screen less the table's border, a cell of
        padding at either end and the vertical scrollbar."""
        return max(1, self.size.width - 6)

    def lay_out(self) -> None:
        """The table again at the screen's width: the columns that fit (history_columns decides,
        as for `cockpit history`), every row cut to them."""
        from cockpit.report.history_columns import fit_columns, history_columns

        self.laid_for = self.room()
        self.fitted = fit_columns(history_columns(self.id_width, self.references, not self.by_workload,
                                                  fixes=False), self.laid_for)
        grid = self.query_one(DataTable)
        grid.clear(columns=True)
        for column, width in self.fitted:
            grid.add_column(Text(column.title), width=width, key=column.key)
        grid.add_rows(self.cells(s) for s in self.rows)

    def cells(self, s: SessionSummary) -> list[Text]:
        """One session's row, each cell cut to its column with "…" (Texts, not strings: a table
        parses a string cell as markup); a repeated mistake in red."""
        from cockpit.report.history_columns import cut, history_row

        row = history_row(s, [c for c, _ in self.fitted])
        return [Text(cut(cell, width), style="bold red" if column.key == "mistakes" and s.mistakes else "")
                for (column, width), cell in zip(self.fitted, row, strict=True)]

    def on_resize(self, event: events.Resize) -> None:
        if self.laid_for is not None and self.room() != self.laid_for:
            self.lay_out()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next_workload":
            return self.table is not None and len(self.table.workloads) > 1
        return True

    def action_next_workload(self) -> None:
        if self.table is not None and self.table.workloads:
            self.shown = (self.shown + 1) % len(self.table.workloads)
            self.show_workload(self.table, self.table.workloads[self.shown])

    def show(self, table: HistoryTable) -> None:
        self.table = table
        self.shown = len(table.workloads) - 1  # the latest session's workload
        self.refresh_bindings()
        if table.workloads:
            self.show_workload(table, table.workloads[self.shown])
        else:
            self.query_one("#title", Static).update("History: 0 sessions, oldest first · esc: back")
            self.query_one("#comparison", Static).update(Text("no sessions yet"))
            self.spark("durations", [], "no sessions yet")
            self.spark("speedups", [], "no sessions yet")

    def spark(self, name: str, values: Sequence[float | None], none: str,
              shown: Callable[[float], str] = str) -> None:
        """A trend line only where there is one: two measured sessions or more (a sparkline draws
        one value as a full bar, none as a floor, a missing value as the lowest); else a note. The
        sessions without a value are left out of the line and counted."""
        measured = [v for v in values if v is not None]
        line = self.query_one(f"#{name}", Sparkline)
        note = self.query_one(f"#{name}-note", Static)
        missing = len(values) - len(measured)
        if len(measured) >= 2:
            line.data, line.display = measured, True
            note.display = bool(missing)
            note.styles.width = "auto"
            note.update(f" ({missing} without)" if missing else "")
            return
        line.data, line.display = [], False
        note.display = True
        note.styles.width = "1fr"
        note.update(none if not measured else
                    f"{shown(measured[0])} in one session: the line starts with the next one")

    def show_workload(self, table: HistoryTable, group: WorkloadHistory) -> None:
        from cockpit.report.history_columns import cell_width
        from cockpit.report.trend import minutes, times

        n = len(group.sessions)
        several = len(table.workloads) > 1
        which = (f" of workload {printable(str(group.workload))} ({self.shown + 1}/{len(table.workloads)}, "
                 "w: next)" if several else "")
        self.query_one("#title", Static).update(
            Text(f"History: {n} session{'s' if n != 1 else ''}{which}, oldest first · esc: back"))
        self.references = group.references[:REFERENCE_COLUMNS]
        summaries = {s.id: s for s in table.sessions}
        self.rows = [summaries[i] for i in group.sessions]
        self.id_width, self.by_workload = max((cell_width(s.id) for s in self.rows), default=0), True
        self.lay_out()
        self.spark("durations", [summaries[i].duration_s / 60 for i in group.sessions],
                   "no session has a duration yet", lambda m: minutes(m * 60))
        self.query_one("#speedup-label", Label).update(
            Text(f"best valid vs {printable(self.references[0][1])}" if self.references
                 else "best valid speedup"))
        self.spark("speedups", group.best_speedups, "no valid bench in these sessions yet", times)
        lines: list[str] = []
        if group.vs_previous is not None:
            lines.append(f"latest vs {group.vs_previous.previous_id}:")
            lines += [f"  {c.metric}: {c.this} (was {c.previous}) {c.change}"
                      for c in group.vs_previous.rows]
        lines += [f"trend: {line}" for line in group.overall]
        lines += [f"skipped {p}" for p in table.problems]
        self.query_one("#comparison", Static).update(Text(printable("\n".join(lines)) or "no sessions yet"))
        mine = set(group.sessions)
        self.query_one("#regressions", Static).update(
            Text(printable("\n".join(f"REGRESSION {r.text}" for r in table.regressions
                                      if r.session in mine))))
