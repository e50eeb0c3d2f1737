"""One frame a second: while GPU polls come at least once a clock tick, the clock ticks inside
their frame; the clock's own timer ticks only when they do not (no NVML, slow polls). While they
come, that timer is not even woken: each tick pushes it back (a plain loop timer, re-armed)."""

from __future__ import annotations

import asyncio
import contextvars
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
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    def start(self, on_error: Callable[[Exception], None]) -> None:
        """Run the clock's timer on the running loop (the app's, at mount); an error in a tick
        goes to `on_error` (the app's own handler) as a Textual timer's would."""
        self._loop, self._context = asyncio.get_running_loop(), contextvars.copy_context()
        self._on_error = on_error
        self._arm(self.tick_s)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._loop = None

    def _arm(self, delay_s: float) -> None:
        if self._loop is None:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_later(delay_s, self._fire, context=self._context)

    def _fire(self) -> None:
        self._timer = None
        try:
            self.on_timer()
        except Exception as exc:  # the app decides (it shows it and exits)
            self._on_error(exc)
        finally:
            self._arm(self.tick_s)

    def ticked(self) -> None:
        """The clock ticked (whoever asked)."""
        self._ticked_at = self._now()
        self._arm(self.tick_s)

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
        self._arm(1.5 * self.tick_s)  # the timer wakes only if the next frame does not come
