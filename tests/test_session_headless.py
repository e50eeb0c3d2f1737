"""A session run from a plain shell, as on a box where the TUI cannot open: the phase timer moves
with `cockpit phase`, the telemetry track is kept by `cockpit telemetry track` until the session
ends, and `cockpit end` writes the report, which has the track's chart and phases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cockpit.clock import FakeClock
from cockpit.telemetry.recording import ReplaySampler
from cockpit.telemetry.session_track import keep_track
from cockpit.telemetry.track import TRACK_NAME, TrackWriter, read_track

REPO = Path(__file__).resolve().parent.parent
LOADED = REPO / "tests" / "fixtures" / "telemetry" / "loaded-h200.jsonl"


def cockpit(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), *args], capture_output=True,
                          text=True, timeout=120)


def test_a_shell_session_moves_through_its_phases_and_ends_with_a_report(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text((REPO / "cockpit.toml").read_text())
    sid = cockpit(tmp_path, "new", "tile sizes, from a shell").stdout.split()[0]
    assert cockpit(tmp_path, "phase", "next").stdout.strip() == f"{sid}: Baseline"
    assert cockpit(tmp_path, "phase", "fix").stdout.strip() == f"{sid}: Fix"
    assert cockpit(tmp_path, "phase", "pause").stdout.strip() == f"{sid}: paused, Fix"
    assert "PAUSED" in cockpit(tmp_path, "status").stdout
    assert cockpit(tmp_path, "phase", "pause").stdout.strip() == f"{sid}: Fix"
    wrong = cockpit(tmp_path, "phase", "tuning")
    assert wrong.returncode == 2 and wrong.stderr.strip() == (
        "cockpit: 'tuning' is not a move or a phase of this session (next, skip, pause, or one of: "
        "Environment, Baseline, Profile, Fix, Evaluate, Document)")
    ended = cockpit(tmp_path, "end", "--reason", "tile sizes done")
    assert ended.returncode == 0 and ended.stdout.splitlines()[0] == f"{sid}: ended"
    report = json.loads((tmp_path / "sessions" / sid / "report.json").read_text())
    assert [p["name"] for p in report["phases"]][:4] == ["Environment", "Baseline", "Profile", "Fix"]
    assert cockpit(tmp_path, "phase", "next").returncode == 2  # nothing open any more


def test_the_headless_track_writes_the_tuis_rows_until_the_session_ends(tmp_path: Path) -> None:
    clock = FakeClock(1_700_000_000.0)
    source = ReplaySampler.from_path(LOADED, clock)
    checks: list[float] = []

    def still_open() -> bool:
        checks.append(clock.now())
        return clock.now() < 1_700_000_000.0 + 60

    def sleep(seconds: float) -> None:
        clock.advance(max(seconds, 0.0))

    writer = TrackWriter(tmp_path / TRACK_NAME)
    ticks = keep_track(source, writer, still_open, clock.now, sleep)
    assert 60 <= ticks <= 66 and checks  # once a second, stopped soon after the session ended
    track = read_track(tmp_path / TRACK_NAME)
    assert len(track.rows) >= 12 and not track.problems  # one row per GPU every 5 s
    assert track.gpus and all(r.uuid for r in track.rows)
