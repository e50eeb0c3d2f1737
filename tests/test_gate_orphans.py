"""`kill -9` of a cockpit leaves its gate's processes running under PID 1; the next cockpit on the
session stops them and journals the run as interrupted. Another cockpit's live gate is shown
running, never interrupted, and never touched. A journal line alone never gets a process signalled:
the OS must show the run's mark in the process's environment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.clock import FakeClock
from cockpit.gates.mark import ENV as MARK_ENV
from cockpit.gates.mark import seal
from cockpit.gates.orphans import orphans, reap, running_elsewhere
from cockpit.gates.process import pid_alive, process_start
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter, read_journal
from cockpit.session.state import fold
from cockpit.session.workspace import SessionRef, Workspace, list_sessions
from tests.test_app import make_app
from tests.trusted import trust

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")


def _until(check, timeout_s: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _gone_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    return int(done.stdout)


TOKEN = "0123456789abcdef0123456789abcdef"


def _group_child(token: str | None = TOKEN) -> subprocess.Popen[bytes]:
    """A gate's child as the cockpit starts one: leading its group, marked (or not) in its environment."""
    env = {k: v for k, v in os.environ.items() if k != MARK_ENV}
    return subprocess.Popen(["sleep", "120"], start_new_session=True,
                            env={**env, MARK_ENV: token} if token else env)


def _journal_run(ref: SessionRef, t: float, pid: int, owner: int, mark: str | None = None) -> None:
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(t, "001-bench", "bench", ("sleep", "120"), f"sessions/{ref.id}/logs/001-bench.log",
                                  pid, owner,
                                  process_start(pid), mark or seal(TOKEN)))
    writer.close()


def test_a_killed_cockpits_gate_is_stopped_and_journaled_when_the_session_opens_again(
        session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    child = _group_child()
    try:
        _journal_run(session, clock.now(), child.pid, _gone_pid())
        state = fold(read_journal(session.journal).events, ws.root)
        assert [r.run_id for r in orphans(state)] == ["001-bench"]
        events, told = reap(state, clock.now, ws.root)
        assert child.wait(timeout=10) == -signal.SIGTERM
        assert events[0]["status"] == "interrupted" and "was gone" in told[0]
        assert events[0]["log"] == f"sessions/{session.id}/logs/001-bench.log"  # as stored: committed, cloned
    finally:
        child.kill()


def test_a_reused_pid_is_never_signalled(session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    child = _group_child()
    try:
        writer = JournalWriter(session.journal)
        writer.append(ev.gate_started(clock.now(), "001-bench", "bench", ("x",), "l", child.pid, _gone_pid(),
                                      (process_start(child.pid) or 0) - 1000))  # another process's start
        writer.close()
        state = fold(read_journal(session.journal).events, ws.root)
        assert orphans(state) == [] and reap(state, clock.now, ws.root) == ([], [])
        assert child.poll() is None
    finally:
        child.kill()


async def test_another_cockpits_live_gate_shows_running_and_is_left_alone(
        session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    child = _group_child()
    try:
        _journal_run(session, clock.now(), child.pid, os.getppid())  # an owner that is alive
        state = fold(read_journal(session.journal).events, ws.root)
        assert running_elsewhere(state.gate_runs[0]) and orphans(state) == []
        app = make_app(ws, session, clock, status_every_s=10**6)
        async with app.run_test(size=(140, 40)):
            row = next(r for r in app.gates.rows() if r.name == "bench")
            assert row.state == "running" and f"another cockpit (pid {os.getppid()})" in row.summary
        assert child.poll() is None
    finally:
        child.kill()


def test_kill_9_of_a_headless_gate_then_the_next_gate_stops_what_it_left(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "cockpit.toml").write_text('[gates.env]\ncommand = ["sleep", "120"]\n[gates.build]\ncommand = ["true"]\n')
    trust(ws)
    cockpit = [sys.executable, "-m", "cockpit", "--workspace", str(ws)]
    subprocess.run([*cockpit, "new", "orphans"], check=True, capture_output=True)
    journal = next((ws / "sessions").glob("*/journal.jsonl"))
    first = subprocess.Popen([*cockpit, "gate", "env"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def started() -> dict | None:
        return next((e for e in map(json.loads, journal.read_text().splitlines())
                     if e["type"] == "gate_started" and e.get("pid")), None)

    _until(lambda: started() is not None)
    gate_pid = started()["pid"]  # type: ignore[index]
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert pid_alive(gate_pid)  # left running under PID 1
    done = subprocess.run([*cockpit, "gate", "build"], capture_output=True, text=True, timeout=60)
    assert "was gone" in done.stderr
    _until(lambda: process_start(gate_pid) is None)
    ends = [e for e in map(json.loads, journal.read_text().splitlines()) if e["type"] == "gate_finished"]
    assert (ends[0]["run_id"], ends[0]["status"]) == ("001-env", "interrupted")


def test_a_journal_naming_a_process_that_is_not_ours_gets_nothing_signalled(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "cockpit.toml").write_text('[gates.env]\ncommand = ["true"]\n')
    trust(ws)  # its commands are trusted; its committed journal is still someone else's
    assert main(["--workspace", str(ws), "new", "hostile"]) == 0
    [ref] = list_sessions(Workspace(ws.resolve()))
    victim = _group_child(token=None)  # someone's process group leader, with its real pid and start
    try:
        with ref.journal.open("a") as f:  # a committed journal's crafted line, four guesses of the mark
            for n, guess in enumerate(("", "0" * 64, seal(""), seal(TOKEN)), 1):
                f.write(json.dumps({"t": 1795000010, "type": "gate_started", "run_id": f"00{n}-env", "gate": "env",
                                    "argv": ["sleep"], "log": "l", "pid": victim.pid, "owner": _gone_pid(),
                                    "pid_start": process_start(victim.pid), "mark": guess}) + "\n")
        capsys.readouterr()
        assert main(["--workspace", str(ws), "gate", "env"]) == 0
        assert victim.poll() is None  # still alive: never signalled
        said = [line for line in capsys.readouterr().err.splitlines() if "not signalled" in line]
        assert len(said) == 4 and f"pid {victim.pid} was not signalled: it carries no {MARK_ENV}" in said[-1]
        ends = [e for e in map(json.loads, ref.journal.read_text().splitlines()) if e["type"] == "gate_finished"]
        assert [e["status"] for e in ends[:4]] == ["interrupted"] * 4  # each end journaled, with its reason
        assert all("was not signalled" in e["summary"] and "\n" not in e["summary"] for e in ends[:4])
    finally:
        victim.kill()


def test_a_process_marked_for_another_run_is_left_alone(session: SessionRef, ws: Workspace,
                                                         clock: FakeClock) -> None:
    child = _group_child()
    try:
        _journal_run(session, clock.now(), child.pid, _gone_pid(), mark=seal("another run's token"))
        state = fold(read_journal(session.journal).events, ws.root)
        _, told = reap(state, clock.now, ws.root)
        assert child.poll() is None and "is not this run's" in told[0]
    finally:
        child.kill()
