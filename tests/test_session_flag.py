"""`cockpit --session ID` names the session every verb that works on one works on — the one named,
never the latest in its place — and a verb that works on none refuses it in one line, as it
refuses a session named twice two different ways."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.cli.parser import build_parser
from cockpit.config import Config
from cockpit.patterns.library import read_pattern
from cockpit.session.workspace import SessionRef, Workspace, create_session, has_ended
from tests.test_workload import SCALE, workspace
from tests.trusted import trust

T = 1_795_300_000.0


@pytest.fixture
def two(ws: Workspace) -> tuple[SessionRef, SessionRef]:
    """An older and a newer session of the workspace, both open: the latest is the newer."""
    return (create_session(ws, Config(), "tile the softmax", None, T),
            create_session(ws, Config(), "fuse the bias add", None, T + 3600))


def cockpit(ws: Workspace, *argv: str) -> int:
    return main(["--workspace", str(ws.root), *argv])


def events(ref: SessionRef) -> list[str]:
    return [json.loads(line)["type"] for line in ref.journal.read_text().splitlines()]


def one_line(err: str) -> str:
    assert err.count("\n") == 1, err
    return err


def test_export_exports_the_session_named_before_the_verb_not_the_latest(
        ws: Workspace, two: tuple[SessionRef, SessionRef], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    older, _ = two
    out = tmp_path / "older.json"
    assert cockpit(ws, "--session", older.id, "export", "--format", "json", "-o", str(out)) == 0
    assert json.loads(out.read_text())["session"] == older.id
    assert cockpit(ws, "export", "--session", older.id, "--format", "json", "-o", str(out)) == 0
    assert json.loads(out.read_text())["session"] == older.id
    assert cockpit(ws, "--session", older.id, "export", older.id, "--format", "json", "-o", str(out)) == 0


@pytest.mark.parametrize("argv", [
    ("--session", "{older}", "export", "{newer}"),
    ("export", "{newer}", "--session", "{older}"),
    ("--session", "{older}", "export", "--session", "{newer}"),
    ("--session", "{older}", "status", "--session", "{newer}"),
    ("--session", "{older}", "phase", "next", "--session", "latest"),
    ("--session", "{older}", "end", "--session", "{newer}"),
])
def test_two_sessions_named_two_ways_are_refused_in_one_line_and_nothing_moves(
        ws: Workspace, two: tuple[SessionRef, SessionRef], capsys: pytest.CaptureFixture[str],
        argv: tuple[str, ...]) -> None:
    older, newer = two
    journals = {ref.id: ref.journal.read_bytes() for ref in two}
    capsys.readouterr()
    assert cockpit(ws, *(a.format(older=older.id, newer=newer.id) for a in argv)) == 2
    captured = capsys.readouterr()
    assert "each name a session: name it once" in one_line(captured.err) and captured.out == ""
    assert {ref.id: ref.journal.read_bytes() for ref in two} == journals
    assert not list(older.path.glob("report*")) and not list(newer.path.glob("report*"))


def test_status_phase_and_end_work_on_the_session_named_before_the_verb(
        ws: Workspace, two: tuple[SessionRef, SessionRef], capsys: pytest.CaptureFixture[str]) -> None:
    older, newer = two
    newer_before = newer.journal.read_bytes()
    capsys.readouterr()
    assert cockpit(ws, "--session", older.id, "status", "--json") == 0
    assert json.loads(capsys.readouterr().out)["session"] == older.id
    assert cockpit(ws, "--session", older.id, "phase", "next") == 0
    assert events(older)[-2:] == ["phase_ended", "phase_started"]
    assert cockpit(ws, "--session", older.id, "end") == 0
    assert has_ended(older) and not has_ended(newer)
    assert newer.journal.read_bytes() == newer_before


def test_a_gate_is_recorded_in_the_session_named_before_the_verb(
        ws: Workspace, two: tuple[SessionRef, SessionRef], capsys: pytest.CaptureFixture[str]) -> None:
    (ws.root / "cockpit.toml").write_text('[gates.env]\ncommand = "echo checking && exit 0"\nshell = true\n')
    trust(ws.root)  # the test's own: its command may run
    older, newer = two
    assert cockpit(ws, "--session", older.id, "gate", "env") == 0
    assert "gate_finished" in events(older) and "gate_finished" not in events(newer)


def test_tune_plans_its_search_in_the_session_named_before_the_verb(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = Workspace(workspace(tmp_path, SCALE.replace('Knob("VEC", (1, 2, 4, 8))',
                                                     'Knob("VEC", (1, 2, 4, 8), via="kwarg")')))
    older = create_session(ws, Config(), "tile the softmax", None, T)
    create_session(ws, Config(), "fuse the bias add", None, T + 3600)
    capsys.readouterr()
    assert cockpit(ws, "--session", "no-such-session", "tune", "--dry-run", "--arch", "8.9") == 2
    assert "no session 'no-such-session'" in one_line(capsys.readouterr().err)
    assert cockpit(ws, "--session", older.id, "tune", "--dry-run", "--arch", "8.9", "--json") == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert older.id in plan["session_journal"] and older.id in plan["run_dir"]


def test_the_telemetry_track_is_kept_for_the_session_named_before_the_verb(
        ws: Workspace, two: tuple[SessionRef, SessionRef], capsys: pytest.CaptureFixture[str], no_gpu: None) -> None:
    older, _ = two
    capsys.readouterr()
    assert cockpit(ws, "--session", "no-such-session", "telemetry", "track") == 2
    assert "no session 'no-such-session'" in one_line(capsys.readouterr().err)
    assert cockpit(ws, "--session", older.id, "telemetry", "track") == 2  # found; this box has no NVML
    assert "no GPU telemetry" in one_line(capsys.readouterr().err)


def test_a_new_pattern_names_the_session_named_before_the_verb_as_its_evidence(
        ws: Workspace, two: tuple[SessionRef, SessionRef], capsys: pytest.CaptureFixture[str]) -> None:
    older, newer = two
    pattern = ("pattern", "new", "Power cap on the H200", "--problem", "Benches come out suspect.",
               "--when", "A bench is suspect for the cap alone.", "--solution", "Time in settled blocks.")
    capsys.readouterr()
    assert cockpit(ws, *pattern) == 0
    assert read_pattern(Path(capsys.readouterr().out.strip())).evidence == (newer.id,)  # the latest open
    assert cockpit(ws, "--session", older.id, *pattern) == 0
    assert read_pattern(Path(capsys.readouterr().out.strip())).evidence == (older.id,)


def test_screenshots_show_the_session_named_before_the_verb_and_never_with_the_demo(
        ws: Workspace, two: tuple[SessionRef, SessionRef], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    older, _ = two
    shot: list[str | None] = []
    monkeypatch.setattr("cockpit.cli.screenshot.take_screenshots",
                        lambda out, size, workspace, spec, replay: shot.append(spec) or [])
    assert cockpit(ws, "--session", older.id, "screenshot", "--out", str(tmp_path / "shots")) == 0
    assert shot == [older.id]
    capsys.readouterr()
    assert cockpit(ws, "--session", older.id, "screenshot", "--demo") == 2
    assert "--demo shows the demo sessions" in one_line(capsys.readouterr().err)
    assert shot == [older.id]


def test_the_tui_opens_the_session_named(ws: Workspace, two: tuple[SessionRef, SessionRef],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from cockpit.cli.tui import tui_app

    older, _ = two
    opened: list[SessionRef | None] = []
    monkeypatch.setattr("cockpit.cli.tui.CockpitApp", lambda ws, config, ref, **kw: opened.append(ref))
    tui_app(build_parser().parse_args(["--workspace", str(ws.root), "--session", older.id]))
    assert opened == [older]


@pytest.mark.parametrize(("verb", "argv"), [
    ("new", ("new", "another")), ("history", ("history",)), ("gpu", ("gpu",)),
    ("telemetry record", ("telemetry", "record", "--seconds", "1", "-o", "r.jsonl")),
    ("pattern list", ("pattern", "list")), ("pattern show", ("pattern", "show", "1")),
    ("analyze", ("analyze", "ncu.csv")), ("decide", ("decide", "0.5")),
    ("workload show", ("workload", "show")), ("init", ("init", ".")),
])
def test_a_verb_that_works_on_no_session_refuses_one_in_one_line_and_does_nothing(
        ws: Workspace, two: tuple[SessionRef, SessionRef], capsys: pytest.CaptureFixture[str],
        verb: str, argv: tuple[str, ...]) -> None:
    older, _ = two
    before = sorted(p.relative_to(ws.root) for p in ws.root.rglob("*"))
    capsys.readouterr()
    assert cockpit(ws, "--session", older.id, *argv) == 2
    captured = capsys.readouterr()
    assert f"cockpit: {verb} works on no session: drop --session {older.id}" in one_line(captured.err)
    assert captured.out == ""
    assert sorted(p.relative_to(ws.root) for p in ws.root.rglob("*")) == before
