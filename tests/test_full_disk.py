"""A full disk in the middle of a gate run: the run still ends with a verdict (an error that says
what to do, never a traceback), and its end reaches the journal as soon as space returns; if it
does not return, the headless gate says so in one line. In the TUI, a start the journal refuses
leaves no phantom: no running row, no start written later, no child left running."""

from __future__ import annotations

import asyncio
import errno
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from cockpit.cli import main
from cockpit.clock import FakeClock
from cockpit.config import GateConfig
from cockpit.errors import CockpitError
from cockpit.session.journal import read_journal
from cockpit.session.live import LiveSession
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp
from tests.trusted import trust

if TYPE_CHECKING:
    from textual.pilot import Pilot


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "cockpit.toml").write_text(f'[gates.env]\ncommand = ["{sys.executable}", "-c", "print(1)"]\n')
    trust(tmp_path)
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


# The TUI: a gate whose start the journal refuses ------------------------------------------------

def tui_app(ws: Workspace, ref: SessionRef, codes: dict[str, str]) -> CockpitApp:
    """The app with these gates' commands replaced by `python -c code`; its toasts are kept."""
    from tests.test_app import make_app

    gates = {name: GateConfig(command=(sys.executable, "-c", code)) for name, code in codes.items()}
    return make_app(ws, ref, FakeClock(), gates=gates, status_every_s=10**6)


def start_refused(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """While `disk["full"]`, the journal refuses a gate's start as a full disk does; the session
    keeps the refused event and retries it with the next write, as it does for any event."""
    from cockpit.session.journal import JournalWriter

    real = JournalWriter.append
    disk = {"full": True}

    def append(self: JournalWriter, event: dict) -> None:
        if disk["full"] and event["type"] == "gate_started":
            raise CockpitError(f"{self.path}: journal write failed ({errno.errorcode[errno.ENOSPC]}); "
                               "free disk space or fix permissions — the cockpit keeps the event and retries")
        real(self, event)

    monkeypatch.setattr(JournalWriter, "append", append)
    return disk


def spawned(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """Every gate child the app starts, to see whether it was stopped."""
    from cockpit.gates.process import GateProcess

    real, children = GateProcess.spawn, []

    def spawn(self: GateProcess) -> int:
        pid = real(self)
        children.append(self._proc)
        return pid

    monkeypatch.setattr(GateProcess, "spawn", spawn)
    return children


async def finished(app: CockpitApp, pilot: Pilot) -> None:  # type: ignore[type-arg]
    from tests.test_app_gates import finished

    await finished(app, pilot)


def gate_runs(ref: SessionRef) -> list[tuple[str, str]]:
    return [(e["type"], e["run_id"]) for e in read_journal(ref.journal).events if e["type"].startswith("gate_")]


async def test_a_gate_start_the_journal_refuses_leaves_no_phantom_run(
        ws: Workspace, session: SessionRef, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hold = tmp_path / "hold"  # while it exists the child sleeps: one left running would still be there
    app = tui_app(ws, session, {"env": f"import os, time\nprint('probed')\n"
                                       f"if os.path.exists({str(hold)!r}): time.sleep(60)"})
    children = spawned(monkeypatch)
    async with app.run_test(size=(150, 44)) as pilot:
        await pilot.press("r")
        await finished(app, pilot)  # 001-env passed: the last run the journal holds
        hold.touch()
        disk = start_refused(monkeypatch)
        await pilot.press("r")
        await pilot.pause()
        assert app.gates.run is None and app.gates.queue == []
        row = app.gates.rows()[0]
        assert (row.name, row.state) == ("env", "pass")  # not "running"
        assert "env gate" not in app.status_line()
        head = str(app.gate_detail.query_one("#gate-head").render())
        assert app.gate_detail.run_id == "001-env" and head.startswith("✓ PASS") and "running" not in head
        [refused] = [t for t in app.toasts if "ENOSPC" in t]
        assert "journal write failed" in refused and "\n" not in refused
        assert await asyncio.to_thread(children[-1].wait, 10) == -signal.SIGTERM  # killed, not left running
        assert gate_runs(session) == [("gate_started", "001-env"), ("gate_finished", "001-env")]

        disk["full"] = False  # space again: the next run is recorded, and only it
        hold.unlink()
        await pilot.press("r")
        await finished(app, pilot)
        assert app.gates.run is None and app.gates.rows()[0].state == "pass"
        assert app.gate_detail.run_id == "003-env"  # 002's log was taken by the refused one
    assert gate_runs(session) == [("gate_started", "001-env"), ("gate_finished", "001-env"),
                                  ("gate_started", "003-env"), ("gate_finished", "003-env")]


async def test_gates_queued_behind_a_refused_start_are_not_left_waiting_for_ever(
        ws: Workspace, session: SessionRef, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    go = tmp_path / "go"  # env holds until build and correctness are queued behind it
    app = tui_app(ws, session, {"env": f"import os, time\nwhile not os.path.exists({str(go)!r}): time.sleep(0.01)",
                                "build": "print('built')", "correctness": "print('close enough')"})
    async with app.run_test(size=(150, 44)) as pilot:
        await pilot.press("r", "down", "r", "down", "r")
        assert app.gates.queue == ["build", "correctness"]
        start_refused(monkeypatch)
        go.touch()
        await finished(app, pilot)  # env ends; build's start is refused
        assert app.gates.run is None and app.gates.queue == []
        states = {r.name: r.state for r in app.gates.rows()}
        assert (states["env"], states["build"], states["correctness"]) == ("pass", "never", "never")
        assert any("ENOSPC" in t for t in app.toasts)
        assert any("correctness" in t and "queue" in t for t in app.toasts)  # said, not silently gone
    assert gate_runs(session) == [("gate_started", "001-env"), ("gate_finished", "001-env")]
