"""One frame a second: while GPU polls come at least once a clock tick, the clock ticks inside
their frame; the clock's own timer ticks only when they do not (no NVML, slow polls)."""

from __future__ import annotations

import time
from collections.abc import Callable


class TickPacer:
    def __init__(self, tick_s: float, tick: Callable[[], None],
                 now: Callable[[], float] = time.monotonic) -> None:
        self.tick_s = tick_s
        self._tick = tick
        self._now = now
        self._ticked_at = -1e9  # the last clock tick ...
        self._gpu_ticked_at = -1e9  # ... and the last one a GPU frame made

    def ticked(self) -> None:
        """The clock ticked (whoever asked)."""
        self._ticked_at = self._now()

    def on_timer(self) -> None:
        now = self._now()
        if now - self._gpu_ticked_at < 1.5 * self.tick_s:
            return
        if now - self._ticked_at >= 0.9 * self.tick_s:
            self._tick()

    def on_gpu_frame(self, gpu_every_s: float) -> None:
        """A GPU poll was just rendered: tick the clock now too, so both go out in one frame.
        Also when the timer ticked less than a tick ago: once, to take over from it (the clock
        shows whole seconds, so a second tick that soon redraws nothing). Without the takeover
        a GPU frame landing just after the timer's tick left two frames a second."""
        now = self._now()
        due = now - self._ticked_at >= 0.9 * self.tick_s
        if gpu_every_s > self.tick_s:  # slow polls: the timer keeps the clock; a due tick joins
            if due:
                self._tick()
            return
        if due or now - self._gpu_ticked_at >= 1.5 * self.tick_s:
            self._tick()
            self._gpu_ticked_at = now
