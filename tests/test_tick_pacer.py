"""One frame a second: the clock ticks inside the GPU panel's frame when polls come every tick,
on its own timer when they do not. Two frames a second (the clock's, then the GPU's 80 ms later)
cost the idle cockpit a third of its main thread's drawing."""

from __future__ import annotations

import asyncio

from cockpit.ui.controllers.tick_pacer import TickPacer

from .waiting import until


class Cockpit:
    """The app's side of the pacer: a clock, and each tick marked as `CockpitApp.tick` does."""

    def __init__(self) -> None:
        self.t = 100.0
        self.ticks: list[float] = []
        self.pacer = TickPacer(1.0, self.tick, lambda: self.t)

    def tick(self) -> None:
        self.ticks.append(self.t)
        self.pacer.ticked()

    def at(self, t: float, who: str, gpu_every: float = 1.0) -> bool:
        """`who` ("timer" or "gpu") fires at `t`; True when it drew the clock."""
        self.t = t
        before = len(self.ticks)
        if who == "timer":
            self.pacer.on_timer()
        else:
            self.pacer.on_gpu_frame(gpu_every)
        return len(self.ticks) > before


def frames(c: Cockpit, seconds: range, gpu_at: float | None, gpu_every: float = 1.0) -> list[str]:
    """The timer fires on whole seconds; a GPU frame lands `gpu_at` into every `gpu_every`-th
    second. Which of them drew the clock, in order."""
    drawn = []
    for s in seconds:
        events = [(0.0, "timer")]
        if gpu_at is not None and s % gpu_every == 0:
            events.append((gpu_at, "gpu"))
        for at, who in sorted(events):
            if c.at(100.0 + s + at, who, gpu_every):
                drawn.append(who)
    return drawn


def test_a_gpu_frame_just_after_the_timers_tick_takes_over_at_once() -> None:
    c = Cockpit()
    # the first second draws twice (the takeover), every later one once: in the GPU's frame
    assert frames(c, range(10), gpu_at=0.08) == ["timer", "gpu"] + ["gpu"] * 9


def test_without_gpu_frames_the_timer_keeps_the_clock() -> None:
    assert frames(Cockpit(), range(5), gpu_at=None) == ["timer"] * 5


def test_when_gpu_frames_stop_the_timer_takes_the_clock_back() -> None:
    c = Cockpit()
    assert frames(c, range(3), gpu_at=0.5) == ["timer", "gpu", "gpu", "gpu"]
    # NVML gone: the 3 s timer tick still trusts the 2.5 s GPU frame; from 4 s the timer ticks
    assert frames(c, range(3, 7), gpu_at=None) == ["timer"] * 3
    assert c.ticks[-3:] == [104.0, 105.0, 106.0]


def test_slow_polls_leave_the_clock_to_the_timer() -> None:
    assert frames(Cockpit(), range(10), gpu_at=0.3, gpu_every=5) == ["timer"] * 10


async def test_while_gpu_frames_come_the_clocks_timer_is_not_even_woken() -> None:
    ticks: list[str] = []
    pacer = TickPacer(0.2, lambda: (ticks.append("tick"), pacer.ticked()))
    fired = 0
    on_timer = pacer.on_timer

    def counted() -> None:
        nonlocal fired
        fired += 1
        on_timer()

    pacer.on_timer = counted  # type: ignore[method-assign]
    loop = asyncio.get_running_loop()
    pacer.start(lambda exc: None)
    gaps = []
    for _ in range(10):  # GPU frames twice a tick: the clock ticks in every other one
        at = loop.time()
        pacer.on_gpu_frame(0.1)
        await asyncio.sleep(0.1)
        gaps.append(loop.time() - at)
    # a busy box may hold a frame back past 1.5 ticks: then, and only then, the timer may wake
    assert fired == 0 or max(gaps) >= 1.5 * pacer.tick_s, gaps
    assert len(ticks) >= 4
    fired, before = 0, len(ticks)
    # frames stop: the timer wakes 1.5 ticks after the last, then ticks
    await until(None, lambda: fired >= 3 and len(ticks) >= before + 3, "three ticks of the timer's own")
    pacer.stop()
