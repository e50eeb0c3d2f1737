"""A gate's start cannot crash the cockpit nor leave a run that never was. A NUL byte in a gate's
command (cockpit.toml `[gates.env] command = "...\\u0000"`) is one line naming cockpit.toml and
the gate, found when the config is read, and at the latest when the gate starts; it never ends
the TUI. A gate whose child could not start, on a disk so full the journal refuses even its start,
leaves nothing to be written once space returns, and REPORT.md lists no run that never started."""

from __future__ import annotations

import errno
import sys
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import ConfigError, load_config
from cockpit.errors import CockpitError
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace
from tests.trusted import trust

from .conftest import T0
from .test_full_disk import finished, gate_runs, start_refused, tui_app

NUL_COMMANDS = {
    "argv": f'[gates.env]\ncommand = ["{sys.executable}", "-c", "print(1)\\u0000"]\n',
    "shell": '[gates.env]\nshell = true\ncommand = "echo \\u0000 done"\n',
}


def one_line(message: str) -> str:
    assert "\n" not in message.strip() and "Traceback" not in message, message
    return message


@pytest.mark.parametrize("form", NUL_COMMANDS)
def test_a_nul_in_a_gate_s_command_is_refused_when_the_config_is_read(tmp_path: Path, form: str) -> None:
    (tmp_path / "cockpit.toml").write_text(NUL_COMMANDS[form])
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    message = one_line(str(refused.value))
    assert "cockpit.toml:" in message and "gates.env.command" in message and "NUL" in message


def test_a_nul_in_the_gates_python_is_refused_when_the_config_is_read(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text('[gates]\npython = "/usr/bin/py\\u0000thon"\n')
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert "cockpit.toml:2: gates.python" in one_line(str(refused.value))


def test_cockpit_gate_on_a_nul_command_is_one_line_and_rc_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(tmp_path), "new", "nul"]) == 0
    (tmp_path / "cockpit.toml").write_text(NUL_COMMANDS["argv"])
    capsys.readouterr()
    assert main(["--workspace", str(tmp_path), "gate", "env"]) == 2
    err = capsys.readouterr().err
    assert "cockpit.toml:2: gates.env.command: argument 3 holds a NUL byte" in one_line(err)


async def test_a_nul_edited_into_cockpit_toml_while_the_tui_runs_is_a_toast(
        ws: Workspace, session: SessionRef) -> None:
    app = tui_app(ws, session, {"env": "print('probed')"})
    async with app.run_test(size=(150, 44)) as pilot:
        (ws.root / "cockpit.toml").write_text(NUL_COMMANDS["argv"])
        await pilot.press("r")
        await finished(app, pilot)
        [said] = [t for t in app.toasts if "NUL" in t]  # type: ignore[attr-defined]
        assert "gates.env.command" in one_line(said) and "runs with the config loaded before" in said
        assert app.is_running and app.gates.rows()[0].state == "pass"  # the config it had


async def test_a_nul_that_reaches_a_gate_s_start_is_its_error_not_a_crash(
        ws: Workspace, session: SessionRef) -> None:
    """A NUL the config reader did not see (here: put into the loaded config) ends the run as an
    error that says so; the TUI goes on."""
    app = tui_app(ws, session, {"env": "print(1)\0"})
    async with app.run_test(size=(150, 44)) as pilot:
        await pilot.press("r")
        await finished(app, pilot)
        row = app.gates.rows()[0]
        assert app.is_running and row.state == "error"
        assert "env: argument 3 of its command holds a NUL byte" in one_line(row.summary)
    assert gate_runs(session) == [("gate_started", "001-env"), ("gate_finished", "001-env")]


# A child that cannot start on a full disk -------------------------------------------------------

def no_log_on_a_full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate's log cannot be created, as on a full disk: its child never starts."""
    from cockpit.gates.process import GateProcess

    def spawn(self: GateProcess) -> int:
        raise CockpitError(f"{self.log_path}: cannot create ({errno.errorcode[errno.ENOSPC]})")

    monkeypatch.setattr(GateProcess, "spawn", spawn)


async def test_a_gate_that_could_not_start_on_a_full_disk_leaves_no_phantom_run(
        ws: Workspace, session: SessionRef, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    app = tui_app(ws, session, {"env": "print('probed')"})
    async with app.run_test(size=(150, 44)) as pilot:
        with monkeypatch.context() as full:
            disk = start_refused(full)
            no_log_on_a_full_disk(full)
            await pilot.press("r")
            await pilot.pause()
            assert app.gates.run is None
            [said] = [t for t in app.toasts if "ENOSPC" in t]  # type: ignore[attr-defined]
            assert "did not start either" in one_line(said)
            disk["full"] = False
        await pilot.press("r")  # space again: the next run is journaled, and only it
        await finished(app, pilot)
    runs = gate_runs(session)
    assert runs == [("gate_started", "002-env"), ("gate_finished", "002-env")], runs
    capsys.readouterr()
    assert main(["--workspace", str(ws.root), "export", "--format", "md"]) == 0
    report = (session.path / "REPORT.md").read_text()
    assert "001-env" not in report and "interrupted" not in report.lower()


def test_report_md_lists_no_run_that_never_started(ws: Workspace, session: SessionRef,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A journal written by a cockpit from before: the refused start landed later, with no child
    (pid 0) and no finish. It never ran; the report says nothing of it."""
    journal = JournalWriter(session.journal)
    journal.append(ev.gate_started(T0 + 100, "001-env", "env", ("python",), "logs/001-env.log", 0))
    journal.append(ev.gate_started(T0 + 110, "002-env", "env", ("python",), "logs/002-env.log", 4242))
    journal.append(ev.gate_finished(T0 + 120, "002-env", "env", "pass", "ok", 10.0, 0, "logs/002-env.log", {}))
    journal.close()
    assert main(["--workspace", str(ws.root), "export", "--format", "md"]) == 0
    capsys.readouterr()
    report = (session.path / "REPORT.md").read_text()
    assert "002-env" in report
    assert "001-env" not in report and "interrupted" not in report.lower()


def test_a_refused_start_is_withdrawn_from_what_the_session_keeps_to_write(
        ws: Workspace, session: SessionRef, monkeypatch: pytest.MonkeyPatch) -> None:
    """Headless too: `cockpit gate` on that disk is one line, and nothing waits to be written."""
    from cockpit.session.live import LiveSession

    (ws.root / "cockpit.toml").write_text(f'[gates.env]\ncommand = ["{sys.executable}", "-c", "print(1)"]\n')
    trust(ws.root)  # the test's own: its command may run
    kept: list[LiveSession] = []
    real_init = LiveSession.__init__

    def init(self: LiveSession, ref: SessionRef) -> None:
        real_init(self, ref)
        kept.append(self)

    monkeypatch.setattr(LiveSession, "__init__", init)
    start_refused(monkeypatch)
    no_log_on_a_full_disk(monkeypatch)
    with pytest.raises(CockpitError) as refused:
        main_raising(ws)
    assert "ENOSPC" in one_line(str(refused.value)) and "did not start either" in str(refused.value)
    assert kept and all(live.unsaved == 0 for live in kept)
    assert gate_runs(session) == []


def main_raising(ws: Workspace) -> None:
    from cockpit.cli.gate import gate
    from cockpit.cli.parser import build_parser

    gate(build_parser().parse_args(["--workspace", str(ws.root), "gate", "env"]))
