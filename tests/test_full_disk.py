"""A full disk in the middle of a gate run: the run still ends with a verdict (an error that says
what to do, never a traceback), and its end reaches the journal as soon as space returns; if it
does not return, the headless gate says so in one line."""

from __future__ import annotations

import errno
import json
import sys
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.errors import CockpitError
from cockpit.session.journal import read_journal
from cockpit.session.live import LiveSession


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "cockpit.toml").write_text(f'[gates.env]\ncommand = ["{sys.executable}", "-c", "print(1)"]\n')
    assert main(["--workspace", str(tmp_path), "new", "full disk"]) == 0
    return tmp_path


def ends(tmp_path: Path) -> list[str]:
    [journal] = tmp_path.glob("sessions/*/journal.jsonl")
    return [e["type"] for e in read_journal(journal).events if e["type"].startswith("gate_")]


def disk_full_for(monkeypatch: pytest.MonkeyPatch, failures: int) -> None:
    """The journal refuses the next `failures` writes of a gate's end, as a full disk does."""
    real = LiveSession.append
    left = [failures]

    def append(self: LiveSession, events: list) -> object:
        if (any(e.get("type") == "gate_finished" for e in events) or (not events and self._pending)) and left[0]:
            left[0] -= 1
            self._pending.extend(events)
            raise CockpitError(f"{self.ref.journal}: cannot append ({errno.errorcode[errno.ENOSPC]})")
        return real(self, events)

    monkeypatch.setattr(LiveSession, "append", append)
    monkeypatch.setattr("cockpit.cli.gate.time.sleep", lambda s: None)


def test_the_end_is_journaled_when_space_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    disk_full_for(monkeypatch, 3)
    capsys.readouterr()
    main(["--workspace", str(ws), "gate", "env", "--json"])
    assert json.loads(capsys.readouterr().out)["run_id"] == "001-env"
    assert ends(ws) == ["gate_started", "gate_finished"]  # once, not once per try


def test_when_space_never_returns_the_gate_says_so_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    disk_full_for(monkeypatch, 1000)
    capsys.readouterr()
    main(["--workspace", str(ws), "gate", "env"])
    err = capsys.readouterr().err
    assert "finished (" in err and "the journal could not record it" in err and "ENOSPC" in err
    assert "Traceback" not in err
    assert ends(ws) == ["gate_started"]


def test_a_verdict_that_cannot_be_written_is_an_error_run_not_a_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)

    def no_space(*args: object, **kwargs: object) -> object:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("cockpit.gates.run.judge_replaced", no_space)
    capsys.readouterr()
    assert main(["--workspace", str(ws), "gate", "env", "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "error" and "No space left on device" in report["summary"]
    assert ends(ws) == ["gate_started", "gate_finished"]


def test_a_new_session_the_disk_cannot_hold_leaves_no_empty_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from cockpit.session.journal import JournalWriter

    def full(self: JournalWriter, event: dict) -> None:
        raise CockpitError(f"{tmp_path}/journal.jsonl: cannot append (No space left on device)")

    monkeypatch.setattr(JournalWriter, "append", full)
    assert main(["--workspace", str(tmp_path), "new", "no room"]) == 2
    assert "the session could not be written" in capsys.readouterr().err
    assert list((tmp_path / "sessions").iterdir()) == []
