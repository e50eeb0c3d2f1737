"""The History screen: every session of the workspace side by side, the latest against the one
before it, the trend over all of them as sparklines, and regressions called out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Label, Sparkline, Static

from cockpit.session.workspace import Workspace
from cockpit.ui.key_bar import KeyBar

if TYPE_CHECKING:
    from cockpit.report.trend import HistoryTable

COLUMNS = ("session", "date", "objective", "duration", "1st valid", "vs SDPA", "vs FLASH",
           "patterns", "mistakes", "outcome")


class HistoryScreen(Screen[None]):
    DEFAULT_CSS = """
    HistoryScreen { layout: vertical; }
    HistoryScreen > #title { height: 1; background: $panel; padding: 0 1; text-style: bold; }
    HistoryScreen DataTable { height: 1fr; border: round $primary; }
    HistoryScreen #trend { height: auto; max-height: 50%; border: round $primary; padding: 0 1; }
    HistoryScreen .spark { height: 3; }
    HistoryScreen .spark > Label { width: 22; }
    HistoryScreen .spark > Sparkline { width: 1fr; }
    HistoryScreen #regressions { color: $error; }
    """
    BINDINGS = [Binding("escape,q,H", "app.pop_screen", "Back")]

    def __init__(self, workspace: Workspace, now: float) -> None:
        super().__init__()
        self.workspace = workspace
        self.now = now
        self.table: HistoryTable | None = None

    def compose(self) -> ComposeResult:
        yield Static("History: reading the sessions…", id="title")
        yield DataTable(id="sessions", zebra_stripes=True, cursor_type="row")
        with Vertical(id="trend"):
            with Horizontal(classes="spark"):
                yield Label("duration (min)")
                yield Sparkline([], id="durations")
            with Horizontal(classes="spark"):
                yield Label("best valid vs SDPA")
                yield Sparkline([], id="speedups")
            yield Static("", id="comparison")
            yield Static("", id="regressions")
        yield KeyBar()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="history")
    def load(self) -> None:
        from cockpit.report.history import workspace_summaries
        from cockpit.report.trend import history_table

        table = history_table(*workspace_summaries(self.workspace, self.now))
        self.app.call_from_thread(self.show, table)

    def show(self, table: HistoryTable) -> None:
        from cockpit.report.formats import utc
        from cockpit.report.trend import minutes, pattern_ids, times

        self.table = table
        n = len(table.sessions)
        self.query_one("#title", Static).update(
            f"History: {n} session{'s' if n != 1 else ''}, oldest first · esc: back")
        grid = self.query_one(DataTable)
        grid.clear(columns=True)
        grid.add_columns(*COLUMNS)
        for s in table.sessions:
            grid.add_row(s.id, utc(s.started_t)[:16], s.objective[:40], minutes(s.duration_s),
                         minutes(s.first_valid_s), times(s.best_speedup), times(s.best_vs_flash),
                         pattern_ids(s.patterns_applied),
                         Text(str(len(s.mistakes)), style="bold red" if s.mistakes else ""),
                         s.outcome + ("" if s.ended_t is not None else " (open)"))
        self.query_one("#durations", Sparkline).data = list(table.durations_min)
        self.query_one("#speedups", Sparkline).data = [x or 0.0 for x in table.best_speedups]
        lines: list[str] = []
        if table.vs_previous is not None:
            lines.append(f"latest vs {table.vs_previous.previous_id}:")
            lines += [f"  {c.metric}: {c.this} (was {c.previous}) {c.change}"
                      for c in table.vs_previous.rows]
        lines += [f"trend: {line}" for line in table.overall]
        lines += [f"skipped {p}" for p in table.problems]
        self.query_one("#comparison", Static).update(Text("\n".join(lines) or "no sessions yet"))
        self.query_one("#regressions", Static).update(
            Text("\n".join(f"REGRESSION {r.text}" for r in table.regressions)))
