"""The gates: one row per gate (state, verdict, duration, how long ago), the selected one's
live log and structured result."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Log, Static

from cockpit.session.state import GateRunRecord
from cockpit.session.status import Activity, fmt_duration
from cockpit.ui.phases import budget_bar

ICON = {"pass": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red"),
        "error": ("✗", "red"), "cancelled": ("■", "dim"), "timeout": ("⧖", "red"),
        "interrupted": ("?", "yellow"), "running": ("▶", "bold cyan"),
        "queued": ("…", "cyan"), "never": ("·", "dim")}
LOG_LINES = 10_000


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
    icon, style = ICON[row.state]
    head = Text.assemble((icon, style), " ", (row.name, "bold"))
    if row.state == "running" and row.activity is not None:
        a = row.activity
        middle = budget_bar(a.fraction or 0.0, 1.0, "ok", width=10) if a.fraction is not None \
            else Text("running", style="cyan")
        if a.text.endswith("(silent)"):
            middle = Text("silent", style="bold yellow")
        tail = fmt_duration(row.elapsed_s or 0.0)
        if a.eta_s is not None:
            tail += f" ~{fmt_duration(a.eta_s)}"
        return head, middle, Text(tail)
    summary = Text(row.summary, style=style if row.state != "pass" else "", no_wrap=True,
                   overflow="ellipsis")
    when = ""
    if row.duration_s is not None:
        when = fmt_duration(row.duration_s)
    if row.ago_s is not None:
        when += f" · {ago(row.ago_s)}"
    return head, summary, Text(when, style="dim")


class GatePanel(Widget, can_focus=True):
    """The list of gates; up/down selects, the app's keys run and cancel."""

    DEFAULT_CSS = """
    GatePanel { height: auto; border: round $primary; padding: 0 1; }
    GatePanel:focus { border: round $accent; }
    """
    BINDINGS = [Binding("up", "move(-1)", "Up", show=False),
                Binding("down", "move(1)", "Down", show=False)]

    class Selected(Message):
        def __init__(self, gate: str) -> None:
            super().__init__()
            self.gate = gate

    def __init__(self, gates: Sequence[str], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Gates"
        self.gates = list(gates)
        self.selected = self.gates[0]
        self._rows: tuple[GateRow, ...] = ()

    def show(self, rows: tuple[GateRow, ...]) -> None:
        if rows != self._rows:
            resized = len(rows) != len(self._rows)
            self._rows = rows
            self.refresh(layout=resized)

    def action_move(self, step: int) -> None:
        index = (self.gates.index(self.selected) + step) % len(self.gates)
        self.selected = self.gates[index]
        self.refresh()
        self.post_message(self.Selected(self.selected))

    def render(self) -> Table:
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(no_wrap=True, min_width=10)
        table.add_column(ratio=1, no_wrap=True)
        table.add_column(no_wrap=True, justify="right")
        for row in self._rows:
            cells = gate_row_cells(row)
            style = "reverse" if row.name == self.selected and self.has_focus else (
                "underline" if row.name == self.selected else "")
            table.add_row(*cells, style=style)
        return table


class GateDetail(Vertical):
    """The selected gate's latest run: what ran, its result, and its output."""

    DEFAULT_CSS = """
    GateDetail { border: round $primary; height: 2fr; padding: 0 1; }
    GateDetail > #gate-head { height: auto; }
    GateDetail > #gate-result { height: auto; max-height: 60%; overflow-y: auto; }
    GateDetail > Log { height: 1fr; min-height: 3; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Gate"
        self.run_id: str | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static("", id="gate-head")
        yield Static("", id="gate-result")
        yield Log(max_lines=LOG_LINES, id="gate-log", auto_scroll=True)

    @property
    def output_log(self) -> Log:
        return self.query_one(Log)

    def show_run(self, gate: str, run: GateRunRecord | None, result: Table | Text | None,
                 head: Text, live: bool = False) -> None:
        """Switch to `run`: a finished run's log is read from its file; a live one streams in."""
        self.border_title = f"Gate: {gate}"
        self.query_one("#gate-head", Static).update(head)
        self.query_one("#gate-result", Static).update(result or "")
        run_id = run.run_id if run else None
        if run_id != self.run_id:
            self.run_id = run_id
            self.output_log.clear()
            if run is not None and not live:
                self.output_log.write_lines(tail_of_file(Path(run.log), LOG_LINES))

    def append(self, run_id: str, lines: list[str]) -> None:
        if run_id == self.run_id:
            self.output_log.write_lines(lines)


def tail_of_file(path: Path, lines: int) -> list[str]:
    """The last `lines` lines of a log file; a missing file reads as one line saying so."""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 200 * lines))
            data = f.read()
    except OSError as exc:
        return [f"(the log {path.name} cannot be read: {exc.strerror})"]
    text = data.decode("utf-8", errors="replace").splitlines()
    return text[-lines:]
