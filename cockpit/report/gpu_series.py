"""The GPUs' telemetry a report charts: the session's track (its newest rows when it is big), with
the gaps the TUI was not running for filled by the NVML samples a headless bench or correctness
probe keeps in its result file. Reading only; whatever is unreadable becomes a line in `problems`.
"""

from __future__ import annotations

import json
from pathlib import Path

from cockpit.files import RefusedFile, read_file, read_tail, size_words
from cockpit.report.model import Series
from cockpit.report.text import clean_line, decode
from cockpit.session.inside import OutsideWorkspace, confine_session_path
from cockpit.session.paths import stored_path
from cockpit.session.results import MAX_RESULT_BYTES
from cockpit.session.state import GateRunRecord, SessionState
from cockpit.session.workspace import SessionRef
from cockpit.telemetry.probe_samples import probe_snapshots
from cockpit.telemetry.track import TRACK_NAME, Track, TrackRow, downsample, parse_track

WATCHED_GATES = ("bench", "correctness")
"""Gates whose probe keeps its own NVML samples (results/<run>.json `gpu_samples`)."""
TRACK_READ_BYTES = 64 << 20
"""The telemetry a report charts, the newest: a week of 8 GPUs, a row each per 5 s, is ~200 MB."""



def read_track(ref: SessionRef, problems: list[str]) -> Track:
    """The session's telemetry track; of a track over TRACK_READ_BYTES, its newest rows."""
    path = ref.path / TRACK_NAME
    try:
        data, size = read_tail(confine_session_path(path), TRACK_READ_BYTES)
    except FileNotFoundError:
        return Track(())
    except OutsideWorkspace as exc:
        problems.append(str(exc))
        return Track(())
    except OSError as exc:
        problems.append(f"{stored_path(path, ref.workspace)}: cannot read ({exc.strerror})")
        return Track(())
    if size > len(data):
        data = data.partition(b"\n")[2]  # the first row, cut in two
        problems.append(f"{stored_path(path, ref.workspace)}: {size_words(size)}, over the "
                        f"{size_words(TRACK_READ_BYTES)} a report charts: its newest rows are charted")
    track = parse_track(data.split(b"\n"), Path(stored_path(path, ref.workspace)))
    problems.extend(track.problems)
    return track


def gate_rows(ref: SessionRef, run: GateRunRecord, problems: list[str]) -> list[TrackRow]:
    """A headless gate's own NVML samples (the probe's result file), as track rows."""
    path = ref.path / "results" / f"{run.run_id}.json"
    try:
        data = json.loads(decode(read_file(confine_session_path(path), MAX_RESULT_BYTES,
                                           "a gate's result may be")))
    except FileNotFoundError:
        return []
    except OutsideWorkspace as exc:
        problems.append(str(exc))
        return []
    except RefusedFile as exc:
        problems.append(f"{stored_path(path, ref.workspace)} is {exc.strerror}")
        return []
    except (OSError, ValueError):
        problems.append(f"{stored_path(path, ref.workspace)}: not a readable probe result, its "
                        "GPU samples are left out")
        return []
    samples = data.get("gpu_samples") if isinstance(data, dict) else None
    if not isinstance(samples, list) or not samples:
        return []
    try:
        return downsample(probe_snapshots(samples))
    except (KeyError, TypeError, ValueError):
        problems.append(f"{stored_path(path, ref.workspace)}: GPU samples not understood, left out")
        return []


def series(ref: SessionRef, state: SessionState, track: Track, problems: list[str]) -> tuple[Series, ...]:
    """Each GPU over the session: the TUI's track, with gaps filled by headless gates' samples."""
    rows = list(track.rows)
    covered = [r.t for r in rows]
    sources: dict[int, list[str]] = {}
    for r in rows:
        sources.setdefault(r.gpu, ["cockpit"])
    for run in state.gate_runs:
        if not _fills_a_gap(run, covered):
            continue  # the cockpit's own track already covers this run
        extra = [r for r in gate_rows(ref, run, problems) if not _near(covered, r.t)]
        rows += extra
        _name_source(sources, run.run_id, extra)
    rows.sort(key=lambda r: (r.gpu, r.t))
    return _per_gpu(rows, sources)


def _fills_a_gap(run: GateRunRecord, covered: list[float]) -> bool:
    """A finished bench or correctness run whose start or end the cockpit's track has no row near:
    its probe's own samples fill what the track missed."""
    if run.gate not in WATCHED_GATES or not run.finished:
        return False
    return not (_near(covered, run.started_t) and _near(covered, run.finished_t or run.started_t))


def _name_source(sources: dict[int, list[str]], run_id: str, extra: list[TrackRow]) -> None:
    """The run among the sources of each GPU it added rows for, once."""
    for r in extra:
        if run_id not in sources.setdefault(r.gpu, []):
            sources[r.gpu].append(run_id)


def _per_gpu(rows: list[TrackRow], sources: dict[int, list[str]]) -> tuple[Series, ...]:
    """The rows, sorted by GPU and time, as one series per GPU in GPU order."""
    return tuple(_gpu_series(gpu, [r for r in rows if r.gpu == gpu], sources[gpu])
                 for gpu in sorted({r.gpu for r in rows}))


def _gpu_series(gpu: int, mine: list[TrackRow], sources: list[str]) -> Series:
    """One GPU's rows, in time order, as the report's columns of utilization, power, temperature
    and SM clock."""
    return Series(gpu, next((r.uuid for r in mine if r.uuid), None), tuple(r.t for r in mine),
                  tuple(r.util for r in mine), tuple(r.power_w for r in mine),
                  tuple(r.temp_c for r in mine), tuple(r.sm_clock_mhz for r in mine),
                  tuple(clean_line(s) for s in sources))


def _near(sorted_ts: list[float], t: float, within: float = 10.0) -> bool:
    """Whether the track has a row within `within` seconds of t."""
    from bisect import bisect_left

    i = bisect_left(sorted_ts, t)
    return any(0 <= j < len(sorted_ts) and abs(sorted_ts[j] - t) <= within for j in (i - 1, i))
