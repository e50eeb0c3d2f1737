"""The one-line session header: id, objective, phase and budget, elapsed, cost.

Its clocks move once a minute: the phase panel right below counts the seconds, and a header
that changed every second would make every frame repaint the whole width of the screen."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from cockpit.session.state import SessionState
from cockpit.session.status import fmt_minutes
from cockpit.session.timer import TimerView, cost_so_far
from cockpit.ui.lines import TextLines

BUDGET_STYLE = {"ok": "bold green", "warn": "bold yellow", "over": "bold white on red"}


class SessionHeader(TextLines):
    DEFAULT_CSS = """
    SessionHeader { height: 1; background: $panel; color: $foreground; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._text = Text()

    def show(self, state: SessionState, view: TimerView, now: float, patterns: int = 0) -> None:
        """`patterns`: how many patterns the library holds (for "patterns applied/N")."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" cockpit ", style="bold reverse")
        text.append(f" {state.id} ", style="bold")
        text.append(state.objective, style="italic")
        text.append("  │  ")
        current = view.current
        if not state.is_open:
            text.append("ENDED", style="bold")
        elif current is not None:
            text.append(
                f"{current.name.upper()} {fmt_minutes(current.elapsed_s)} of "
                f"{fmt_minutes(current.budget_s)}",
                style=BUDGET_STYLE[current.budget],
            )
            if view.paused:
                text.append(" PAUSED", style="bold reverse yellow")
        elif view.finished:
            text.append("all phases done", style="bold")
        else:
            text.append("timer not started", style="dim")
        text.append(f"  │  {fmt_minutes(view.total_elapsed_s)} elapsed")
        if state.gpu_cost_per_hour > 0:
            text.append(f"  │  ${cost_so_far(state, now):.2f}")
        if patterns:
            applied = len(state.applied_patterns)
            text.append(f"  │  patterns {applied}/{patterns}", style="magenta" if applied else "dim")
        if text.plain != self._text.plain or text.spans != self._text.spans:
            self._text = text
            self.rebuild()

    @property
    def text(self) -> Text:
        return self._text

    def build(self, width: int) -> Sequence[Text]:
        return [self._text]
