"""What the watch of a benchmark window saw, as the validity verdict records it: the window, the
GPUs it watched, each clock event, each GPU's busy SM clock, the processes that were not ours.

`telemetry/validity.py` writes it; the bench result (`gates/bench/validity.py`) reads it back
and the bench view says it in words. `to_json` writes the JSON the verdict has always held (old
journals read the same); `from_json` takes a recorded one, old, hand-edited or torn, and never
raises: a field of the wrong type reads as absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cockpit.json_fields import as_number, items, obj, objects, text, whole


@dataclass(frozen=True)
class GpuWatched:
    """A GPU the window held samples of."""

    gpu: int | None
    uuid: str | None

    def to_json(self) -> dict[str, object]:
        return {"gpu": self.gpu, "uuid": self.uuid}


@dataclass(frozen=True)
class ClockEvent:
    """One clock event seen in the window: how long it was active and whether it is tolerated."""

    gpu: int | None
    reason: str | None
    seconds: float | None
    fraction: float | None = None
    samples: int | None = None
    tolerated: bool = False

    def to_json(self) -> dict[str, object]:
        return {"gpu": self.gpu, "reason": self.reason, "seconds": self.seconds, "fraction": self.fraction,
                "samples": self.samples, "tolerated": self.tolerated}


@dataclass(frozen=True)
class BusyClock:
    """The SM clock of one GPU while it was busy, and (strict mode) the samples under the floor."""

    gpu: int | None
    min_busy_mhz: float | None
    max_busy_mhz: float | None
    max_mhz: float | None
    busy_samples: int | None = None
    samples_below: int | None = None
    threshold_mhz: float | None = None
    samples_below_explained: int | None = None
    """Below the floor, but while only tolerated clock events were active."""

    def to_json(self) -> dict[str, object]:
        floor = {} if self.threshold_mhz is None else {
            "threshold_mhz": _json_number(self.threshold_mhz), "samples_below": self.samples_below,
            "samples_below_explained": self.samples_below_explained}
        return {"gpu": self.gpu, "busy_samples": self.busy_samples,
                "max_sm_clock_mhz": _json_number(self.max_mhz),
                "min_busy_sm_clock_mhz": _json_number(self.min_busy_mhz),
                "max_busy_sm_clock_mhz": _json_number(self.max_busy_mhz), **floor}


@dataclass(frozen=True)
class ForeignProcess:
    """A compute process on the watched GPU that was neither ours nor a descendant of ours."""

    gpu: int | None
    pid: int | None
    name: str | None
    used_mib: int | None
    """The most memory it held in any sample, where NVML said."""
    samples: int

    def to_json(self) -> dict[str, object]:
        return {"gpu": self.gpu, "pid": self.pid, "name": self.name, "used_mib": self.used_mib,
                "samples": self.samples}


@dataclass(frozen=True)
class WindowEvidence:
    """Everything the watch of one window saw, whether or not it made the window suspect."""

    window_s: float | None = None
    mode: str | None = None
    samples: int | None = None
    gpus: tuple[GpuWatched, ...] = ()
    throttle: tuple[ClockEvent, ...] = ()
    clocks: tuple[BusyClock, ...] = ()
    foreign: tuple[ForeignProcess, ...] = ()
    lost: tuple[int, ...] = ()
    """The GPUs that fell off the bus."""
    tolerated: tuple[str, ...] = ()
    """The clock events the rules tolerate (`[thresholds] tolerated_clock_events`)."""

    def to_json(self) -> dict[str, object]:
        return {"window_s": self.window_s, "mode": self.mode, "samples": self.samples,
                "gpus": [g.to_json() for g in self.gpus], "throttle": [t.to_json() for t in self.throttle],
                "clocks": [c.to_json() for c in self.clocks], "foreign": [f.to_json() for f in self.foreign],
                "lost": list(self.lost), "tolerated": list(self.tolerated)}

    @classmethod
    def from_json(cls, value: object) -> WindowEvidence:
        data = obj(value)
        return cls(
            as_number(data.get("window_s")), text(data.get("mode")), whole(data.get("samples")),
            tuple(GpuWatched(whole(g.get("gpu")), text(g.get("uuid"))) for g in objects(data.get("gpus"))),
            tuple(ClockEvent(whole(t.get("gpu")), text(t.get("reason")), as_number(t.get("seconds")),
                             as_number(t.get("fraction")), whole(t.get("samples")),
                             t.get("tolerated") is True)
                  for t in objects(data.get("throttle"))),
            tuple(_busy_clock(c) for c in objects(data.get("clocks"))),
            tuple(ForeignProcess(whole(f.get("gpu")), whole(f.get("pid")), text(f.get("name")),
                                 whole(f.get("used_mib")), whole(f.get("samples")) or 0)
                  for f in objects(data.get("foreign"))),
            tuple(i for v in items(data.get("lost")) if (i := whole(v)) is not None),
            tuple(v for v in items(data.get("tolerated")) if isinstance(v, str)))


def _busy_clock(c: Mapping[str, object]) -> BusyClock:
    return BusyClock(whole(c.get("gpu")), as_number(c.get("min_busy_sm_clock_mhz")),
                     as_number(c.get("max_busy_sm_clock_mhz")), as_number(c.get("max_sm_clock_mhz")),
                     whole(c.get("busy_samples")), whole(c.get("samples_below")),
                     as_number(c.get("threshold_mhz")), whole(c.get("samples_below_explained")))


def _json_number(value: float | None) -> float | int | None:
    """A clock as the watch recorded it: whole MHz as an int."""
    return int(value) if value is not None and value == int(value) else value
