"""Recordings: what a sampler saw, written as JSON lines and read back into the same dataclasses;
replayed through the sampler's own `tick()`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.clock import FakeClock
from cockpit.errors import CockpitError
from cockpit.telemetry.fake import FakeGpu, FakePynvml
from cockpit.telemetry.nvml import Nvml
from cockpit.telemetry.recording import RecordingWriter, ReplaySampler, read_recording
from cockpit.telemetry.sample import Snapshot
from cockpit.telemetry.sampler import Sampler

T0 = 1_795_000_000.0


class Procs:
    def prepare(self) -> None:
        pass

    def describe(self, pid: int) -> tuple[str | None, tuple[int, ...]]:
        return "python3", (4000, 1)

    def keep_only(self, pids: object) -> None:
        pass


def live_ticks(n: int, gpus: list[FakeGpu] | None = None) -> list[Snapshot]:
    lib = FakePynvml(gpus or [FakeGpu(processes=[(4242, 2048)], unsupported={"nvmlDeviceGetMigMode",
                                                                           "nvmlDeviceGetPowerUsage"}),
                              FakeGpu(util_gpu=99, throttle_mask=0x4)])
    lib.gpus[0].errors["nvmlDeviceGetClockInfo"] = 10
    clock = FakeClock(T0)
    sampler = Sampler(Nvml(lib), clock, pcie=True, processes=Procs())
    snaps = []
    for _ in range(n):
        snaps.append(sampler.tick())
        clock.advance(1)
    return snaps


def record(path: Path, snaps: list[Snapshot]) -> None:
    writer = RecordingWriter(path)
    for s in snaps:
        writer.write(s)
    writer.close()


def test_a_recording_reads_back_into_the_same_snapshots(tmp_path: Path) -> None:
    snaps = live_ticks(7)
    path = tmp_path / "rec.jsonl"
    record(path, snaps)
    rec = read_recording(path)
    assert rec.problems == () and rec.available and rec.duration_s == 6.0
    assert rec.gpus == snaps[0].gpus
    expected = [s.__class__(s.t, s.samples, s.gpus, round(s.tick_us, 1), s.available, s.reason, s.slow,
                            s.problems) for s in snaps]
    assert list(rec.snapshots) == expected
    assert rec.snapshots[0].problems[0].field == "SM clock"
    assert rec.snapshots[0].samples[0].processes[0].ancestors == (4000, 1)


def test_the_file_is_one_header_then_one_compact_line_per_tick(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    record(path, live_ticks(3))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["header", "tick", "tick", "tick"]
    assert lines[0]["gpus"][0]["name"] == "NVIDIA H200" and "mig_mode" not in lines[0]["gpus"][0]
    assert "power_w" not in lines[1]["samples"][0]  # None is left out
    assert "processes" not in lines[1]["samples"][1]


def test_a_torn_last_line_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    record(path, live_ticks(4))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # kill -9 in the middle of the last write
    rec = read_recording(path)
    assert len(rec.snapshots) == 3
    assert rec.problems == (f"{path}:5: torn last line (a write was cut off), skipped",)


def test_a_garbage_line_in_the_middle_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    record(path, live_ticks(3))
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines[:2], "{not json\n", *lines[2:]]))
    rec = read_recording(path)
    assert len(rec.snapshots) == 3 and rec.problems == (f"{path}:3: not a telemetry tick, skipped",)


def test_a_file_that_is_not_a_recording_says_how_to_make_one(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text('{"t": 1, "type": "note"}\n')
    with pytest.raises(CockpitError, match="not a cockpit telemetry recording; record one with: "
                                           "cockpit telemetry record"):
        read_recording(path)
    with pytest.raises(CockpitError, match="cannot read the recording"):
        read_recording(tmp_path / "missing.jsonl")


def test_replay_plays_the_ticks_in_order_and_loops_at_the_clock_s_time(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    snaps = live_ticks(3)
    record(path, snaps)
    clock = FakeClock(T0 + 10_000)
    replay = ReplaySampler.from_path(path, clock)
    seen = []
    for _ in range(7):
        snap = replay.tick()
        assert snap.t == clock.now() and snap.samples[0].t == clock.now()
        seen.append((snap.slow, clock.now() - snap.samples[0].slow_t))
        clock.advance(1)
    # Frames 0, 1, 2, 0, 1, 2, 0: the slow lane ran on frame 0; later frames keep its age.
    assert seen == [(True, 0.0), (False, 1.0), (False, 2.0)] * 2 + [(True, 0.0)]
    assert replay.gpus == snaps[0].gpus


def test_replay_without_loop_ends_as_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    record(path, live_ticks(2))
    replay = ReplaySampler.from_path(path, FakeClock(), loop=False)
    assert replay.tick().available and replay.tick().available
    end = replay.tick()
    assert not end.available and end.reason == "rec.jsonl: the recording has no more samples"


def test_a_recording_made_without_nvml_replays_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "none.jsonl"
    record(path, [Snapshot(T0, available=False, reason="NVML library not found (no NVIDIA driver on this machine)")])
    snap = ReplaySampler.from_path(path, FakeClock()).tick()
    assert not snap.available and snap.reason == "NVML library not found (no NVIDIA driver on this machine)"
