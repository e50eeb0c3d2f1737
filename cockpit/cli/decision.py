"""`cockpit decision`: the last bench's keep/revert verdict answered from a shell, as the TUI's
dialog answers it after a bench (gates/bench/answer.py): with no answer, the question (the verdict,
what a yes does to the kernel's files, git's diff stat); `--yes` commits (KEEP) or restores (REVERT)
the kernel's files, `--no` leaves them; either answer is journaled, so the report's Decision line
and the next keep/revert read it. A bench run with `cockpit gate bench` in a second pane is
answered here; one the TUI ran was asked there.

A verdict is waiting when the session's last bench that keeps or reverts finished after its last
journaled answer. A yes runs git (and so the repository's hooks): only in a trusted workspace."""

from __future__ import annotations

import argparse
import time

from cockpit.analysis.keep import KeepResult
from cockpit.cli.parser import session_named, workspace_of
from cockpit.errors import CockpitError
from cockpit.gates.bench.answer import answer, question
from cockpit.gates.bench.past import finished_benches
from cockpit.gates.bench.result import read_bench_result
from cockpit.session import events as ev
from cockpit.session.journal import read_journal
from cockpit.session.live import LiveSession
from cockpit.session.state import GateRunRecord, SessionState
from cockpit.session.workspace import SessionRef, load_state, resolve_session

NONE_WAITING = ("no keep/revert verdict waits for an answer in this session: a bench that keeps or "
                "reverts asks one (the first bench of a workload sets the baseline)")


def decision(args: argparse.Namespace) -> int:
    """Print the waiting verdict's question, or carry out the answer given; 1 when git refused."""
    ws = workspace_of(args)
    ref = resolve_session(ws, session_named(args))
    if ref is None:
        raise CockpitError('no open session; start one with: cockpit new "OBJECTIVE"')
    state = load_state(ref)
    if not state.is_open:
        raise CockpitError(f"session {ref.id} has ended: it takes no answer (an ended session is read-only)")
    found = waiting(ref, state)
    if found is None:
        print(NONE_WAITING)
        return 0
    run, keep = found
    if not (args.yes or args.no):
        print(f"{run.run_id}: {question(ws.root, keep)}\n\nanswer: cockpit decision --yes (or --no)")
        return 0
    if args.yes:
        from cockpit.config import load_config
        from cockpit.session.trust import require_trust

        require_trust(ws.root, load_config(ws.root))  # git commit runs the repository's hooks
    done = answer(ws.root, keep, bool(args.yes), time.time())
    live = LiveSession(ref)
    try:
        live.append([done.event])
    finally:
        live.close()
    print(f"{run.run_id}: {done.said}")
    return 1 if done.error is not None else 0


def waiting(ref: SessionRef, state: SessionState) -> tuple[GateRunRecord, KeepResult] | None:
    """The session's last bench whose verdict keeps or reverts, when no answer was journaled after
    it finished, with its whole verdict (the paths it names live in its result file)."""
    deciding = [run for run, bench in finished_benches(state) if bench.keep and bench.keep.decides]
    if not deciding or _answered_after(ref, deciding[-1]):
        return None
    whole = read_bench_result(deciding[-1].result)
    return (deciding[-1], whole.keep) if whole is not None and whole.keep is not None else None


def _answered_after(ref: SessionRef, run: GateRunRecord) -> bool:
    """Whether the journal holds an answer from after `run` finished."""
    answered = [float(e["t"]) for e in read_journal(ref.journal).events if e.get("type") == ev.DECISION]
    return bool(answered) and answered[-1] >= (run.finished_t or run.started_t)
