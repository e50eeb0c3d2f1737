"""`cockpit telemetry track`: a session's telemetry track without the TUI.

A session run from a shell gets the same `sessions/<ID>/telemetry.jsonl` the TUI keeps (one row
per GPU every 5 s, the report's chart and per-phase GPU summary): NVML sampled once a second
into the same TrackWriter, until the session ends (checked on the journal every few seconds)
or ctrl-c. Run it in the background next to the gates: `cockpit telemetry track &`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from cockpit.errors import CockpitError
from cockpit.telemetry.sampler import TelemetrySource
from cockpit.telemetry.track import TRACK_NAME, TrackWriter

if TYPE_CHECKING:
    from cockpit.workspace import Workspace

CHECK_OPEN_EVERY_S = 5.0


def keep_track(source: TelemetrySource, writer: TrackWriter, still_open: Callable[[], bool],
               monotonic: Callable[[], float], sleep: Callable[[float], None],
               interval_s: float = 1.0) -> int:
    """Offer a snapshot every `interval_s` until `still_open()` says no; returns the ticks."""
    first = source.tick()
    if not first.available:
        raise CockpitError(f"no GPU telemetry to keep: {first.reason}")
    writer.offer(first)
    start, ticks, checked = monotonic(), 1, monotonic()
    try:
        while True:
            sleep(max(0.0, start + ticks * interval_s - monotonic()))
            writer.offer(source.tick())
            ticks += 1
            if monotonic() - checked >= CHECK_OPEN_EVERY_S:
                checked = monotonic()
                if not still_open():
                    break
    except KeyboardInterrupt:
        pass
    finally:
        writer.close()
        source.close()
    return ticks


def track_command(ws: Workspace, spec: str | None, out: TextIO = sys.stdout) -> int:
    from cockpit.clock import SystemClock
    from cockpit.session.live import LiveSession
    from cockpit.telemetry.nvml import Nvml
    from cockpit.telemetry.sampler import Sampler
    from cockpit.workspace import resolve_session

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
