"""Waiting for the state a test asserts, never for a fixed time: the suite must pass on a 2-core
box with both cores busy (CI runs it beside scripts/cpu-hog.sh), where a worker's rows, a gate's
next line or a render come whenever the scheduler lets them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from textual.pilot import Pilot

DEADLINE_S = 30.0
"""Generous: on an idle box every wait here ends in well under a second."""


async def until(pilot: Pilot[object] | None, condition: Callable[[], object], what: str,
                deadline_s: float = DEADLINE_S) -> None:
    """Let the app run (`pilot.pause()`: its pending messages, then idle; with no app, the loop's
    other callbacks for 10 ms) until `condition()` holds; fail saying `what` was waited for once
    `deadline_s` have gone by without it."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        _not_past(deadline, deadline_s, what)
        await (pilot.pause() if pilot is not None else asyncio.sleep(0.01))


def wait_until(condition: Callable[[], object], what: str, deadline_s: float = DEADLINE_S) -> None:
    """`until` without an event loop: look again every 10 ms (a runner thread's callbacks, a
    child's file) until `condition()` holds."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        _not_past(deadline, deadline_s, what)
        time.sleep(0.01)


def _not_past(deadline: float, deadline_s: float, what: str) -> None:
    if time.monotonic() > deadline:
        raise AssertionError(f"waited {deadline_s:g} s for {what}, in vain")
