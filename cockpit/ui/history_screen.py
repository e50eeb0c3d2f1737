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
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Label, Sparkline, Static
from textual.worker import get_current_worker

from cockpit.printable import printable
from cockpit.session.workspace import Workspace
from cockpit.ui.key_bar import KeyBar

if TYPE_CHECKING:
    from cockpit.report.history import SessionSummary
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

        from cockpit.report.history_reader import HistoryReader

        worker = get_current_worker()
        reader = HistoryReader(self.workspace, self.now)
        batch: list[SessionSummary] = []
        drawn = time.monotonic()
        for summary in reader:
            if worker.is_cancelled:  # the screen left: Textual cancels its workers as it unmounts
                return
            batch.append(summary)
            if time.monotonic() - drawn >= BATCH_S:
                self._from_thread(self.add_read, batch, len(reader.rows), len(reader))
                batch, drawn = [], time.monotonic()
        if not worker.is_cancelled:
            self._from_thread(self.show, reader.table())

    def _from_thread(self, *call: object) -> None:
        """Run a draw on the app's thread; nothing when the app has stopped meanwhile."""
        try:
            self.app.call_from_thread(*call)  # type: ignore[arg-type]
        except RuntimeError:  # the app is gone: the reading ends with it
            get_current_worker().cancel()

    def add_read(self, batch: list[SessionSummary], read: int, total: int) -> None:
        """Rows of every workload as they are read, in the order they come."""
        from cockpit.report.formats import utc
        from cockpit.report.trend import minutes

        grid = self.query_one(DataTable)
        if not grid.columns:
            grid.add_columns("session", "date", "workload", "objective", "duration", "1st valid", "mistakes",
                             "outcome")
        grid.add_rows([(Text(printable(s.id)), utc(s.started_t)[:16], Text(printable(s.workload or "—")),
                        Text(printable(s.objective)[:40]), minutes(s.duration_s), minutes(s.first_valid_s),
                        Text(str(len(s.mistakes)), style="bold red" if s.mistakes else ""),
                        Text(printable(s.outcome))) for s in batch])
        self.query_one("#title", Static).update(
            Text(f"History: reading {read:,} of {total:,} sessions, oldest first · esc: back"))

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
        from cockpit.report.formats import utc
        from cockpit.report.trend import minutes, pattern_ids, times

        n = len(group.sessions)
        several = len(table.workloads) > 1
        which = (f" of workload {printable(str(group.workload))} ({self.shown + 1}/{len(table.workloads)}, "
                 "w: next)" if several else "")
        self.query_one("#title", Static).update(
            Text(f"History: {n} session{'s' if n != 1 else ''}{which}, oldest first · esc: back"))
        references = group.references[:REFERENCE_COLUMNS]
        grid = self.query_one(DataTable)
        grid.clear(columns=True)
        grid.add_columns("session", "date", "objective", "duration", "1st valid",
                         *(Text(f"vs {printable(label)}") for _, label in references),
                         "patterns", "mistakes", "outcome")
        summaries = {s.id: s for s in table.sessions}
        for s in (summaries[i] for i in group.sessions):
            # Texts, not strings: a table parses a string cell as markup; every word through the door.
            grid.add_row(Text(printable(s.id)), utc(s.started_t)[:16], Text(printable(s.objective)[:40]),
                         minutes(s.duration_s),
                         minutes(s.first_valid_s), *(times(s.vs(ref)) for ref, _ in references),
                         pattern_ids(s.patterns_applied),
                         Text(str(len(s.mistakes)), style="bold red" if s.mistakes else ""),
                         Text(printable(s.outcome) + ("" if s.ended_t is not None else " (open)")))
        self.spark("durations", [summaries[i].duration_s / 60 for i in group.sessions],
                   "no session has a duration yet", lambda m: minutes(m * 60))
        self.query_one("#speedup-label", Label).update(
            Text(f"best valid vs {printable(references[0][1])}" if references else "best valid speedup"))
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
