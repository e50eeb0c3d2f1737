"""One tick of GPU telemetry: the fast lane every tick, the slow lane every `slow_every_s`.

The sampler never sleeps and owns no thread. The UI calls `tick()` from a worker and re-arms
its timer when the snapshot arrives, so polls never overlap and pausing is not re-arming.

Fast lane (per GPU, ~1-8 µs per NVML call): utilization, memory used, temperature, power and
its enforced limit, SM and memory clocks, P-state, clock-event reasons, compute processes.
Slow lane: volatile ECC counts, total energy (~3 ms) and, only when enabled, PCIe rx/tx
(~21 ms per direction: it blocks, so never on the fast lane).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from cockpit.clock import Clock
from cockpit.telemetry.nvml import Nvml
from cockpit.telemetry.processes import LocalProcesses, ProcessTable
from cockpit.telemetry.sample import GpuProcess, GpuSample, GpuStatic, NvmlProblem, Snapshot


class TelemetrySource(Protocol):
    """What the GPU panel polls: a live `Sampler` or a `ReplaySampler`."""

    def tick(self) -> Snapshot: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class _SlowReading:
    t: float | None
    ecc_corrected: int | None
    ecc_uncorrected: int | None
    energy_j: float | None
    pcie_rx_kbs: int | None
    pcie_tx_kbs: int | None


class Sampler:
    """Live telemetry from NVML. `tick()` opens NVML on first use (on an H200: ~65-100 ms with
    pynvml's import and the library load, then ~8 ms per GPU for the static facts); after that a
    fast tick costs ~30-55 µs per GPU back to back, ~0.3 ms when it runs once a second."""

    def __init__(
        self,
        nvml: Nvml,
        clock: Clock,
        slow_every_s: float = 5.0,
        idle_slow_every_s: float | None = None,
        pcie: bool = False,
        processes: ProcessTable | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._nvml = nvml
        self._clock = clock
        self.slow_every_s = slow_every_s
        self.idle_slow_every_s = idle_slow_every_s
        """While every GPU was idle at the last tick (no utilisation, no compute process), the slow
        lane is read this often instead; the tick after one that saw a GPU busy reads it at once."""
        self._idle = False
        self._slow_every_used: float | None = None
        self.pcie = pcie
        self._processes = processes if processes is not None else LocalProcesses()
        self._timer = timer
        self._opened = False
        self._gpus: tuple[GpuStatic, ...] = ()
        self._slow: dict[int, _SlowReading] = {}
        self._slow_next: float | None = None
        self._problems_seen = 0
        self.last_tick_us = 0.0
        """What the last tick cost, in µs (perf_counter)."""

    @property
    def gpus(self) -> tuple[GpuStatic, ...]:
        """The static facts of each GPU (empty until the first tick, or without NVML)."""
        return self._gpus

    def open(self) -> str | None:
        """Open NVML and read the static facts once; None when ready, else why not."""
        if not self._opened:
            self._opened = True
            if self._nvml.open() is None:
                self._processes.prepare()
                self._gpus = tuple(self._static(i) for i in range(self._nvml.device_count()))
        return self._nvml.reason

    def tick(self) -> Snapshot:
        """Read every GPU once. Never raises for NVML's sake; never sleeps."""
        start = self._timer()
        t = self._clock.now()
        reason = self.open()
        if reason is not None:
            self.last_tick_us = (self._timer() - start) * 1e6
            return Snapshot(t, tick_us=self.last_tick_us, available=False, reason=reason,
                            problems=self._new_problems())
        slow = self._slow_due(t)
        samples = tuple(self._sample(g.index, t, slow) for g in self._gpus)
        self._processes.keep_only({p.pid for s in samples for p in s.processes})
        self._idle = all(s.util_gpu == 0 and not s.processes for s in samples)
        self.last_tick_us = (self._timer() - start) * 1e6
        return Snapshot(t, samples, self._gpus, self.last_tick_us, slow=slow,
                        problems=self._new_problems())

    def close(self) -> None:
        self._nvml.close()

    def _slow_due(self, t: float) -> bool:
        # On a grid anchored at the first tick, so ticks that land a little after the grid (timer
        # jitter) still read every `slow_every_s`, not every slow_every_s + one tick. Going idle
        # moves the next read out to the idle interval; the tick after a busy one reads at once.
        every = self.idle_slow_every_s if self._idle and self.idle_slow_every_s else self.slow_every_s
        if every <= 0:
            return True
        used, self._slow_every_used = self._slow_every_used or every, every
        if self._slow_next is None or t < self._slow_next - max(every, used):  # first tick, or stepped back
            self._slow_next = t + every
            return True
        if every < used:  # the GPUs got busy
            self._slow_next = t + every
            return True
        self._slow_next += every - used
        if t < self._slow_next:
            return False
        self._slow_next += (math.floor((t - self._slow_next) / every) + 1) * every
        return True

    def _new_problems(self) -> tuple[NvmlProblem, ...]:
        problems = self._nvml.problems
        new, self._problems_seen = problems[self._problems_seen:], len(problems)
        return new

    def _static(self, i: int) -> GpuStatic:
        nv = self._nvml
        if nv.is_lost(i):
            return GpuStatic(i, lost=True)
        return GpuStatic(
            index=i, name=nv.name(i), uuid=nv.uuid(i), pci_bus_id=nv.pci_bus_id(i),
            compute_capability=nv.compute_capability(i),
            driver_version=nv.driver_version(), cuda_driver_version=nv.cuda_driver_version(),
            memory_total_mib=nv.memory_total_mib(i), max_sm_clock_mhz=nv.max_sm_clock_mhz(i),
            max_mem_clock_mhz=nv.max_mem_clock_mhz(i), power_limit_w=nv.power_limit_w(i),
            slowdown_temp_c=nv.slowdown_temp_c(i), persistence_mode=nv.persistence_mode(i),
            mig_mode=nv.mig_mode(i), lost=nv.is_lost(i),
        )

    def _sample(self, i: int, t: float, slow: bool) -> GpuSample:
        nv = self._nvml
        if nv.is_lost(i):
            return GpuSample(i, t, lost=True)
        util_gpu, util_mem = nv.utilization(i) or (None, None)
        memory_used, temp, power, limit = (nv.memory_used_mib(i), nv.temperature_c(i), nv.power_w(i),
                                           nv.enforced_power_limit_w(i))
        sm_clock, mem_clock, pstate, mask = (nv.sm_clock_mhz(i), nv.mem_clock_mhz(i), nv.pstate(i),
                                             nv.throttle_mask(i))
        processes = self._gpu_processes(i)
        if slow:
            self._slow[i] = self._read_slow(i, t)
        r = self._slow.get(i, _NO_SLOW_READING)
        # A GPU that fell off the bus during this tick is flagged; what was read before it still shows.
        return GpuSample(
            index=i, t=t, lost=nv.is_lost(i), util_gpu=util_gpu, util_mem=util_mem,
            memory_used_mib=memory_used, temp_c=temp, power_w=power, power_limit_w=limit,
            sm_clock_mhz=sm_clock, mem_clock_mhz=mem_clock, pstate=pstate, throttle_mask=mask,
            processes=processes, ecc_corrected=r.ecc_corrected, ecc_uncorrected=r.ecc_uncorrected,
            energy_j=r.energy_j, pcie_rx_kbs=r.pcie_rx_kbs, pcie_tx_kbs=r.pcie_tx_kbs, slow_t=r.t,
        )

    def _gpu_processes(self, i: int) -> tuple[GpuProcess, ...]:
        found = self._nvml.compute_processes(i) or ()
        procs = []
        for pid, used_mib in found:
            name, ancestors = self._processes.describe(pid)
            procs.append(GpuProcess(pid, name, used_mib, ancestors))
        return tuple(procs)

    def _read_slow(self, i: int, t: float) -> _SlowReading:
        nv = self._nvml
        corrected, uncorrected = nv.ecc_volatile(i)
        rx, tx = nv.pcie_kbs(i) if self.pcie else (None, None)
        return _SlowReading(t, corrected, uncorrected, nv.energy_j(i), rx, tx)



_NO_SLOW_READING = _SlowReading(None, None, None, None, None, None)
