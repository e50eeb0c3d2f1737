"""`cockpit screenshot` in an engineer's workspace pictures their latest session, open or ended,
and looking is read-only: not one byte of the session folder changes, no file is added to it,
and no process of the session is touched. `--demo` pictures the demo sessions of `screenshots/`."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.ui.pictures.screenshot import DEFAULT_REPLAY

SIZE = "120x36"


@pytest.fixture
def kernels(tmp_path: Path) -> Path:
    """The engineer's kernel repository, the workspace."""
    (tmp_path / "kernels").mkdir()
    return tmp_path / "kernels"


def cockpit(ws: Path, *args: str) -> int:
    return main(["--workspace", str(ws), *args])


def new(ws: Path, objective: str, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    """`cockpit new OBJECTIVE`, as the engineer types it; the new session's id."""
    assert cockpit(ws, "new", objective, "--json", *extra) == 0
    return str(json.loads(capsys.readouterr().out)["id"])


def folder_state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under `folder`: its content's hash and its modification time."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def screen_text(svg: Path) -> str:
    return svg.read_text(encoding="utf-8").replace("&#160;", " ")


def test_a_screenshot_in_a_workspace_shows_its_open_session_and_changes_nothing(
        kernels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, shots = kernels, tmp_path / "shots"
    new(ws, "Tile the softmax over rows", capsys)
    assert cockpit(ws, "phase", "next") == 0
    capsys.readouterr()
    before = folder_state(ws)
    assert "SESSION.md" in " ".join(before) and "journal.jsonl" in " ".join(before)

    assert cockpit(ws, "screenshot", "--out", str(shots), "--size", SIZE) == 0

    assert capsys.readouterr().out.split() == [str(shots / "main.svg"), str(shots / "new-session.svg")]
    main_svg = screen_text(shots / "main.svg")
    assert "Tile the softmax" in main_svg and "BASELINE" in main_svg  # theirs, in its second phase
    assert "Vectorize K loads" not in main_svg and "build-loop" not in main_svg  # not a demo's
    assert "No GPU telemetry: not drawn (see --replay)" in main_svg  # no H200 that is not theirs
    # no app_opened/app_closed, no telemetry.jsonl, no status.txt, SESSION.md as it was
    assert folder_state(ws) == before


def test_the_newest_session_is_shown_even_ended_and_session_picks_another(
        kernels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, shots = kernels, tmp_path / "shots"
    older = new(ws, "Tile the softmax over rows", capsys)
    newer = new(ws, "Fuse the bias add", capsys, "--force")
    assert cockpit(ws, "end", "--session", newer) == 0
    before = folder_state(ws)

    assert cockpit(ws, "screenshot", "--out", str(shots), "--size", SIZE) == 0
    shown = screen_text(shots / "main.svg")
    assert "Fuse the bias add" in shown and "Tile the softmax" not in shown

    assert cockpit(ws, "screenshot", "--session", older, "--out", str(shots), "--size", SIZE) == 0
    shown = screen_text(shots / "main.svg")
    assert "Tile the softmax" in shown and "Fuse the bias add" not in shown
    assert folder_state(ws) == before


def test_a_workspace_with_no_session_says_what_to_do_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shots = tmp_path / "shots"
    assert cockpit(tmp_path, "screenshot", "--out", str(shots)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no session in {tmp_path}" in err
    assert 'cockpit new "OBJECTIVE"' in err and "--demo" in err
    assert not shots.exists()


def test_demo_shows_the_demo_sessions_not_the_workspaces(
        kernels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, shots = kernels, tmp_path / "shots"
    new(ws, "Tile the softmax over rows", capsys)
    before = folder_state(ws)
    assert cockpit(ws, "screenshot", "--demo", "--out", str(shots), "--size", SIZE) == 0
    main_svg = screen_text(shots / "main.svg")
    assert "build-loop" in main_svg and "H200" in main_svg  # the recorded session, its GPU
    assert "Tile the softmax" not in main_svg
    assert {p.name for p in shots.iterdir()} == {
        "main.svg", "main-80x24.svg", "main-120x40.svg", "main-160x48.svg", "bench.svg", "profile.svg",
        "build-running.svg", "editor.svg", "patterns.svg", "history.svg", "new-session.svg"}
    for size in ("80x24", "120x40", "160x48"):  # a bench result, the env result and a build running
        busy = screen_text(shots / f"main-{size}.svg")
        assert "0.65x" in busy and "3 warnings" in busy and "~0:26" in busy, size  # ETA: the last build
    assert folder_state(ws) == before


def test_demo_and_a_session_together_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as usage:
        cockpit(tmp_path, "screenshot", "--demo", "--session", "latest")
    assert usage.value.code == 2


def test_replay_draws_the_gpu_panel_of_a_session_from_a_recording(
        kernels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, shots = kernels, tmp_path / "shots"
    new(ws, "Tile the softmax over rows", capsys)
    assert cockpit(ws, "screenshot", "--replay", str(DEFAULT_REPLAY), "--out", str(shots),
                   "--size", SIZE) == 0
    main_svg = screen_text(shots / "main.svg")
    assert "H200" in main_svg and "No GPU telemetry" not in main_svg
    assert cockpit(ws, "screenshot", "--replay", str(tmp_path / "none.jsonl"), "--out", str(shots)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none.jsonl: no such file" in err


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_screenshot_never_stops_a_gate_a_killed_cockpit_left_running(
        kernels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cockpit.gates.process import process_start
    from cockpit.session import events as ev
    from cockpit.session.journal import JournalWriter

    ws, shots = kernels, tmp_path / "shots"
    session = ws / "sessions" / new(ws, "Tile the softmax over rows", capsys)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    bench = subprocess.Popen(["sleep", "120"], start_new_session=True)  # the orphan, under PID 1
    try:
        writer = JournalWriter(session / "journal.jsonl")
        writer.append(ev.gate_started(1.0, "001-bench", "bench", ("sleep", "120"), "l", bench.pid,
                                      int(gone.stdout), process_start(bench.pid)))
        writer.close()
        before = folder_state(ws)
        assert cockpit(ws, "screenshot", "--out", str(shots), "--size", SIZE) == 0
        assert bench.poll() is None  # opening the session for real would have stopped it
        assert folder_state(ws) == before
    finally:
        bench.kill()
        bench.wait()
