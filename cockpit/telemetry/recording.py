"""Telemetry recordings: JSON lines written while sampling, read back into the same dataclasses.

Line 1 is the header (`"type": "header"`: the static facts of each GPU, or why NVML was
missing); every further line is one tick (`"type": "tick"`). Fields that are None are left out.
Reading tolerates a torn last line and garbage lines: they are reported and skipped.
`ReplaySampler` plays a recording through the same `tick()` a live `Sampler` has.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import IO, Any, TypedDict

from cockpit.clock import Clock
from cockpit.errors import CockpitError
from cockpit.json_fields import JsonObject, compact, items, obj, objects
from cockpit.telemetry.sample import GpuProcess, GpuSample, GpuStatic, NvmlProblem, Snapshot

FORMAT = "cockpit-telemetry"
VERSION = 1
_RECORD_HINT = "record one with: cockpit telemetry record --seconds 60 -o FILE.jsonl"


class HeaderLine(TypedDict):
    """Line 1: the static facts of each GPU (their None fields left out), or why NVML was missing."""

    type: str
    format: str
    version: int
    t: float
    available: bool
    reason: str | None
    gpus: list[JsonObject]


class _TickFields(TypedDict):
    type: str
    t: float
    tick_us: float
    samples: list[JsonObject]
    """Each GPU's sample, its None fields left out (`lost` and `processes` only when set)."""


class TickLine(_TickFields, total=False):
    """One tick; `slow` and `problems` only when there are any."""

    slow: bool
    problems: list[JsonObject]


class RecordingWriter:
    """Appends snapshots to a recording, one flushed line each; the header goes with the first."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ticks = 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._f: IO[str] = path.open("w", encoding="utf-8")
        except OSError as exc:
            raise CockpitError(f"{path}: cannot write the recording ({exc.strerror}); "
                               "choose another -o path") from exc
        self._header_written = False

    def write(self, snapshot: Snapshot) -> None:
        if not self._header_written:
            self._line(header_line(snapshot))
            self._header_written = True
        if snapshot.available:
            self._line(tick_line(snapshot))
            self.ticks += 1

    def _line(self, line: HeaderLine | TickLine) -> None:
        try:
            self._f.write(json.dumps(line, separators=(",", ":")) + "\n")
            self._f.flush()
        except OSError as exc:
            raise CockpitError(f"{self.path}: recording write failed ({exc.strerror}); "
                               "free disk space") from exc

    def close(self) -> None:
        self._f.close()


def header_line(snapshot: Snapshot) -> HeaderLine:
    return {"type": "header", "format": FORMAT, "version": VERSION, "t": snapshot.t,
            "available": snapshot.available, "reason": snapshot.reason,
            "gpus": [compact(asdict(g)) for g in snapshot.gpus]}


def tick_line(snapshot: Snapshot) -> TickLine:
    line: TickLine = {"type": "tick", "t": snapshot.t, "tick_us": round(snapshot.tick_us, 1),
                      "samples": [_sample_dict(s) for s in snapshot.samples]}
    if snapshot.slow:
        line["slow"] = True
    if snapshot.problems:
        line["problems"] = [asdict(p) for p in snapshot.problems]
    return line


def _sample_dict(sample: GpuSample) -> JsonObject:
    d = compact(asdict(sample))
    if not sample.lost:
        d.pop("lost")
    if sample.processes:
        d["processes"] = [compact(asdict(p)) for p in sample.processes]
    else:
        d.pop("processes")
    return d


# Reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recording:
    path: Path
    gpus: tuple[GpuStatic, ...]
    snapshots: tuple[Snapshot, ...]
    available: bool = True
    reason: str | None = None
    problems: tuple[str, ...] = ()
    """Lines skipped on read (torn last line, garbage), one line each with file:line."""

    @property
    def duration_s(self) -> float:
        return self.snapshots[-1].t - self.snapshots[0].t if self.snapshots else 0.0


def read_recording(path: Path) -> Recording:
    """Parse a recording. Raises CockpitError only when the file is unreadable or has no header."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CockpitError(f"{path}: cannot read the recording ({exc.strerror}); {_RECORD_HINT}") from exc
    lines = data.split(b"\n")
    torn_at = len(lines) if lines[-1].strip() else None  # the last line has no newline
    problems: list[str] = []
    header: JsonObject | None = None
    gpus: tuple[GpuStatic, ...] = ()
    snapshots: list[Snapshot] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        line = _json(raw)
        if header is None:
            if line is None or line.get("type") != "header" or line.get("format") != FORMAT:
                raise CockpitError(f"{path}: not a cockpit telemetry recording; {_RECORD_HINT}")
            header = line
            gpus = tuple(_static(g) for g in objects(line.get("gpus")))
            continue
        snap = _snapshot(line, gpus) if line is not None and line.get("type") == "tick" else None
        if snap is not None:
            snapshots.append(snap)
        elif number == torn_at:
            problems.append(f"{path}:{number}: torn last line (a write was cut off), skipped")
        else:
            problems.append(f"{path}:{number}: not a telemetry tick, skipped")
    if header is None:
        raise CockpitError(f"{path}: empty recording; {_RECORD_HINT}")
    reason = header.get("reason")
    return Recording(path, gpus, tuple(snapshots), bool(header.get("available", True)),
                     reason if isinstance(reason, str) else None, tuple(problems))


