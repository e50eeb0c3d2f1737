"""A run reports on its own thread and its owner records each report on its own: an end is
journaled once, and a verdict the run's thread judged after the cockpit abandoned the run (a
SIGHUP while the message was on its way) is neither journaled nor acted on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cockpit.clock import SystemClock
from cockpit.config import Config, GateConfig
from cockpit.gates.catalog import GATES
from cockpit.gates.gate import GateContext, Verdict
from cockpit.gates.log_follow import GateOutput
from cockpit.gates.run import GateRun, gate_command, next_run_id
from cockpit.session.live import LiveSession
from cockpit.session.workspace import Workspace, create_session
from tests.waiting import wait_until


def test_an_end_judged_after_the_run_was_abandoned_is_not_recorded_and_the_abandon_is_told_once(
        tmp_path: Path) -> None:
    config = Config(gates={"env": GateConfig(command=(sys.executable, "-c", "print('done')"))})
    ref = create_session(Workspace(tmp_path), config, "abandon a run", "optimize", SystemClock().now())
    live = LiveSession(ref)
    ctx = GateContext(tmp_path, ref.path, next_run_id(live.state, "env", ref.path), config=config)
    told: list[Verdict] = []

    class Queued:  # as the TUI's listener: the reports wait for the owner's thread, nothing recorded
        def gate_output(self, run: GateRun, output: GateOutput) -> None: ...

        def gate_stalled(self, run: GateRun, silent_s: float) -> None: ...

        def gate_finished(self, run: GateRun, verdict: Verdict) -> None:
            told.append(verdict)

    gate = GATES["env"]
    run = GateRun(gate, gate_command(gate, ctx, config.gate("env")), ctx, live, SystemClock(), Queued(),
                  custom_command=True)
    run.start()
    wait_until(lambda: len(told) == 1, "the child's end, judged on the run's thread")
    judged = told[0]
    assert judged.status == "pass" and run.running  # judged, not yet recorded
    run.abandon("the cockpit was closed by SIGHUP while it ran")
    abandoned = told[1]
    assert not run.end(judged)  # the message that was on its way: neither journaled nor acted on
    assert run.end(abandoned) and not run.end(abandoned)  # acted on once
    assert run.wait(0) and run.verdict is abandoned
    live.close()
    ends = [e for e in map(json.loads, ref.journal.read_text().splitlines()) if e["type"] == "gate_finished"]
    assert [(e["status"], e["summary"]) for e in ends] == [
        ("interrupted", "the cockpit was closed by SIGHUP while it ran")]
