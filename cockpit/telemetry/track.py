"""`sessions/<ID>/telemetry.jsonl`: the session's GPU telemetry, kept for the report's chart.

The TUI samples every GPU once a second; `TrackWriter.offer` folds those snapshots into one row
per GPU every `every_s` seconds (5 s: ~5,800 rows for 8 hours of one GPU) — the mean of the
window for utilization, power, temperature and SM clock, the most memory used, and every clock
event seen. Each writer opens with a `"type": "gpus"` line (name, UUID, driver of each GPU: the
report's machine section). Rows are appended and flushed, never rewritten, like the journal;
reading skips a torn last line and garbage lines and reports them, never fails on them.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from cockpit.errors import CockpitError
from cockpit.files import RefusedFile, regular_fd
from cockpit.json_fields import JsonObject
from cockpit.telemetry.sample import GpuSample, GpuStatic, Snapshot

TRACK_NAME = "telemetry.jsonl"
DEFAULT_EVERY_S = 5.0


@dataclass(frozen=True)
class TrackRow:
    """One GPU over one window: `t` is the window's last sample; None where NVML gave nothing."""

    t: float
    gpu: int
    uuid: str | None = None
    util: float | None = None
    memory_mib: float | None = None
    power_w: float | None = None
    temp_c: float | None = None
    sm_clock_mhz: float | None = None
    clock_events: tuple[str, ...] = ()
    samples: int = 1


@dataclass(frozen=True)
class TrackGpu:
    """What the track says about one GPU besides its rows."""

    index: int
    name: str | None = None
    uuid: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    memory_total_mib: int | None = None


GPU_KEYS = ("name", "uuid", "driver_version", "cuda_driver_version", "memory_total_mib")


def gpus_line(t: float, gpus: Iterable[GpuStatic]) -> JsonObject:
    return {"type": "gpus", "t": t, "gpus": [
        {"index": g.index, **{k: getattr(g, k) for k in GPU_KEYS if getattr(g, k) is not None}}
        for g in gpus]}


def gpus_from_json(obj: Any) -> tuple[TrackGpu, ...] | None:
    items = obj.get("gpus") if isinstance(obj, dict) and obj.get("type") == "gpus" else None
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("index"), int):
            return None
        values = {k: item.get(k) for k in GPU_KEYS}
        if not all(v is None or isinstance(v, int if k == "memory_total_mib" else str)
                   for k, v in values.items()):
            return None
        out.append(TrackGpu(item["index"], **values))
    return tuple(out)


def row_json(row: TrackRow) -> JsonObject:
    out: dict[str, object] = {"t": row.t, "gpu": row.gpu}
    for key in ("uuid", "util", "memory_mib", "power_w", "temp_c", "sm_clock_mhz"):
        value = getattr(row, key)
        if value is not None:
            out[key] = value
    if row.clock_events:
        out["clock_events"] = list(row.clock_events)
    out["samples"] = row.samples
    return out


def row_from_json(obj: Any) -> TrackRow | None:
    """The row a line holds, or None when it is not one (wrong shape or types). Exact type checks
    (`type(x) in NUMBER`: a bool is not a number here): a week's track is 50,000 rows."""
    if type(obj) is not dict:
        return None
    t: Any = obj.get("t")
    gpu = obj.get("gpu")
    if type(gpu) is not int or type(t) not in _NUMBER or not math.isfinite(t):
        return None
    events = obj.get("clock_events", ())
    uuid = obj.get("uuid")
    samples = obj.get("samples", 1)
    if (type(events) not in (list, tuple) or not all(type(e) is str for e in events)
            or (uuid is not None and type(uuid) is not str) or type(samples) is not int):
        return None
    values = {}
    for key in _VALUE_KEYS:
        value = obj.get(key)
        if value is not None:
            if type(value) not in _NUMBER or not math.isfinite(value):
                return None
            value = float(value)
        values[key] = value
    return TrackRow(float(t), gpu, uuid, clock_events=tuple(events), samples=samples, **values)


_NUMBER = (int, float)
_VALUE_KEYS = ("util", "memory_mib", "power_w", "temp_c", "sm_clock_mhz")


def _number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def fold_window(gpu: int, uuid: str | None, samples: list[GpuSample]) -> TrackRow:
    """One row from a window of one GPU's samples (lost or missing readings are left out)."""

    def mean(name: str) -> float | None:
        known = [float(v) for s in samples if (v := getattr(s, name)) is not None]
        return round(sum(known) / len(known), 1) if known else None

    memory = [s.memory_used_mib for s in samples if s.memory_used_mib is not None]
    events: list[str] = []
    for s in samples:
        events += [word for word in s.throttle_reasons if word not in events]
    return TrackRow(round(samples[-1].t, 3), gpu, uuid, mean("util_gpu"),
                    float(max(memory)) if memory else None, mean("power_w"), mean("temp_c"),
                    mean("sm_clock_mhz"), tuple(events), len(samples))


