"""Sessions are committed and cloned: nothing read from a journal reaches outside the workspace,
and export never writes through a session folder that leads out of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.session.journal import read_journal
from cockpit.session.paths import REFUSED, resolve_stored
from cockpit.session.state import fold
from cockpit.session.workspace import SessionRef


@pytest.mark.parametrize("stored", ["../../etc/passwd", "/etc/passwd", "sessions/../../outside.log"])
def test_a_log_path_that_leads_out_of_the_workspace_names_no_file(tmp_path: Path, stored: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "outside.log").write_text("not yours")
    path = resolve_stored(stored, ws)
    assert path.parent == ws / REFUSED and not path.exists()


def test_an_old_absolute_path_is_still_found_by_its_sessions_tail(tmp_path: Path) -> None:
    ws = tmp_path / "clone"
    (ws / "sessions" / "s1" / "logs").mkdir(parents=True)
    assert resolve_stored("/home/other/box/sessions/s1/logs/001-env.log", ws) == (
        ws / "sessions" / "s1" / "logs" / "001-env.log")


def test_a_symlink_out_of_the_workspace_is_not_followed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sessions").mkdir(parents=True)
    (tmp_path / "secret.log").write_text("not yours")
    (ws / "sessions" / "link.log").symlink_to(tmp_path / "secret.log")
    assert resolve_stored("sessions/link.log", ws).parent == ws / REFUSED


def test_a_journal_naming_a_file_outside_folds_to_a_missing_log(session: SessionRef, tmp_path: Path) -> None:
    with session.journal.open("a") as f:
        f.write(json.dumps({"t": 1795000010, "type": "gate_started", "run_id": "001-env", "gate": "env",
                            "argv": ["x"], "log": "../../../etc/passwd", "pid": 1}) + "\n")
    state = fold(read_journal(session.journal).events, tmp_path)
    assert Path(state.gate_runs[0].log).parent == tmp_path / REFUSED


def test_export_refuses_a_session_folder_that_is_a_symlink_out(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert main(["--workspace", str(ws), "new", "first"]) == 0
    [real] = (ws / "sessions").iterdir()
    elsewhere = tmp_path / "elsewhere"
    real.rename(elsewhere)
    (ws / "sessions" / real.name).symlink_to(elsewhere)
    capsys.readouterr()
    assert main(["--workspace", str(ws), "export", real.name]) == 2
    err = capsys.readouterr().err
    assert "is a symlink to" in err and "outside the workspace: refused" in err and err.count("\n") == 1
    assert not (elsewhere / "REPORT.md").exists()
