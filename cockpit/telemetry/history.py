"""The last N samples of each GPU in fixed numpy ring buffers: sparklines and phase summaries.

At the default 900 slots and 1 Hz a ring holds 15 minutes. Missing readings are NaN (and -1 for
the throttle mask), so a sparkline shows a gap rather than a false zero.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from cockpit.telemetry.sample import GpuSample, Snapshot, throttled_seconds

Field = Literal["t", "util_gpu", "memory_used_mib", "power_w", "temp_c", "sm_clock_mhz", "throttle_mask"]
FIELDS: tuple[Field, ...] = ("t", "util_gpu", "memory_used_mib", "power_w", "temp_c", "sm_clock_mhz",
                             "throttle_mask")
DEFAULT_CAPACITY = 900
_NO_MASK = -1


class GpuHistory:
    """One GPU's ring buffers, one array per field, all written at the same slot."""

    def __init__(self, index: int, capacity: int = DEFAULT_CAPACITY, uuid: str | None = None) -> None:
        if capacity < 1:
            raise ValueError("a history needs at least one slot")
        self.index = index
        self.uuid = uuid
        self.capacity = capacity
        self._columns: dict[Field, npt.NDArray[Any]] = {
            name: (np.full(capacity, _NO_MASK, dtype=np.int64) if name == "throttle_mask"
                   else np.full(capacity, np.nan, dtype=np.float64))
            for name in FIELDS
        }
        self._next = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, sample: GpuSample) -> None:
        slot = self._next
        for name in FIELDS:
            value = getattr(sample, name)
            if name == "throttle_mask":
                self._columns[name][slot] = _NO_MASK if value is None else value
            else:
                self._columns[name][slot] = np.nan if value is None else value
        self._next = (slot + 1) % self.capacity
        self._count = min(self._count + 1, self.capacity)

    def values(self, field: Field, last_n: int | None = None) -> npt.NDArray[Any]:
        """The newest `last_n` values of `field` (all held when None), oldest first; a copy."""
        n = self._count if last_n is None else max(0, min(last_n, self._count))
        column = self._columns[field]
        start = (self._next - n) % self.capacity
        part: npt.NDArray[Any]
        if start + n <= self.capacity:
            part = column[start:start + n].copy()
        else:
            part = np.concatenate((column[start:], column[:self._next]))
        return part

    def phase_summary(self, t0: float, t1: float) -> dict[str, Any]:
        """Mean/max utilization, power and temperature in [t0, t1], the lowest SM clock, and the
        seconds each clock-event reason was active (from consecutive samples)."""
        t = self.values("t")
        inside = (t >= t0) & (t <= t1)
        # The samples just outside bound the edges: the one before t0 tells what held from t0 to
        # the first sample inside; the one after t1 ends the last inside sample's interval.
        chosen = inside.copy()
        before, after = np.flatnonzero(t < t0), np.flatnonzero(t > t1)
        if before.size:
            chosen[before[np.argmax(t[before])]] = True
        if after.size:
            chosen[after[np.argmin(t[after])]] = True
        masks = self.values("throttle_mask")[chosen]
        points = [(float(ti), int(m) if m != _NO_MASK else None) for ti, m in zip(t[chosen], masks,
                                                                                     strict=True)]
        throttled = throttled_seconds(points, t0, t1)
        return {
            "gpu": self.index,
            "uuid": self.uuid,
            "samples": int(inside.sum()),
            "util_mean": _stat(np.mean, self.values("util_gpu")[inside]),
            "util_max": _stat(np.max, self.values("util_gpu")[inside]),
            "power_mean_w": _stat(np.mean, self.values("power_w")[inside]),
            "power_max_w": _stat(np.max, self.values("power_w")[inside]),
            "temp_mean_c": _stat(np.mean, self.values("temp_c")[inside]),
            "temp_max_c": _stat(np.max, self.values("temp_c")[inside]),
            "memory_max_mib": _stat(np.max, self.values("memory_used_mib")[inside]),
            "sm_clock_min_mhz": _stat(np.min, self.values("sm_clock_mhz")[inside]),
            "throttled_s": {word: round(s, 1) for word, s in throttled.items()},
        }


def _stat(fn: Any, values: npt.NDArray[np.float64]) -> float | None:
    known = values[~np.isnan(values)]
    return round(float(fn(known)), 1) if known.size else None


class History:
    """A `GpuHistory` per GPU, fed one snapshot per tick (snapshots without NVML add nothing)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._gpus: dict[int, GpuHistory] = {}

    def append(self, snapshot: Snapshot) -> None:
        for sample in snapshot.samples:
            ring = self._gpus.get(sample.index)
            if ring is None:
                ring = self._gpus[sample.index] = GpuHistory(sample.index, self.capacity,
                                                             snapshot.uuid(sample.index))
            ring.append(sample)

    @property
    def indices(self) -> tuple[int, ...]:
        return tuple(sorted(self._gpus))

    def gpu(self, index: int) -> GpuHistory | None:
        return self._gpus.get(index)

    def values(self, index: int, field: Field, last_n: int | None = None) -> npt.NDArray[Any]:
        """`GpuHistory.values` of one GPU; empty for a GPU never seen."""
        ring = self._gpus.get(index)
        if ring is None:
            return np.empty(0, dtype=np.int64 if field == "throttle_mask" else np.float64)
        return ring.values(field, last_n)

    def phase_summary(self, t0: float, t1: float, uuids: Collection[str] | None = None) -> dict[str, Any]:
        """What the GPUs did during a phase, as one JSON-ready dict for the gpu_summary event:
        every GPU, or only those with these UUIDs (the GPUs the session's gates ran on)."""
        wanted = None if uuids is None else {u.lower() for u in uuids}
        rings = [self._gpus[i] for i in self.indices
                 if wanted is None or (self._gpus[i].uuid or "").lower() in wanted]
        return {"t0": t0, "t1": t1, "gpus": [ring.phase_summary(t0, t1) for ring in rings]}
