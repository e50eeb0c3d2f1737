"""Device time: the timed launches queued while the GPU is busy with something else, so it runs
them back to back and the events measure the calls, not the host's launch cost (nvbench's blocking
kernel, tritonbench's gpu_events). What keeps the GPU busy (`Cover`): the work queued before the
group when the GPU has not finished it yet, else a spin, torch's own `torch.cuda._sleep(cycles)`.
Either way an event ahead of the group tells whether the host finished queueing before the GPU got
there: if not, the GPU caught up with the host mid-group and the group's times hold launch gaps,
so the caller drops them, and the next spin is twice as long.

CUDA-graph replay would hide the launch cost too, but not every callable can be captured (a
Triton autotuner's first call, a wrapper that allocates or syncs); a held queue works for any.
"""

from __future__ import annotations

import time
from typing import Any

import torch

MIN_HOLD_MS = 0.05
MAX_HOLD_MS = 200.0
"""A hold never spins longer than this: a group that needs more is one the host cannot queue."""
HOST_MARGIN = 1.5
"""A hold lasts 1.5x the host's last measured time to queue the group, plus MIN_HOLD_MS."""


class Hold:
    """Spins the current stream for a given time; calibrated once against CUDA events."""

    def __init__(self) -> None:
        self.cycles_per_ms: float | None = None
        if not hasattr(torch.cuda, "_sleep"):  # a torch without the spin kernel: eager times only
            return
        torch.cuda._sleep(1000)  # load the kernel
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(2_000_000)
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        self.cycles_per_ms = 2_000_000 / ms if ms > 0 else None

    @property
    def works(self) -> bool:
        return self.cycles_per_ms is not None

    def start(self, ms: float) -> Any:
        """Queue a spin of about `ms` and an event after it; None when the spin is unavailable."""
        if self.cycles_per_ms is None:
            return None
        torch.cuda._sleep(int(min(MAX_HOLD_MS, max(MIN_HOLD_MS, ms)) * self.cycles_per_ms))
        done = torch.cuda.Event()
        done.record()
        return done

    @staticmethod
    def held(done: Any) -> bool:
        """Whether the spin was still running when asked (right after the group was queued): every
        launch of the group then sat in the queue before the GPU reached it."""
        return done is not None and not done.query()


def working_spin(hold: Hold | None) -> Hold | None:
    """The spin to queue timed work behind, or None when this GPU cannot hold one (the work then
    races the host's launches)."""
    return hold if hold is not None and hold.works else None


def next_hold_ms(host_ms: float, expired: bool, last_ms: float) -> float:
    """The next hold for a group: sized from the host's time to queue the last one, doubled after a
    hold that ran out."""
    if expired:
        return min(MAX_HOLD_MS, max(2 * last_ms, HOST_MARGIN * host_ms + MIN_HOLD_MS))
    return min(MAX_HOLD_MS, HOST_MARGIN * host_ms + MIN_HOLD_MS)


class Cover:
    """Keeps one implementation's groups of timed launches covered: before a group, `before(busy)`
    takes `busy` (an event after the work already queued) as the guard when the GPU has not reached
    it, else queues a spin; after it, `after()` says whether the guard was still pending. The spin
    is sized from the host's time to queue a group behind a spin (the queue then nearly empty, so
    that time is the launch cost, not the wait for room)."""

    def __init__(self, spin: Hold | None, hold_ms: float = 2.0) -> None:
        self.spin = spin if spin is not None and spin.works else None
        self.hold_ms = hold_ms
        self.expired = 0
        self._guard: Any = None
        self._spun = False
        self._t0 = 0.0
        self.spin_always = False
        """Set once a group queued behind busy work was caught up with: this implementation's host
        is slower than its GPU work, so every later group gets a spin (not one lost group in two)."""

    @property
    def works(self) -> bool:
        return self.spin is not None

    def before(self, busy: Any = None) -> None:
        if self.spin is None:
            return
        if busy is not None and not self.spin_always and not busy.query():
            self._guard, self._spun = busy, False
        else:
            self._guard, self._spun = self.spin.start(self.hold_ms), True
        self._t0 = time.perf_counter()

    def after(self) -> bool:
        """Whether the group just queued ran back to back (always, without a spin kernel)."""
        if self.spin is None:
            return True
        host_ms = (time.perf_counter() - self._t0) * 1e3
        covered = Hold.held(self._guard)
        if not covered:
            self.expired += 1
            if self._spun:
                self.hold_ms = next_hold_ms(host_ms, True, self.hold_ms)
            else:
                self.spin_always = True
        elif self._spun:
            self.hold_ms = next_hold_ms(host_ms, False, self.hold_ms)
        return covered
