"""Gate children a killed cockpit left running, and gates another cockpit is running now.

A gate's child leads its own process group (gates/process.py), so a `kill -9` of the TUI leaves
it running under PID 1: a benchmark holding the GPU, a build holding the CPUs, writing its log
with no one to keep it to `[gates] log_max_mb`. The next cockpit that opens the session stops
it: a run with no finish whose owner (the cockpit that started it) is gone, whose child is still
the process it started (the start time the journal keeps, so a reused pid is never signalled),
has its process group sent SIGTERM, then SIGKILL, and its end journaled as interrupted. The
journal is input from whoever committed it, so nothing is signalled on its word: the OS must
confirm, before each signal, that the group's leader carries the run's mark (gates/mark.py);
where it does not, the run's end is journaled with the one line saying why it was left alone.
A run whose owner is alive is another cockpit's (a second SSH login, a headless `cockpit gate`): left
alone, and shown running.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from cockpit.gates.mark import unconfirmed
from cockpit.gates.pids import pid_alive, process_start
from cockpit.session import events as ev
from cockpit.session.journal import Event
from cockpit.session.paths import stored_path
from cockpit.session.state import GateRunRecord, SessionState

GRACE_S = 3.0


def running_elsewhere(run: GateRunRecord, me: int | None = None) -> bool:
    """A run with no finish that another cockpit, still alive, is running now."""
    me = os.getpid() if me is None else me
    return (not run.finished and run.owner is not None and run.owner != me and pid_alive(run.owner)
            and pid_alive(run.pid))


def orphans(state: SessionState, me: int | None = None) -> list[GateRunRecord]:
    """Runs with no finish whose cockpit is gone and whose child is still the process it started."""
    me = os.getpid() if me is None else me
    return [r for r in state.gate_runs
            if not r.finished and r.pid and r.owner is not None and r.owner != me
            and not pid_alive(r.owner) and r.pid_start is not None
            and process_start(r.pid) == r.pid_start]


def reap(state: SessionState, now: Callable[[], float], workspace: Path,
         me: int | None = None) -> tuple[list[Event], list[str]]:
    """Stop every orphan's process group that the OS confirms is the run's own; the events that
    journal their ends (the log as the journal stores paths: from the workspace) and one line each
    (a process left alone says why)."""
    events, told = [], []
    for run in orphans(state, me):
        assert run.pid is not None
        refused = unconfirmed(run.pid, run.mark)
        if refused is None:
            stopped = _stop_group(run.pid, run.pid_start, run.mark)
            how = "stopped" if stopped else "could not be stopped (it ignores SIGKILL?)"
            summary = (f"interrupted: its cockpit (pid {run.owner}) was gone; its processes "
                       f"(group {run.pid}) {how} when the session was opened again")
        else:
            summary = (f"interrupted: its cockpit (pid {run.owner}) was gone; pid {run.pid} was not "
                       f"signalled: {refused}; stop it yourself if it is yours")
        t = now()
        events.append(ev.gate_finished(t, run.run_id, run.gate, "interrupted", summary, t - run.started_t,
                                       None, stored_path(Path(run.log), workspace) if run.log else "", {}))
        told.append(f"{run.run_id}: {summary}")
    return events, told


def _stop_group(pid: int, started: int | None, mark: str | None) -> bool:
    """SIGTERM to the group, SIGKILL after GRACE_S, each only while the leader still carries the
    mark; True once the leader is gone."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process_start(pid) != started:
            return True
        if unconfirmed(pid, mark) is not None:
            return False
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            if process_start(pid) != started:
                return True
            time.sleep(0.05)
    return process_start(pid) != started
