"""The phase timer panel: every phase with its time against budget, the current one marked."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.geometry import Size

from cockpit.printable import printable
from cockpit.session.status import fmt_against
from cockpit.session.timer import PhaseView, TimerView
from cockpit.ui.widgets.lines import TextLines

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
        Text(fmt_against(view.elapsed_s, view.budget_s), style=time_style),
        budget_bar(view.elapsed_s, view.budget_s, view.budget, bar_width)
        if view.elapsed_s and bar_width > 0 else Text(""),
    )


TIME_WIDTH = len("12:31/30:00") + 1
"""The time column's least width; wider where a phase's time has hours (`0:00:00/1:30:00`)."""
NAME_WIDTH = 14
"""The name column: ` Environment ` and a cell."""


def phase_line(icon: Text, name: Text, spent: Text, bar: Text, time_width: int = TIME_WIDTH) -> Text:
    """One row in fixed columns: icon, name (13 cells), time right-aligned (`time_width`), budget bar."""
    return Text.assemble(icon, " ", name, " " * (NAME_WIDTH - name.cell_len),
                         " " * (time_width - spent.cell_len), spent, " ", bar, no_wrap=True)


SHORT_BELOW = 30
"""Window rows under which the panel is its border alone: the phase at hand on top, the total
below. In an 80x24 pane its every phase left the status history, under the gates, no row at all."""


def phase_at_hand(view: TimerView) -> PhaseView:
    """The phase a short panel shows: the one running (or paused), else the next to start, else
    the last."""
    return next((p for p in view.phases if p.progress in ("running", "paused")), None) or \
        next((p for p in view.phases if p.progress == "pending"), view.phases[-1])


class PhasePanel(TextLines):
    DEFAULT_CSS = """
    PhasePanel { height: auto; padding: 0 1; border: round $primary; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._view: TimerView | None = None
        self._cache: dict[tuple[object, ...], Text] = {}
        self.short = False
        """In a window under SHORT_BELOW rows: the phase at hand and the total, in the border."""
        self._titles = (Text("Phases"), Text())
        self.border_title = self._titles[0]

    def _entitle(self, title: Text, subtitle: Text) -> None:
        """The border's words, set only when they change: each setting repaints the whole panel."""
        if (title, subtitle) != self._titles:
            self._titles = (title, subtitle)
            self.border_title, self.border_subtitle = title, subtitle

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if (viewport.height < SHORT_BELOW) != self.short:  # the window's height crossed the line
            self.short = not self.short
            self.rebuild()
        return super().get_content_height(container, viewport, width)

    def _line(self, phase: PhaseView, bar_width: int, time_width: int) -> Text:
        # Only the running phase changes from second to second: the others are built once.
        key = (phase.name, phase.budget_s, int(phase.elapsed_s), phase.progress, phase.budget,
               bar_width, time_width)
        line = self._cache.get(key)
        if line is None:
            if len(self._cache) > 64:
                self._cache.clear()
            line = self._cache[key] = phase_line(*phase_row(phase, bar_width), time_width)
        return line

    def show(self, view: TimerView) -> None:
        if view != self._view:
            self._view = view
            self.rebuild()

    def build(self, width: int) -> Sequence[Text]:
        view = self._view
        if view is None:
            return []
        total = Text(fmt_against(view.total_elapsed_s, view.total_budget_s))
        # The times right-aligned in one column as wide as the widest (one with hours is wider).
        time_width = max([TIME_WIDTH, total.cell_len,
                          *(len(fmt_against(p.elapsed_s, p.budget_s)) for p in view.phases)])
        # The bar takes what the icon, name and time columns leave, up to its full width.
        bar_width = max(0, min(BAR_WIDTH, width - NAME_WIDTH - time_width - 4))
        if self.short and view.phases:
            icon, name, spent, _ = phase_row(phase_at_hand(view), 0)
            self._entitle(Text.assemble(icon, name, spent), Text.assemble("Total ", total))
            return []
        self._entitle(Text("Phases"), Text())
        lines = [self._line(phase, bar_width, time_width) for phase in view.phases]
        lines.append(phase_line(Text(" "), Text(" Total", style="bold"), total, Text(""), time_width))
        return lines
