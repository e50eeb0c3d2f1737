"""A session's telemetry track kept without the TUI (`cockpit telemetry track`).

A session run from a shell gets the same `sessions/<ID>/telemetry.jsonl` the TUI keeps (one row
per GPU every 5 s, the report's chart and per-phase GPU summary): NVML sampled once a second
into the same TrackWriter, until the session ends (checked on the journal every few seconds)
or ctrl-c. Run it in the background next to the gates: `cockpit telemetry track &`.
"""

from __future__ import annotations

from collections.abc import Callable

from cockpit.errors import CockpitError
from cockpit.telemetry.sampler import TelemetrySource
from cockpit.telemetry.track import TrackWriter

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
