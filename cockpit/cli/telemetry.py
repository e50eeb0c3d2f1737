"""`cockpit gpu [--json] [--watch S]`, `cockpit telemetry record --seconds N -o FILE.jsonl` and
`cockpit telemetry track` (a session's telemetry track without the TUI).

The handlers build the live sampler; the loops take the source, streams, clock and sleep as
arguments so tests drive them without NVML and without sleeping.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from cockpit.cli.parser import session_named, workspace_of
from cockpit.cli.printed import terminal_of
from cockpit.clock import SystemClock
from cockpit.errors import CockpitError
from cockpit.session.live import LiveSession
from cockpit.session.workspace import Workspace, resolve_session
from cockpit.telemetry.nvml import Nvml
from cockpit.telemetry.recording import RecordingWriter
from cockpit.telemetry.sample import GpuSample, GpuStatic, Snapshot
from cockpit.telemetry.sampler import Sampler, TelemetrySource
from cockpit.telemetry.session_track import keep_track
from cockpit.telemetry.track import TRACK_NAME, TrackWriter

_CLEAR = "\x1b[H\x1b[2J"


def gpu(args: argparse.Namespace) -> int:
    """`cockpit gpu`: a GPU snapshot over NVML."""
    return gpu_command(args.json, args.watch)


def telemetry(args: argparse.Namespace) -> int:
    """`cockpit telemetry record|track`."""
    if args.telemetry_command == "track":
        return track_command(workspace_of(args), session_named(args))
    return record_command(args.seconds, args.out, args.interval, args.pcie)


def gpu_command(as_json: bool, watch_s: float | None) -> int:
    """Print a GPU snapshot (or one every `watch_s` seconds until ctrl-c). Exit 2 without NVML."""
    if watch_s is not None and watch_s <= 0:
        raise CockpitError("--watch needs a positive number of seconds, e.g. --watch 1")
    return show_gpus(Sampler(Nvml(), SystemClock()), as_json, watch_s, sys.stdout, sys.stderr, time.sleep)


def show_gpus(source: TelemetrySource, as_json: bool, watch_s: float | None, out: TextIO, err: TextIO,
              sleep: Callable[[float], None]) -> int:
    """The `cockpit gpu` loop: one snapshot, or one per `watch_s` until KeyboardInterrupt."""
    try:
        while True:
            snap = source.tick()
            if not snap.available:
                if as_json:
                    out.write(json.dumps({"available": False, "reason": snap.reason}) + "\n")
                print(f"cockpit: no GPU telemetry: {snap.reason}", file=err)
                return 2
            for problem in snap.problems:
                print(f"cockpit: {problem.describe()}", file=err)
            if as_json:
                out.write(json.dumps(snapshot_json(snap)) + "\n")
            else:
                if watch_s is not None and out.isatty():  # our own escape: under the door
                    terminal_of(out).write(_CLEAR)
                out.write(format_snapshot(snap))
            out.flush()
            if watch_s is None:
                return 0
            sleep(watch_s)
    except KeyboardInterrupt:
        return 0
    finally:
        source.close()


def record_command(seconds: float, out: Path, interval_s: float = 1.0, pcie: bool = False) -> int:
    """Record `seconds` of live samples every `interval_s` to `out` (JSON lines). Raises
    CockpitError (exit 2) for bad arguments or without NVML; ctrl-c keeps what was recorded."""
    sampler = Sampler(Nvml(), SystemClock(), pcie=pcie)
    return record(sampler, out, seconds, interval_s, time.monotonic, time.sleep, sys.stdout)


def record(source: TelemetrySource, out: Path, seconds: float, interval_s: float,
           monotonic: Callable[[], float], sleep: Callable[[float], None], stdout: TextIO) -> int:
    """Tick at 0, interval, 2·interval, ... up to `seconds`, each tick written as it comes."""
    if seconds <= 0 or interval_s <= 0:
        raise CockpitError("--seconds and the interval must be positive, e.g. --seconds 60")
    try:
        first = source.tick()
        if not first.available:
            raise CockpitError(f"no GPU telemetry to record: {first.reason}")
        writer = RecordingWriter(out)
        start = monotonic()
        try:
            writer.write(first)
            n = 1
            while n * interval_s <= seconds + 1e-9:
                sleep(max(0.0, start + n * interval_s - monotonic()))
                writer.write(source.tick())
                n += 1
        except KeyboardInterrupt:
            pass
        finally:
            writer.close()
    finally:
        source.close()
    print(f"recorded {writer.ticks} ticks of {len(first.gpus)} GPU(s) over "
          f"{monotonic() - start:.1f} s to {out}", file=stdout)
    return 0


# What is printed -----------------------------------------------------------------------------


def snapshot_json(snap: Snapshot) -> dict[str, Any]:
    """The `--json` object: static facts and the latest sample of each GPU, merged per GPU."""
    gpus = []
    for sample in snap.samples:
        static = snap.static(sample.index) or GpuStatic(sample.index)
        merged = {**asdict(static), **asdict(sample), "lost": sample.lost or static.lost,
                  "throttle_reasons": list(sample.throttle_reasons)}
        merged["processes"] = [asdict(p) for p in sample.processes]
        gpus.append(merged)
    return {"available": True, "t": snap.t, "tick_us": round(snap.tick_us, 1), "gpus": gpus,
            "problems": [p.describe() for p in snap.problems]}


def format_snapshot(snap: Snapshot) -> str:
    """One compact block per GPU, for a terminal."""
    blocks = [_block(s, snap.static(s.index) or GpuStatic(s.index)) for s in snap.samples]
    return "\n".join(blocks) + "\n"


def _block(s: GpuSample, g: GpuStatic) -> str:
    title = f"GPU {s.index}  {g.name or 'unknown GPU'}"
    if s.lost or g.lost:
        return f"{title}  LOST: fell off the bus (reset the GPU or reboot the machine)\n"
    facts = [f"sm_{g.compute_capability[0]}{g.compute_capability[1]}" if g.compute_capability else None,
             f"driver {g.driver_version}" if g.driver_version else None,
             f"CUDA {g.cuda_driver_version}" if g.cuda_driver_version else None]
    lines = [f"{title}  ({', '.join(f for f in facts if f)})" if any(facts) else title]
    lines.append(f"  util   {_n(s.util_gpu, '%')}   mem util {_n(s.util_mem, '%')}   "
                 f"mem {_n(s.memory_used_mib)} / {_n(g.memory_total_mib, 'MiB')}")
    slowdown = f" (slowdown {g.slowdown_temp_c} °C)" if g.slowdown_temp_c is not None else ""
    lines.append(f"  temp   {_n(s.temp_c, '°C')}{slowdown}   power {_n(_round(s.power_w))} / "
                 f"{_n(_round(s.power_limit_w), 'W')}")
    pstate = f"P{s.pstate}" if s.pstate is not None else "P n/a"
    lines.append(f"  clocks SM {_n(s.sm_clock_mhz)} / {_n(g.max_sm_clock_mhz, 'MHz')}   "
                 f"mem {_n(s.mem_clock_mhz)} / {_n(g.max_mem_clock_mhz, 'MHz')}   {pstate}")
    reasons = ", ".join(s.throttle_reasons) if s.throttle_mask is not None else "n/a"
    lines.append(f"  clock events  {reasons or 'none'}")
    if s.processes:
        procs = "; ".join(f"{p.pid} {p.name or '?'} {_n(p.used_mib, 'MiB')}" for p in s.processes)
        lines.append(f"  procs  {procs}")
    else:
        lines.append("  procs  none")
    return "\n".join(lines) + "\n"


def _n(value: float | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    text = f"{value:,}" if unit == "MiB" or (not unit and value >= 10_000) else f"{value}"
    return f"{text} {unit}" if unit else text


def _round(value: float | None) -> int | None:
    return round(value) if value is not None else None


def track_command(ws: Workspace, spec: str | None, out: TextIO = sys.stdout) -> int:
    """Keep the open session's telemetry track until it ends (or ctrl-c)."""
    from cockpit.clock import SystemClock
    from cockpit.telemetry.nvml import Nvml
    from cockpit.telemetry.sampler import Sampler

    ref = resolve_session(ws, spec)
    if ref is None:
        raise CockpitError('no open session to keep a track for; start one with: cockpit new "OBJECTIVE"')
    live = LiveSession(ref)  # follows what the gates and `cockpit end` append, a stat when nothing did

    def still_open() -> bool:
        live.refresh()
        return live.state.is_open

    writer = TrackWriter(ref.path / TRACK_NAME)
    try:
        ticks = keep_track(Sampler(Nvml(), SystemClock()), writer, still_open, time.monotonic, time.sleep)
    finally:
        live.close()
    print(f"{ref.id}: {writer.rows_written} telemetry rows from {ticks} samples in {writer.path}", file=out)
    return 0
