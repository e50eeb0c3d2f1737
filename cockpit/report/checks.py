"""What a reviewer asks before the speedup: is the kernel correct, and is it clean under the
sanitizer. The session's last finished run of each gate, read through the gate's own reader (the
catalog's, as the report's gate details read it) and said in the gate's own words; None where the
gate did not run in the session, which the report says as such. A check that ran before the last
change kept says so: it vouches for the build before it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cockpit.gates.catalog import read_result
from cockpit.gates.correctness.result import CorrectnessResult
from cockpit.gates.correctness.view import correctness_words
from cockpit.gates.result import GateResult
from cockpit.gates.sanitize.result import SanitizeResult
from cockpit.gates.sanitize.view import sanitize_words
from cockpit.report.model import CheckRun, KeepDecisionRow
from cockpit.report.text import clean_line
from cockpit.session.state import SessionState


def correctness_run(state: SessionState, decided: Sequence[KeepDecisionRow]) -> CheckRun | None:
    return _last(state, "correctness", decided,
                 lambda r: correctness_words(r) if isinstance(r, CorrectnessResult) else None)


def sanitizer_run(state: SessionState, decided: Sequence[KeepDecisionRow]) -> CheckRun | None:
    return _last(state, "sanitize", decided,
                 lambda r: sanitize_words(r) if isinstance(r, SanitizeResult) else None)


def _last(state: SessionState, gate: str, decided: Sequence[KeepDecisionRow],
          words: Callable[[GateResult | None], str | None]) -> CheckRun | None:
    """The gate's last finished run in the gate's words (its summary where it left no result of
    its type: a run that died first), and whether a change was kept after it started."""
    run = state.last_run(gate, finished=True)
    if run is None:
        return None
    said = words(read_result(gate, run.result)) or run.summary
    kept = any(d.action == "keep" and d.confirmed and d.t > run.started_t for d in decided)
    after = "; it ran before the last change kept: it vouches for the build before it" if kept else ""
    return CheckRun(clean_line(run.run_id), clean_line(run.status or "interrupted"), clean_line(said + after))