def _json(raw: bytes) -> JsonObject | None:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return obj(value) if isinstance(value, dict) else None


def _known(cls: type, d: JsonObject) -> dict[str, Any]:
    """The keyword arguments of `cls` among a line's fields, as the recording wrote them (the
    dataclass takes them unchecked: a field of the wrong type fails where it is used)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k in names}


def _static(d: JsonObject) -> GpuStatic:
    known = _known(GpuStatic, d)
    if known.get("compute_capability") is not None:
        known["compute_capability"] = tuple(known["compute_capability"])
    return GpuStatic(**known)


def _snapshot(line: JsonObject, gpus: tuple[GpuStatic, ...]) -> Snapshot | None:
    try:
        samples = tuple(_sample(d) for d in _listed(line["samples"]))
        problems = tuple(NvmlProblem(**_known(NvmlProblem, p)) for p in _listed(line.get("problems", [])))
        return Snapshot(_number(line["t"]), samples, gpus, _number(line.get("tick_us", 0.0)),
                        slow=bool(line.get("slow", False)), problems=problems)
    except (KeyError, TypeError, ValueError):
        return None


def _listed(value: object) -> list[JsonObject]:
    """A list of JSON objects; TypeError (the tick is skipped) for anything else."""
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TypeError(f"not a list of objects: {value!r:.40}")
    return [obj(v) for v in value]


def _number(value: object) -> float:
    """A number as written; TypeError (the tick is skipped) for anything else."""
    if not isinstance(value, (int, float, str)):
        raise TypeError(f"not a number: {value!r:.40}")
    return float(value)


def _sample(d: JsonObject) -> GpuSample:
    known = _known(GpuSample, d)
    known["processes"] = tuple(_process(p) for p in _listed(known.get("processes", [])))
    return GpuSample(**known)


def _process(p: JsonObject) -> GpuProcess:
    return GpuProcess(**{**_known(GpuProcess, p), "ancestors": items(p.get("ancestors"))})


# Replay --------------------------------------------------------------------------------------


class ReplaySampler:
    """Plays a recording back, one recorded tick per `tick()`, looping; timestamps are moved to
    `clock.now()` so a history fed from it runs forward like a live one."""

    def __init__(self, recording: Recording, clock: Clock, loop: bool = True) -> None:
        self.recording = recording
        self._clock = clock
        self._loop = loop
        self._next = 0

    @classmethod
    def from_path(cls, path: Path, clock: Clock, loop: bool = True) -> ReplaySampler:
        return cls(read_recording(path), clock, loop)

    @property
    def gpus(self) -> tuple[GpuStatic, ...]:
        return self.recording.gpus

    def tick(self) -> Snapshot:
        now = self._clock.now()
        frames = self.recording.snapshots
        if not self.recording.available:
            return Snapshot(now, available=False, reason=self.recording.reason)
        if not frames or (not self._loop and self._next >= len(frames)):
            return Snapshot(now, available=False,
                            reason=f"{self.recording.path.name}: the recording has no more samples")
        frame = frames[self._next % len(frames)]
        self._next += 1
        return shift_snapshot(frame, now - frame.t)

    def close(self) -> None:
        return None


def shift_snapshot(snapshot: Snapshot, dt: float) -> Snapshot:
    """The same snapshot `dt` seconds later."""
    samples = tuple(replace(s, t=s.t + dt, slow_t=None if s.slow_t is None else s.slow_t + dt)
                    for s in snapshot.samples)
    return replace(snapshot, t=snapshot.t + dt, samples=samples)
