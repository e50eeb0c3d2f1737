"""GPU telemetry for the TUI: the poller's thread collects, the UI thread renders, then re-arms
the next poll (polls never overlap; a stopped feed is one that is not re-armed)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from textual.notifications import SeverityLevel

from cockpit.clock import Clock

IDLE_SLOW_EVERY_S = 30.0
"""The slow lane's interval while every GPU idles: the energy counter is cumulative (nothing is
lost between readings) and ECC counts do not move at idle; the first busy tick reads it at once.
On an H100 box the idle cockpit's telemetry thread was 0.10 % of a core at 10 s."""

if TYPE_CHECKING:
    from cockpit.config import Config
    from cockpit.session.journal import Event
    from cockpit.session.state import SessionState
    from cockpit.telemetry.history import History
    from cockpit.telemetry.poller import Poller
    from cockpit.telemetry.sample import GpuStatic, Snapshot
    from cockpit.telemetry.sampler import TelemetrySource
    from cockpit.ui.widgets.gpu_panel import GpuPanel


class GpuHost(Protocol):
    """What the feed needs from the app."""

    clock: Clock
    gpu_panel: GpuPanel

    def report_once(self, message: str, severity: SeverityLevel = "error") -> None: ...

    def call_after_refresh(self, callback: Callable[[], object]) -> bool: ...


class GpuFeed:
    def __init__(self, host: GpuHost, telemetry: TelemetrySource | None, every_s: float,
                 history: History | None, on_frame: Callable[[Snapshot], None]) -> None:
        self.host = host
        self.every_s = every_s
        self.history = history
        # Live NVML unless a source (a recording) is given; opened in the poller's thread.
        self._telemetry = telemetry
        self._on_frame = on_frame  # after a snapshot is shown (the clock ticks in its frame)
        self._poller: Poller | None = None
        self._rearm: asyncio.TimerHandle | None = None
        self._trimmed = False
        self._settled = asyncio.Event()
        self._settled.set()

    def phase_summary(self, state: SessionState, ended: Event, config: Config,
                      gpus: Sequence[GpuStatic]) -> Event | None:
        """The GPUs the ending phase's gates ran on, by UUID (every GPU when none is known)."""
        run = state.current_run
        history = self.history
        if run is None or not history or not history.indices:
            return None
        from cockpit.gates.device import gate_device, phase_gpu_uuids
        from cockpit.session import events as ev

        uuids = phase_gpu_uuids(state.gate_runs, run.started_t, ended["t"],
                                gate_device(config, "bench", os.environ), gpus)
        return ev.gpu_summary(ended["t"], run.phase, history.phase_summary(run.started_t, ended["t"], uuids))

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._context = contextvars.copy_context()  # Textual's active app, for thread callbacks
        if self.every_s > 0:  # 0: a still picture (screenshots)
            self.poll()

    def stop(self) -> None:
        if self._rearm is not None:
            self._rearm.cancel()
        if self._poller is not None:
            self._poller.close()

    def poll(self) -> None:
        if self._poller is None:
            from cockpit.telemetry.poller import Poller

            self._poller = Poller(self._open, self._delivered)
        if self._poller.request():
            self._settled.clear()

    async def settled(self) -> None:
        """Wait until the poll in flight (if any) has been rendered (tests, screenshots)."""
        await self._settled.wait()

    def _open(self) -> TelemetrySource:
        """In the poller's thread, on the first poll: NVML (or the recording) and the history."""
        if self.history is None:
            from cockpit.telemetry.history import History

            self.history = History()
        if self._telemetry is None:
            from cockpit.telemetry.nvml import Nvml
            from cockpit.telemetry.sampler import Sampler

            # The slow lane (ECC, energy: ~3 ms of NVML) every 10 s, every 30 s while the GPUs
            # idle: it is most of the telemetry thread's cost at 1 Hz.
            self._telemetry = Sampler(Nvml(), self.host.clock, slow_every_s=10.0,
                                      idle_slow_every_s=IDLE_SLOW_EVERY_S)
        return self._telemetry

    def _delivered(self, result: Snapshot | BaseException) -> None:
        """From the poller's thread: hand the result to the UI thread."""
        with contextlib.suppress(RuntimeError):  # the app is gone
            self._loop.call_soon_threadsafe(self._on_result, result, context=self._context)

    def _on_result(self, result: Snapshot | BaseException) -> None:
        try:
            if isinstance(result, BaseException):
                self.host.report_once(f"GPU telemetry stopped: {result}", "warning")
                self._rearm_in(max(10.0, self.every_s))
                return
            self._show(result)
        finally:
            self._settled.set()

    def _show(self, snapshot: Snapshot) -> None:
        if not self._trimmed:  # NVML is in: what startup freed goes back to the OS
            self._trimmed = True
            from cockpit.memory import release_free_memory

            self.host.call_after_refresh(release_free_memory)
        if self.history is not None:
            self.history.append(snapshot)
        self.host.gpu_panel.show(snapshot, self.history)
        self._on_frame(snapshot)
        for problem in snapshot.problems:
            self.host.report_once(problem.describe(), "warning")
        if snapshot.available:
            self._rearm_in(self.every_s)

    def _rearm_in(self, delay: float) -> None:
        # A plain loop timer: a Textual Timer is an asyncio task per re-arm.
        self._rearm = self._loop.call_later(delay, self.poll, context=self._context)
