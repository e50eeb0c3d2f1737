"""The last N samples of each GPU in fixed ring buffers: sparklines and phase summaries.

At the default 900 slots and 1 Hz a ring holds 15 minutes. Missing readings are NaN (and -1 for
the throttle mask), so a sparkline shows a gap rather than a false zero. The rings are the
standard library's `array` (8 bytes a slot, ~50 KB per GPU): numpy would add 11 MiB and a BLAS
thread per core to the UI process for a few hundred numbers per field.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Collection, Sequence
from typing import Any, Literal, overload

from cockpit.telemetry.sample import GpuSample, Snapshot, throttled_seconds

Field = Literal["t", "util_gpu", "memory_used_mib", "power_w", "temp_c", "sm_clock_mhz", "throttle_mask"]
FloatField = Literal["t", "util_gpu", "memory_used_mib", "power_w", "temp_c", "sm_clock_mhz"]
FLOAT_FIELDS: tuple[FloatField, ...] = ("t", "util_gpu", "memory_used_mib", "power_w", "temp_c",
                                        "sm_clock_mhz")
FIELDS: tuple[Field, ...] = (*FLOAT_FIELDS, "throttle_mask")
DEFAULT_CAPACITY = 900
_NO_MASK = -1


def mean(values: Sequence[float]) -> float:
    """`statistics.fmean`'s definition, without loading `statistics` into the UI process."""
    return math.fsum(values) / len(values)


class GpuHistory:
    """One GPU's ring buffers, one array per field, all written at the same slot."""

    def __init__(self, index: int, capacity: int = DEFAULT_CAPACITY, uuid: str | None = None) -> None:
        if capacity < 1:
            raise ValueError("a history needs at least one slot")
        self.index = index
        self.uuid = uuid
        self.capacity = capacity
        self._floats: dict[FloatField, array[float]] = {
            name: array("d", [math.nan]) * capacity for name in FLOAT_FIELDS}
        self._masks: array[int] = array("q", [_NO_MASK]) * capacity
        self._next = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, sample: GpuSample) -> None:
        slot = self._next
        for name in FLOAT_FIELDS:
            value = getattr(sample, name)
            self._floats[name][slot] = math.nan if value is None else value
        mask = sample.throttle_mask
        self._masks[slot] = _NO_MASK if mask is None else mask
        self._next = (slot + 1) % self.capacity
        self._count = min(self._count + 1, self.capacity)

    @overload
    def values(self, field: FloatField, last_n: int | None = None) -> array[float]: ...
    @overload
    def values(self, field: Literal["throttle_mask"], last_n: int | None = None) -> array[int]: ...

    def values(self, field: Field, last_n: int | None = None) -> array[float] | array[int]:
        """The newest `last_n` values of `field` (all held when None), oldest first; a copy."""
        column = self._masks if field == "throttle_mask" else self._floats[field]
        return self._newest(column, last_n)

    def _newest(self, column: array[Any], last_n: int | None) -> array[Any]:
        n = self._count if last_n is None else max(0, min(last_n, self._count))
        start = (self._next - n) % self.capacity
        if start + n <= self.capacity:
            return column[start:start + n]  # slicing an array copies it
        return column[start:] + column[:self._next]

    def phase_summary(self, t0: float, t1: float) -> dict[str, Any]:
        """Mean/max utilization, power and temperature in [t0, t1], the lowest SM clock, and the
        seconds each clock-event reason was active (from consecutive samples)."""
        t = self.values("t")
        inside = [i for i, ti in enumerate(t) if t0 <= ti <= t1]
        # The samples just outside bound the edges: the one before t0 tells what held from t0 to
        # the first sample inside; the one after t1 ends the last inside sample's interval.
        chosen = set(inside)
        before = [i for i, ti in enumerate(t) if ti < t0]
        after = [i for i, ti in enumerate(t) if ti > t1]
        if before:
            chosen.add(max(before, key=t.__getitem__))
        if after:
            chosen.add(min(after, key=t.__getitem__))
        masks = self.values("throttle_mask")
        points = [(t[i], None if masks[i] == _NO_MASK else masks[i]) for i in sorted(chosen)]
        throttled = throttled_seconds(points, t0, t1)

        def stat(fn: Callable[[Sequence[float]], float], field: FloatField) -> float | None:
            column = self.values(field)
            known = [v for v in (column[i] for i in inside) if not math.isnan(v)]
            return round(float(fn(known)), 1) if known else None

        return {
            "gpu": self.index,
            "uuid": self.uuid,
            "samples": len(inside),
            "util_mean": stat(mean, "util_gpu"),
            "util_max": stat(max, "util_gpu"),
            "power_mean_w": stat(mean, "power_w"),
            "power_max_w": stat(max, "power_w"),
            "temp_mean_c": stat(mean, "temp_c"),
            "temp_max_c": stat(max, "temp_c"),
            "memory_max_mib": stat(max, "memory_used_mib"),
            "sm_clock_min_mhz": stat(min, "sm_clock_mhz"),
            "throttled_s": {word: round(s, 1) for word, s in throttled.items()},
        }


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

    @overload
    def values(self, index: int, field: FloatField, last_n: int | None = None) -> array[float]: ...
    @overload
    def values(self, index: int, field: Literal["throttle_mask"],
               last_n: int | None = None) -> array[int]: ...

    def values(self, index: int, field: Field, last_n: int | None = None) -> array[float] | array[int]:
        """`GpuHistory.values` of one GPU; empty for a GPU never seen."""
        ring = self._gpus.get(index)
        if ring is None:
            return array("q") if field == "throttle_mask" else array("d")
        return ring.values(field, last_n)

    def phase_summary(self, t0: float, t1: float, uuids: Collection[str] | None = None) -> dict[str, Any]:
        """What the GPUs did during a phase, as one JSON-ready dict for the gpu_summary event:
        every GPU, or only those with these UUIDs (the GPUs the session's gates ran on)."""
        wanted = None if uuids is None else {u.lower() for u in uuids}
        rings = [self._gpus[i] for i in self.indices
                 if wanted is None or (self._gpus[i].uuid or "").lower() in wanted]
        return {"t0": t0, "t1": t1, "gpus": [ring.phase_summary(t0, t1) for ring in rings]}
