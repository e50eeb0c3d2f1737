"""`cockpit gate {env,build,correctness,bench,profile,sanitize}`: one gate run headless, recorded in
the open session exactly as the TUI records it; exit 0 pass/warn, 1 fail, 2 error."""

from __future__ import annotations

import argparse
import json
import sys
import time

from cockpit.cli.parser import session_named, workspace_of
from cockpit.clock import SystemClock
from cockpit.config import load_config
from cockpit.errors import CockpitError
from cockpit.gates.catalog import GATES
from cockpit.gates.gate import GateContext, Verdict, result_json
from cockpit.gates.interpreter import gates_python
from cockpit.gates.log_follow import GateOutput, skipped_lines
from cockpit.gates.orphans import reap
from cockpit.gates.run import GateRun, RecordedHere, gate_command, next_run_id
from cockpit.session.live import LiveSession
from cockpit.session.trust import require_trust
from cockpit.session.workspace import resolve_session

RETRY_JOURNAL_S = 10
"""How long a headless gate waits for disk space to journal its end before saying it could not."""


def gate(args: argparse.Namespace) -> int:
    """`cockpit gate NAME`: run one gate headless, its live log on stderr, and record it."""
    ws = workspace_of(args)
    config = load_config(ws.root)
    require_trust(ws.root, config)  # nothing the workspace names runs before the user trusts it
    ref = resolve_session(ws, session_named(args))
    if ref is None:
        raise CockpitError('no open session to record the gate in; start one with: cockpit new "OBJECTIVE"')
    live = LiveSession(ref)
    events, told = reap(live.state, time.time, ws.root)  # gate processes a killed cockpit left running
    if events:
        live.append(events)
        for line in told:
            print(f"cockpit: {line}", file=sys.stderr)
    chosen = GATES[args.name]
    gate_config = config.gate(chosen.name)
    python, how = sys.executable, ""
    if gate_config.command is None:  # the gate's own probe: in the Python with the CUDA torch
        found = gates_python(config.gates, ws.root)
        python, how = found.path, found.how
    ctx = GateContext(ws.root, ref.path, next_run_id(live.state, chosen.name, ref.path), config=config,
                      objective=live.state.objective, python=python, python_how=how)

    class Printer:
        def gate_output(self, run: GateRun, output: GateOutput) -> None:
            if output.skipped:  # a flood: its latest lines only (a few times a second)
                sys.stderr.write(f"cockpit: … {skipped_lines(output)} not shown here (the log has them)\n")
            if output.lines:
                sys.stderr.write("\n".join(output.lines) + "\n")

        def gate_stalled(self, run: GateRun, silent_s: float) -> None:
            print(f"cockpit: {chosen.name}: no output for {silent_s:.0f} s (stuck? ctrl+c cancels)",
                  file=sys.stderr)

        def gate_finished(self, run: GateRun, verdict: Verdict) -> None:
            pass

    run = GateRun(chosen, gate_command(chosen, ctx, gate_config), ctx, live, SystemClock(),
                  RecordedHere(Printer()), custom_command=gate_config.command is not None)
    run.start()
    try:
        while not run.wait(0.2):
            pass
    except KeyboardInterrupt:
        run.cancel()
        run.wait()
    verdict = run.verdict
    if verdict is None:  # the run's own thread failed: said, never a traceback
        live.close()
        raise CockpitError(f"{chosen.name}: the run ended without a verdict; its log: {ctx.log_path}")
    for _ in range(RETRY_JOURNAL_S):
        if run.retry_journal():
            break
        time.sleep(1.0)
    live.close()
    if run.unjournaled:
        print(f"cockpit: {chosen.name} finished ({verdict.status}) but the journal could not record it: "
              f"{run.journal_error}; free space and run `cockpit gate {chosen.name}` again", file=sys.stderr)
    record = live.state.last_run(chosen.name)
    if args.json:
        print(json.dumps({
            "gate": chosen.name, "run_id": ctx.run_id, "session": ref.id, "status": verdict.status,
            "summary": verdict.summary, "duration_s": record.duration_s if record else None,
            "exit_code": record.exit_code if record else None, "log": str(ctx.log_path),
            "result": result_json(verdict),
        }))
    else:
        print(f"{chosen.name}: {verdict.status.upper()} — {verdict.summary}\nlog: {ctx.log_path}")
    return {"pass": 0, "warn": 0, "error": 2}.get(verdict.status, 1)
