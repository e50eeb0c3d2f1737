"""What the GPU panel shows: static facts per GPU, one sample per GPU per tick, a snapshot per tick.

Plain frozen data; no NVML, no numpy. `None` in a field means NVML could not give it ("n/a").
Units are in the field names: MiB, MHz, °C (`_c`), W, J, KB/s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from cockpit.hardware.clock_events import THROTTLE_WORDS

_KNOWN_BITS = sum(bit for bit, _ in THROTTLE_WORDS)


def decode_throttle(mask: int | None) -> tuple[str, ...]:
    """The reasons set in a clock-event mask, in bit order; unknown bits as "unknown 0x…"."""
    if not mask:
        return ()
    words = [word for bit, word in THROTTLE_WORDS if mask & bit]
    unknown = mask & ~_KNOWN_BITS
    if unknown:
        words.append(f"unknown {unknown:#x}")
    return tuple(words)


@dataclass(frozen=True)
class GpuStatic:
    """What does not change while the cockpit runs; read once when NVML opens (max clocks are slow)."""

    index: int
    name: str | None = None
    uuid: str | None = None
    """"GPU-…" as `nvidia-smi -L` prints it: how the cockpit names a GPU (NVML's index is not
    CUDA's ordinal)."""
    pci_bus_id: str | None = None
    """"00000000:1B:00.0" (recordings made before it was read have none)."""
    compute_capability: tuple[int, int] | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    """The newest CUDA the driver supports, e.g. "13.0"."""
    memory_total_mib: int | None = None
    max_sm_clock_mhz: int | None = None
    max_mem_clock_mhz: int | None = None
    power_limit_w: float | None = None
    """The power management limit at start (the enforced one is sampled every tick)."""
    slowdown_temp_c: int | None = None
    persistence_mode: bool | None = None
    mig_mode: bool | None = None
    lost: bool = False
    """The GPU had already fallen off the bus when NVML opened."""


@dataclass(frozen=True)
class GpuProcess:
    """A compute process on a GPU. `ancestors` are its parent pids, nearest first (to tell ours)."""

    pid: int
    name: str | None
    used_mib: int | None
    ancestors: tuple[int, ...] = ()


@dataclass(frozen=True)
class GpuSample:
    """One GPU at one tick. Slow-lane fields hold the last slow read (taken at `slow_t`)."""

    index: int
    t: float
    lost: bool = False
    util_gpu: int | None = None
    util_mem: int | None = None
    memory_used_mib: int | None = None
    temp_c: int | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    pstate: int | None = None
    throttle_mask: int | None = None
    processes: tuple[GpuProcess, ...] = ()
    ecc_corrected: int | None = None
    ecc_uncorrected: int | None = None
    energy_j: float | None = None
    pcie_rx_kbs: int | None = None
    pcie_tx_kbs: int | None = None
    slow_t: float | None = None

    @property
    def throttle_reasons(self) -> tuple[str, ...]:
        return decode_throttle(self.throttle_mask)


@dataclass(frozen=True)
class NvmlProblem:
    """An NVML error other than "not supported" or "GPU lost", reported once per (gpu, field, error)."""

    gpu: int | None
    field: str
    error: str

    def describe(self) -> str:
        where = "NVML" if self.gpu is None else f"GPU {self.gpu}"
        return f"{where}: reading {self.field} failed: {self.error} (shown as n/a)"


@dataclass(frozen=True)
class Snapshot:
    """One tick: a sample per GPU, what the tick cost, and whether NVML is there at all."""

    t: float
    samples: tuple[GpuSample, ...] = ()
    gpus: tuple[GpuStatic, ...] = ()
    tick_us: float = 0.0
    available: bool = True
    reason: str | None = None
    """Why there is no telemetry when `available` is False, in one line."""
    slow: bool = False
    """The slow lane (ECC, energy, PCIe) was read on this tick."""
    problems: tuple[NvmlProblem, ...] = field(default=())
    """Problems first seen on this tick."""

    def static(self, index: int) -> GpuStatic | None:
        return next((g for g in self.gpus if g.index == index), None)

    def uuid(self, index: int) -> str | None:
        """The UUID of the GPU NVML numbers `index` in this snapshot."""
        static = self.static(index)
        return static.uuid if static is not None else None


def throttled_seconds(
    points: Iterable[tuple[float, int | None]], t0: float, t1: float, max_gap_s: float = 10.0,
) -> dict[str, float]:
    """Seconds each reason was active in [t0, t1], from consecutive (t, mask) samples.

    Each sample's reasons hold until the next sample; an interval longer than `max_gap_s`
    (the sampler was paused) counts only its first `max_gap_s`.
    """
    seconds: dict[str, float] = {}
    ordered = sorted(points, key=lambda p: p[0])
    for (ta, mask), (tb, _) in pairwise(ordered):
        lo, hi = max(ta, t0), min(tb, t1, ta + max_gap_s)
        if hi <= lo or not mask:
            continue
        for word in decode_throttle(mask):
            seconds[word] = seconds.get(word, 0.0) + (hi - lo)
    return seconds