class WindowFold:
    """Snapshots in, one row per GPU per closed window out (no I/O: the writer and the report's
    reading of a gate's own samples share it)."""

    def __init__(self, every_s: float = DEFAULT_EVERY_S) -> None:
        if every_s <= 0:
            raise ValueError("a telemetry track needs a positive window")
        self.every_s = every_s
        self._windows: dict[int, list[GpuSample]] = {}
        self._uuids: dict[int, str | None] = {}
        self._origin: float | None = None
        self._window: int | None = None

    def add(self, snapshot: Snapshot) -> list[TrackRow]:
        """Take one snapshot; the rows of the window it closed, if it closed one."""
        if not snapshot.available or not snapshot.samples:
            return []
        if self._origin is None:
            self._origin = snapshot.t
        # Windows sit on a fixed grid from the first snapshot; a tenth of a window of slack,
        # because 1 Hz ticks land a hair early as often as late and the fifth must not fall
        # into the first window for arriving at +4.999 s.
        window = math.floor((snapshot.t - self._origin) / self.every_s + 0.1)
        rows = self.close() if self._window is not None and window != self._window else []
        self._window = window
        for gpu in snapshot.gpus:
            self._uuids.setdefault(gpu.index, gpu.uuid)
        for sample in snapshot.samples:
            if not sample.lost:
                self._windows.setdefault(sample.index, []).append(sample)
        return rows

    def close(self) -> list[TrackRow]:
        """The rows of the open window (at the end, so the last seconds are not lost)."""
        rows = [fold_window(index, self._uuids.get(index), samples)
                for index, samples in sorted(self._windows.items()) if samples]
        self._windows.clear()
        self._window = None
        return rows


def downsample(snapshots: Iterable[Snapshot], every_s: float = DEFAULT_EVERY_S) -> list[TrackRow]:
    """Every row a track of these snapshots would hold."""
    fold = WindowFold(every_s)
    rows = [row for snapshot in snapshots for row in fold.add(snapshot)]
    return rows + fold.close()


class TrackWriter:
    """Folds the TUI's per-second snapshots into `telemetry.jsonl`, one row per GPU per window.

    `offer` is cheap when it writes nothing (an append to a list); the file is opened on the
    first write, in append mode, and each row is flushed as it is written.
    """

    def __init__(self, path: Path, every_s: float = DEFAULT_EVERY_S) -> None:
        self.path = path
        self.rows_written = 0
        self._fold = WindowFold(every_s)
        self._f: IO[str] | None = None
        self._gpus: JsonObject | None = None

    def offer(self, snapshot: Snapshot) -> bool:
        """Take one snapshot; True when it closed a window and rows were written."""
        if self._gpus is None and snapshot.available and snapshot.gpus:
            self._gpus = gpus_line(snapshot.t, snapshot.gpus)
        return self._append(self._fold.add(snapshot))

    def flush(self) -> bool:
        """Write what the open window holds."""
        return self._append(self._fold.close())

    def _append(self, rows: list[TrackRow]) -> bool:
        if not rows:
            return False
        lines = [row_json(r) for r in rows]
        if self._f is None and self._gpus is not None:
            lines.insert(0, self._gpus)
        self._write("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
        self.rows_written += len(rows)
        return True

    def _write(self, text: str) -> None:
        try:
            if self._f is None:
                self._f = self._open()
            self._f.write(text)
            self._f.flush()
        except RefusedFile:
            raise  # names the file and what it is
        except OSError as exc:
            raise CockpitError(f"{self.path}: telemetry track write failed ({exc.strerror}); "
                               "free disk space — the journal is not affected") from exc

    def _open(self) -> IO[str]:
        # through the door: a FIFO in the track's place is one line, never a write that blocks
        fd = regular_fd(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        f = os.fdopen(fd, "a+", encoding="utf-8")
        # A crash mid-write leaves a line without its newline: end it so the next row stays whole.
        if f.tell() > 0:
            f.seek(f.tell() - 1)
            if f.read(1) != "\n":
                f.write("\n")
        return f

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if self._f is not None:
                self._f.close()
                self._f = None


@dataclass(frozen=True)
class Track:
    rows: tuple[TrackRow, ...]
    problems: tuple[str, ...] = ()
    """Lines skipped on read, one line each with file:line."""
    gpus: tuple[TrackGpu, ...] = ()
    """From the last `gpus` line."""


def read_track(path: Path) -> Track:
    """Every row of a track, oldest first; a missing file is an empty track."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Track(())
    except OSError as exc:
        return Track((), (f"{path}: cannot read the telemetry track ({exc.strerror})",))
    return parse_track(data.split(b"\n"), path)


def _decode_all(items: list[bytes], batch: int = 4096) -> list[Any]:
    """Each line's JSON value, None where it is not JSON: a batch of lines is decoded as one
    array (one C call; 50,000 rows in a tenth of the time), line by line where that fails."""
    out: list[Any] = []
    for start in range(0, len(items), batch):
        chunk = items[start:start + batch]
        kept = [raw for raw in chunk if raw.strip()]
        try:
            values = json.loads(b"[" + b",".join(kept) + b"]") if all(
                raw.strip()[:1] == b"{" and raw.strip()[-1:] == b"}" for raw in kept) else None
        except (UnicodeDecodeError, ValueError, RecursionError):
            values = None
        if values is not None and len(values) == len(kept):
            found = iter(values)
            out += [next(found) if raw.strip() else None for raw in chunk]
            continue
        for raw in chunk:
            try:
                out.append(json.loads(raw.decode("utf-8")) if raw.strip() else None)
            except (UnicodeDecodeError, ValueError, RecursionError):
                out.append(None)
    return out


def parse_track(lines: Iterable[bytes], path: Path) -> Track:
    items = list(lines)
    rows: list[TrackRow] = []
    problems: list[str] = []
    gpus: tuple[TrackGpu, ...] = ()
    last = len(items) - 1
    decoded = _decode_all(items)
    for number, raw in enumerate(items, start=1):
        if not raw.strip():
            continue
        obj = decoded[number - 1]
        row = row_from_json(obj)
        named = gpus_from_json(obj) if row is None else None
        if row is not None:
            rows.append(row)
        elif named is not None:
            gpus = named
        elif number - 1 == last:
            problems.append(f"{path}:{number}: torn last line (a write was cut off), skipped")
        else:
            problems.append(f"{path}:{number}: not a telemetry row, skipped")
    rows.sort(key=lambda r: (r.t, r.gpu))
    return Track(tuple(rows), tuple(problems), gpus)
