"""A cloned workspace is someone else's: a symlink in `sessions/` or `patterns/` that leads out of it
is refused in one line, and nothing outside is written, appended to, shown or copied in. Gates,
phase moves, the editor, patterns and export alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.errors import CockpitError
from cockpit.patterns.library import load_patterns
from cockpit.session import logfile
from cockpit.session.inside import OutsideWorkspace


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes: what a test compares before and after."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _workspace(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace with one session (no cockpit.toml: the env gate would run its probe in whatever
    Python there is, and would journal and log that run), and a folder outside it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    assert main(["--workspace", str(ws), "new", "clone of someone's work"]) == 0
    [session] = (ws / "sessions").iterdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    return ws, session, outside


def _one_refusal(err: str, link: str, kind: str) -> None:
    assert err.count("\n") == 1, err
    assert f"{link} is a symlink to " in err and f"outside the workspace: refused; replace it with the {kind} itself" in err


def _cli(ws: Path, session: Path, *argv: str) -> int:
    return main(["--workspace", str(ws), "--session", session.name, *argv])


@pytest.mark.parametrize("argv", [("gate", "env"), ("phase", "next")])
def test_a_session_folder_that_is_a_symlink_out_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           argv: tuple[str, ...]) -> None:
    ws, session, outside = _workspace(tmp_path)
    elsewhere = outside / session.name
    session.rename(elsewhere)
    session.symlink_to(elsewhere)
    before = _tree(outside)
    capsys.readouterr()
    assert _cli(ws, session, *argv) == 2
    _one_refusal(capsys.readouterr().err, f"sessions/{session.name}", "folder")
    assert _tree(outside) == before  # no journal line, no log, no results folder out there


def test_the_latest_session_being_a_symlink_out_is_never_read_nor_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, session, outside = _workspace(tmp_path)
    elsewhere = outside / session.name
    session.rename(elsewhere)
    session.symlink_to(elsewhere)
    before = _tree(outside)
    assert main(["--workspace", str(ws), "gate", "env"]) == 2
    assert main(["--workspace", str(ws), "phase", "next"]) == 2
    assert _tree(outside) == before


@pytest.mark.parametrize("argv", [("gate", "env"), ("phase", "next")])
def test_a_journal_that_is_a_symlink_out_gets_no_event_appended(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str],
                                                                argv: tuple[str, ...]) -> None:
    ws, session, outside = _workspace(tmp_path)
    target = outside / "their.jsonl"
    (session / "journal.jsonl").rename(target)  # a journal that reads as a session, elsewhere
    (session / "journal.jsonl").symlink_to(target)
    before = _tree(outside)
    capsys.readouterr()
    assert _cli(ws, session, *argv) == 2
    _one_refusal(capsys.readouterr().err, f"sessions/{session.name}/journal.jsonl", "file")
    assert _tree(outside) == before
    assert not (session / "logs").exists()  # refused before the gate's log was made


def test_a_logs_folder_that_is_a_symlink_out_gets_no_log(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    ws, session, outside = _workspace(tmp_path)
    (session / "logs").symlink_to(outside, target_is_directory=True)
    journal = (session / "journal.jsonl").read_bytes()
    capsys.readouterr()
    assert _cli(ws, session, "gate", "env") == 2
    _one_refusal(capsys.readouterr().err, f"sessions/{session.name}/logs", "folder")
    assert _tree(outside) == {}  # no log out there
    assert (session / "journal.jsonl").read_bytes() == journal  # and no half-recorded run


def test_the_editor_neither_shows_nor_copies_in_a_session_md_that_is_a_symlink_out(tmp_path: Path) -> None:
    _, session, outside = _workspace(tmp_path)
    secret = outside / "notes.md"
    secret.write_text("someone else's private notes\n")
    (session / "SESSION.md").unlink()
    (session / "SESSION.md").symlink_to(secret)
    with pytest.raises(OutsideWorkspace) as shown:
        logfile.load(session / "SESSION.md")
    _one_refusal(str(shown.value) + "\n", f"sessions/{session.name}/SESSION.md", "file")
    with pytest.raises(OutsideWorkspace):  # an autosave neither writes there nor copies it in
        logfile.save(session / "SESSION.md", "typed here")
    assert not logfile.changed_since(session / "SESSION.md", None)  # not even read to compare
    assert secret.read_text() == "someone else's private notes\n"
    assert (session / "SESSION.md").is_symlink() and _tree(outside) == {"notes.md": secret.read_bytes()}


def test_a_session_md_that_is_a_symlink_out_refuses_the_session(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    ws, session, outside = _workspace(tmp_path)
    secret = outside / "notes.md"
    secret.write_text("someone else's private notes\n")
    (session / "SESSION.md").unlink()
    (session / "SESSION.md").symlink_to(secret)
    capsys.readouterr()
    assert _cli(ws, session, "phase", "next") == 2
    _one_refusal(capsys.readouterr().err, f"sessions/{session.name}/SESSION.md", "file")
    assert _tree(outside) == {"notes.md": b"someone else's private notes\n"}


PATTERN = """---
id: 42
title: Read from elsewhere
status: operational
time_saved_min: 5
---

# 42 · Read from elsewhere
"""


def test_a_pattern_file_that_is_a_symlink_out_is_neither_read_nor_shown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, _, outside = _workspace(tmp_path)
    (outside / "secret.md").write_text(PATTERN)
    (ws / "patterns").mkdir()
    (ws / "patterns" / "42-read-from-elsewhere.md").symlink_to(outside / "secret.md")
    patterns, problems = load_patterns(ws / "patterns")
    assert 42 not in {p.id for p in patterns}
    assert any("patterns/42-read-from-elsewhere.md is a symlink to" in p.message
               and "outside the workspace: refused" in p.message for p in problems)
    capsys.readouterr()
    main(["--workspace", str(ws), "pattern", "show", "42"])
    assert "Read from elsewhere" not in capsys.readouterr().out


def test_a_patterns_folder_that_is_a_symlink_out_takes_no_new_pattern(tmp_path: Path) -> None:
    from cockpit.patterns.library import new_pattern

    ws, _, outside = _workspace(tmp_path)
    (ws / "patterns").symlink_to(outside, target_is_directory=True)
    with pytest.raises(CockpitError, match=r"patterns is a symlink to .*outside the workspace: refused"):
        new_pattern(ws / "patterns", "A title", "A problem.", "When so.", "Do this.", 5)
    assert _tree(outside) == {}


def test_export_names_the_link_it_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, session, outside = _workspace(tmp_path)
    target = outside / "their.jsonl"
    (session / "journal.jsonl").rename(target)
    (session / "journal.jsonl").symlink_to(target)
    capsys.readouterr()
    assert main(["--workspace", str(ws), "export", session.name]) == 2
    _one_refusal(capsys.readouterr().err, f"sessions/{session.name}/journal.jsonl", "file")
    assert not (session / "REPORT.md").exists()


def test_a_symlink_that_stays_inside_the_workspace_is_fine(tmp_path: Path) -> None:
    ws, session, _ = _workspace(tmp_path)
    (ws / "archive").mkdir()
    (session / "SESSION.md").rename(ws / "archive" / "SESSION.md")
    (session / "SESSION.md").symlink_to(ws / "archive" / "SESSION.md")
    assert "Log" in logfile.load(session / "SESSION.md").text
    assert _cli(ws, session, "phase", "next") == 0
    assert json.loads((session / "journal.jsonl").read_text().splitlines()[-1])["type"] == "phase_started"
