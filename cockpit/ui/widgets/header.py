"""The one-line session header: id, objective, phase and budget, time left, elapsed, cost.

Its clocks move once a minute: the phase panel right below counts the seconds, and a header
that changed every second would make every frame repaint the whole width of the screen.

The phase, its time left and the time elapsed are what a glance at the header is for: they stay
at any width from 80 columns up. What gives way, in turn: the `cockpit` badge, the id's slug (it
repeats the objective), the objective (cut with "…" to the room left), the patterns count, the
objective whole, the id, the cost.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text

from cockpit.printable import printable
from cockpit.session.state import SessionState
from cockpit.session.status import fmt_minutes, minutes_against
from cockpit.session.timer import TimerView, cost_so_far
from cockpit.ui.widgets.lines import TextLines

BUDGET_STYLE = {"ok": "bold green", "warn": "bold yellow", "over": "bold white on red"}
SEPARATOR = " │ "
MIN_OBJECTIVE = 12
"""Cells: an objective cut shorter than this says nothing; it goes instead."""

# `20261123-0915-a3f1-slug` -> `20261123-0915-a3f1` (`NNN-slug` from earlier versions -> `NNN`).
_ID_STEM = re.compile(r"^(\d{8}-\d{4}-[0-9a-z]{4}|\d+)-.")


@dataclass(frozen=True)
class HeaderParts:
    """What the header can show, left to right; None (or False): left out. Styles are spans,
    so parts that differ only in colour (a budget turning yellow) compare unequal."""

    phase: Text
    """`PROFILE 12/30 min` (+ ` PAUSED`), `ENDED`, `all phases done`: always shown."""
    elapsed: str
    left: Text | None = None
    badge: bool = True
    session_id: str | None = None
    objective: str | None = None
    cost: str | None = None
    patterns: Text | None = None


def id_stem(session_id: str) -> str:
    """The id without its slug: the date, time and tag that tell sessions apart."""
    m = _ID_STEM.match(session_id)
    return m.group(1) if m else session_id


def header_text(parts: HeaderParts) -> Text:
    """The parts on one line, in their fixed order."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if parts.badge:
        text.append(" cockpit ", style="bold reverse")
    text.append(" ")
    if parts.session_id:
        text.append(f"{parts.session_id} ", style="bold")
    if parts.objective:
        text.append(f"{parts.objective} ", style="italic")
    if parts.session_id or parts.objective:
        text.append(SEPARATOR.lstrip())
    text.append_text(parts.phase)
    if parts.left is not None:
        text.append(" · ")
        text.append_text(parts.left)
    text.append(SEPARATOR + parts.elapsed)
    if parts.cost:
        text.append(SEPARATOR + parts.cost)
    if parts.patterns is not None:
        text.append(SEPARATOR)
        text.append_text(parts.patterns)
    return text


def _objective_into(parts: HeaderParts, width: int, may_cut: bool) -> HeaderParts | None:
    """`parts` if they fit in `width`, with the objective cut to the room left when `may_cut`
    (never shorter than MIN_OBJECTIVE); None if they do not fit."""
    if header_text(parts).cell_len <= width:
        return parts
    if not may_cut or not parts.objective:
        return None
    room = width - header_text(dataclasses.replace(parts, objective="")).cell_len - 1
    if room < MIN_OBJECTIVE:
        return None
    cut = Text(parts.objective)
    cut.truncate(room, overflow="ellipsis")
    return dataclasses.replace(parts, objective=cut.plain)


def _stem(parts: HeaderParts) -> HeaderParts:
    return dataclasses.replace(parts, session_id=parts.session_id and id_stem(parts.session_id))


# What gives way, in turn (each step keeps the ones before it); True: the objective may be cut.
_STEPS: tuple[tuple[Callable[[HeaderParts], HeaderParts], bool], ...] = (
    (lambda p: p, False),
    (lambda p: dataclasses.replace(p, badge=False), False),
    (_stem, True),
    (lambda p: dataclasses.replace(p, patterns=None), True),
    (lambda p: dataclasses.replace(p, objective=None), False),
    (lambda p: dataclasses.replace(p, session_id=None, objective=None), False),
    (lambda p: dataclasses.replace(p, cost=None), False),
)


def fit_header(parts: HeaderParts, width: int) -> HeaderParts:
    """The parts the header shows at `width`: the first step that fits (see the module's doc).
    Phase, time left and elapsed always stay; below ~60 columns the line is cut with "…"."""
    for step, may_cut in _STEPS:
        parts = step(parts)
        fitted = _objective_into(parts, width, may_cut)
        if fitted is not None:
            return fitted
    return parts


def header_parts(state: SessionState, view: TimerView, now: float, patterns: int = 0) -> HeaderParts:
    """Everything the header could say about the session now."""
    phase, left = _phase_said(state, view)
    applied = len(state.applied_patterns)
    return HeaderParts(
        phase=phase, left=left, elapsed=f"{fmt_minutes(view.total_elapsed_s)} elapsed",
        session_id=printable(state.id), objective=printable(state.objective),
        cost=f"${cost_so_far(state, now):.2f}" if state.gpu_cost_per_hour > 0 else None,
        patterns=Text.assemble((f"patterns {applied}/{patterns}", "magenta" if applied else "dim"))
        if patterns else None)


def _phase_said(state: SessionState, view: TimerView) -> tuple[Text, Text | None]:
    """The phase part of the header, and the time left in its budget (None when it has none)."""
    current = view.current
    if not state.is_open:
        return Text.assemble(("ENDED", "bold")), None
    if current is None and view.finished:
        return Text.assemble(("all phases done", "bold")), None
    if current is None:
        return Text.assemble(("timer not started", "dim")), None
    style = BUDGET_STYLE[current.budget]
    name = printable(current.name).upper()
    left: Text | None = None
    if current.budget_s > 0:
        phase = Text.assemble(
            (f"{name} {minutes_against(current.elapsed_s, current.budget_s)}", style))
        over = current.remaining_s < 0
        # Whole minutes rounded up, so that the minutes shown and the minutes left add up.
        words = (f"{fmt_minutes(-current.remaining_s)} over" if over
                 else f"{fmt_minutes(math.ceil(current.remaining_s / 60) * 60)} left")
        left = Text.assemble((words, style if over else ""))
    else:
        phase = Text.assemble((f"{name} {fmt_minutes(current.elapsed_s)}", style))
    if view.paused:
        phase.append(" PAUSED", style="bold reverse yellow")
    return phase, left


class SessionHeader(TextLines):
    DEFAULT_CSS = """
    SessionHeader { height: 1; background: $panel; color: $foreground; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._parts: HeaderParts | None = None

    def show(self, state: SessionState, view: TimerView, now: float, patterns: int = 0) -> None:
        """`patterns`: how many patterns the library holds (for "patterns applied/N")."""
        parts = header_parts(state, view, now, patterns)
        if parts != self._parts:
            self._parts = parts
            self.rebuild()

    @property
    def text(self) -> Text:
        """The line as shown at the header's width."""
        return self.lines[0] if self.lines else Text()

    def build(self, width: int) -> Sequence[Text]:
        if self._parts is None:
            return [Text()]
        return [header_text(fit_header(self._parts, width))]
