"""The phase timer panel: every phase with its time against budget, the current one marked."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from cockpit.printable import printable
from cockpit.session.status import fmt_duration
from cockpit.session.timer import PhaseView, TimerView
from cockpit.ui.lines import TextLines

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


def phase_row(view: PhaseView, bar_width: int = BAR_WIDTH) -> tuple[Text, Text, Text, Text]:
    current = view.progress in ("running", "paused")
    name_style = "bold reverse" if current else ("dim" if view.progress == "pending" else "")
    over = view.budget == "over" and view.progress != "pending"
    time_style = "bold red" if over else ("yellow" if view.budget == "warn" and current else "")
    return (
        Text(ICON[view.progress], style="bold" if current else "dim"),
        Text(f" {printable(view.name)} ", style=name_style),
        Text(f"{fmt_duration(view.elapsed_s)}/{fmt_duration(view.budget_s)}", style=time_style),
        budget_bar(view.elapsed_s, view.budget_s, view.budget, bar_width)
        if view.elapsed_s and bar_width > 0 else Text(""),
    )


def phase_line(icon: Text, name: Text, spent: Text, bar: Text) -> Text:
    """One row in fixed columns: icon, name (13 cells), time right-aligned (12), budget bar."""
    return Text.assemble(icon, " ", name, " " * (14 - name.cell_len), " " * (12 - spent.cell_len),
                         spent, " ", bar, no_wrap=True)


class PhasePanel(TextLines):
    DEFAULT_CSS = """
    PhasePanel { height: auto; padding: 0 1; border: round $primary; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._view: TimerView | None = None
        self._cache: dict[tuple[object, ...], Text] = {}
        self.border_title = "Phases"

    def _line(self, phase: PhaseView, bar_width: int) -> Text:
        # Only the running phase changes from second to second: the others are built once.
        key = (phase.name, phase.budget_s, int(phase.elapsed_s), phase.progress, phase.budget,
               bar_width)
        line = self._cache.get(key)
        if line is None:
            if len(self._cache) > 64:
                self._cache.clear()
            line = self._cache[key] = phase_line(*phase_row(phase, bar_width))
        return line

    def show(self, view: TimerView) -> None:
        if view != self._view:
            self._view = view
            self.rebuild()

    def build(self, width: int) -> Sequence[Text]:
        view = self._view
        if view is None:
            return []
        # The bar takes what the name and time columns (30 cells) leave, up to its full width.
        bar_width = max(0, min(BAR_WIDTH, width - 30))
        lines = [self._line(phase, bar_width) for phase in view.phases]
        total = Text(f"{fmt_duration(view.total_elapsed_s)}/{fmt_duration(view.total_budget_s)}")
        lines.append(phase_line(Text(" "), Text(" Total", style="bold"), total, Text("")))
        return lines
