"""The session's telemetry track: the TUI's 1 Hz snapshots of a real H200 folded into a row per
GPU every 5 s, appended like the journal, and read back whatever a crash left in the file."""

from __future__ import annotations

from pathlib import Path

from cockpit.telemetry.recording import read_recording
from cockpit.telemetry.track import TrackWriter, read_track

LOADED = Path(__file__).parent / "fixtures" / "telemetry" / "loaded-h200.jsonl"


def test_a_loaded_h200_leaves_one_averaged_row_per_five_seconds(tmp_path: Path) -> None:
    snapshots = read_recording(LOADED).snapshots
    path = tmp_path / "telemetry.jsonl"
    writer = TrackWriter(path, every_s=5.0)
    wrote = [writer.offer(s) for s in snapshots]
    writer.close()
    track = read_track(path)
    assert track.problems == ()
    span = snapshots[-1].t - snapshots[0].t
    assert len(track.rows) == writer.rows_written and span / 5 - 1 <= len(track.rows) <= span / 5 + 2
    assert sum(wrote) == len(track.rows) - 1  # the last, partial window is written at close
    assert sum(r.samples for r in track.rows) == len(snapshots)  # every second counted once
    assert {r.uuid for r in track.rows} == {"GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20"}
    # each row is the mean of its window's real samples
    first = track.rows[0]
    window = [s.samples[0] for s in snapshots[:first.samples]]
    assert first.util == round(sum(s.util_gpu for s in window) / len(window), 1)  # type: ignore[misc]
    assert first.t == round(window[-1].t, 3)
    busy = [r for r in track.rows if r.util is not None and r.util > 90]
    assert busy and max(r.power_w or 0 for r in busy) > 400 and "power cap" in {
        e for r in busy for e in r.clock_events}


def test_reopening_appends_and_never_rewrites(tmp_path: Path) -> None:
    snapshots = read_recording(LOADED).snapshots
    path = tmp_path / "telemetry.jsonl"
    first = TrackWriter(path)
    for s in snapshots[:12]:
        first.offer(s)
    first.close()
    before = path.read_bytes()
    second = TrackWriter(path)
    for s in snapshots[12:]:
        second.offer(s)
    second.close()
    assert path.read_bytes().startswith(before)
    assert sum(r.samples for r in read_track(path).rows) == len(snapshots)


def test_a_torn_tail_and_garbage_are_reported_and_the_rest_reads(tmp_path: Path) -> None:
    snapshots = read_recording(LOADED).snapshots
    path = tmp_path / "telemetry.jsonl"
    writer = TrackWriter(path)
    for s in snapshots[:20]:
        writer.offer(s)
    writer.close()
    good = len(read_track(path).rows)
    with path.open("ab") as f:
        f.write(b"\xff\xfe not json\n{\"t\": \"soon\", \"gpu\": 0}\n{\"t\": 1795303300.0, \"gpu\": 0, \"ut")
    track = read_track(path)
    assert len(track.rows) == good
    assert [p.split(": ", 1)[1] for p in track.problems] == [
        "not a telemetry row, skipped", "not a telemetry row, skipped",
        "torn last line (a write was cut off), skipped"]
    assert track.problems[0].startswith(f"{path}:{good + 2}:")  # after the gpus line and the rows
    # the next writer ends the torn line first, so its own rows read whole
    writer = TrackWriter(path)
    for s in snapshots[20:]:
        writer.offer(s)
    writer.close()
    track = read_track(path)
    assert sum(r.samples for r in track.rows) == len(snapshots)
    assert len(track.problems) == 3 and "torn last line" not in track.problems[-1]


def test_no_telemetry_no_file(tmp_path: Path) -> None:
    from cockpit.telemetry.sample import Snapshot

    path = tmp_path / "telemetry.jsonl"
    writer = TrackWriter(path)
    assert not writer.offer(Snapshot(1.0, available=False, reason="no NVIDIA driver"))
    writer.close()
    assert not path.exists() and read_track(path).rows == ()


def test_each_writer_names_its_gpus_first_for_the_report(tmp_path: Path) -> None:
    snapshots = read_recording(LOADED).snapshots
    path = tmp_path / "telemetry.jsonl"
    for part in (snapshots[:10], snapshots[10:]):
        writer = TrackWriter(path)
        for s in part:
            writer.offer(s)
        writer.close()
    track = read_track(path)
    assert track.problems == ()
    [gpu] = track.gpus
    assert (gpu.name, gpu.driver_version, gpu.memory_total_mib) == ("NVIDIA H200", "580.159.04", 143771)
    assert path.read_text().count('"type":"gpus"') == 2
