"""Textual's key reader, woken every 2 s instead of ten times a second while no key comes.

Textual's Linux driver reads the terminal in a thread that waits at most 0.1 s at a time, input
or not: its key parser needs that tick to tell a lone Esc from the start of an escape sequence.
An idle cockpit is woken ten times a second for it, ~0.13 % of a core on a 2-core box, as much as
its clock and GPU frame together cost above Textual's floor (bench/RESULTS.md, issue 25). Here
the wait is Textual's own for a second after any input (so Esc is told apart as before), 2 s
otherwise; a key ends the wait at once either way, and so does stopping input (quit, suspend).
Nothing else needs the idle reader awake: at 0.5 s its wakes were still ~0.03 % of a core, a tenth
of the idle cockpit's whole CPU on an H100 box (0.35 %, bench/RESULTS.md, issue 36).

Textual has no setting for that wait: its input loop makes its selector from the `selectors` its
module imported, so the driver swaps that module global for as long as it takes Textual to make
one, then puts it back. tests/test_quiet_input.py checks the installed Textual still works so.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import time
from typing import Any

from textual.drivers import linux_driver
from textual.drivers.linux_driver import LinuxDriver

IDLE_WAIT_S = 2.0
AWAKE_S = 1.0
"""After input, Textual's own wait for this long."""


class QuietSelector(selectors.SelectSelector):
    """What Textual's input thread waits on: its terminal, and a pipe that wakes it."""

    def __init__(self) -> None:
        super().__init__()
        self._wake_r, self._wake_w = os.pipe()
        super().register(self._wake_r, selectors.EVENT_READ)
        self._input_at = time.monotonic()
        _selectors.append(self)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is not None and time.monotonic() - self._input_at > AWAKE_S:
            timeout = max(timeout, IDLE_WAIT_S)
        events = super().select(timeout)
        theirs = [(key, mask) for key, mask in events if key.fd != self._wake_r]
        if len(theirs) != len(events):
            with contextlib.suppress(BlockingIOError):
                os.read(self._wake_r, 64)
        if theirs or len(theirs) != len(events):
            self._input_at = time.monotonic()
        return theirs

    def wake(self) -> None:
        """End the wait now; Textual's short waits follow, so its loop soon sees why."""
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"!")

    def close(self) -> None:
        super().close()
        with contextlib.suppress(ValueError):
            _selectors.remove(self)
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)


_selectors: list[QuietSelector] = []


class _Selectors:
    """What Textual's linux_driver module uses of `selectors` while its input loop starts: making
    a selector makes the quiet one and puts the real module back."""

    EVENT_READ = selectors.EVENT_READ

    @staticmethod
    def SelectSelector() -> QuietSelector:
        _put_back()
        return QuietSelector()


def _put_back() -> None:
    linux_driver.selectors = selectors  # type: ignore[attr-defined]


class QuietLinuxDriver(LinuxDriver):
    def run_input_thread(self) -> None:
        # Textual's loop makes its selector from its module's `selectors` when it starts.
        linux_driver.selectors = _Selectors  # type: ignore[attr-defined,assignment]
        try:
            super().run_input_thread()
        finally:
            _put_back()  # already, unless Textual failed before it made its selector

    def disable_input(self) -> None:
        for selector in list(_selectors):
            selector.wake()
        super().disable_input()


def quiet_driver(driver_class: type[Any]) -> type[Any]:
    """The quiet driver where Textual would use its Linux one; any other as it is."""
    return QuietLinuxDriver if driver_class is LinuxDriver else driver_class
