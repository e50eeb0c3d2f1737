"""The phase timer panel: every phase with its time against budget, the current one marked."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from cockpit.session.status import fmt_duration
from cockpit.session.timer import PhaseView, TimerView

ICON = {"pending": "·", "running": "▶", "paused": "‖", "done": "✓", "skipped": "↷"}
BAR_STYLE = {"ok": "green", "warn": "yellow", "over": "red"}
BAR_WIDTH = 12


def budget_bar(elapsed_s: float, budget_s: float, budget: str, width: int = BAR_WIDTH) -> Text:
    """A bar of `width` cells filled by elapsed/budget; over budget shows full and red."""
    fraction = 0.0 if budget_s <= 0 else min(1.0, elapsed_s / budget_s)
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
    return Text(bar.ljust(width), style=BAR_STYLE[budget])


def phase_row(view: PhaseView) -> tuple[Text, Text, Text, Text]:
    current = view.progress in ("running", "paused")
    name_style = "bold reverse" if current else ("dim" if view.progress == "pending" else "")
    over = view.budget == "over" and view.progress != "pending"
    time_style = "bold red" if over else ("yellow" if view.budget == "warn" and current else "")
    return (
        Text(ICON[view.progress], style="bold" if current else "dim"),
        Text(f" {view.name} ", style=name_style),
        Text(f"{fmt_duration(view.elapsed_s)}/{fmt_duration(view.budget_s)}", style=time_style),
        budget_bar(view.elapsed_s, view.budget_s, view.budget) if view.elapsed_s else Text(""),
    )


class PhasePanel(Widget):
    DEFAULT_CSS = """
    PhasePanel { height: auto; padding: 0 1; border: round $primary; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._view: TimerView | None = None
        self.border_title = "Phases"

    def show(self, view: TimerView) -> None:
        if view != self._view:
            self._view = view
            self.refresh(layout=False)

    def render(self) -> Table:
        table = Table.grid(padding=(0, 1))
        table.add_column(width=1)
        table.add_column(min_width=13)
        table.add_column(justify="right", min_width=12)
        table.add_column(width=BAR_WIDTH)
        view = self._view
        if view is None:
            return table
        for phase in view.phases:
            table.add_row(*phase_row(phase))
        total = Text(f"{fmt_duration(view.total_elapsed_s)}/{fmt_duration(view.total_budget_s)}")
        table.add_row(Text(""), Text(" Total", style="bold"), total, Text(""))
        return table
