"""The session's keep/revert decisions as the report lists them, each with what it was compared
with in words, so "KEEP: 1.20x" never stands beside a baseline no one can name: a bench's decision
names the best earlier bench it was measured against (the run, when it finished, and the commit
that build was kept as where the journal has one); a tune's, the tuned values before that tune."""

from __future__ import annotations

from cockpit.gates.bench.past import TUNE_FINISHED
from cockpit.gates.catalog import measures
from cockpit.json_fields import as_number, pair, text
from cockpit.report.formats import utc
from cockpit.report.model import KeepDecisionRow
from cockpit.report.text import clean_line, clean_value
from cockpit.session import events as ev
from cockpit.session.bounds import line_cut
from cockpit.session.journal import Event
from cockpit.session.state import GateRunRecord, SessionState
from cockpit.workload.knob_words import KnobWords

TUNE = "tune"
"""A decision's `source` when a tune kept it (cli/tune.py journals it so)."""


def decisions(events: tuple[Event, ...], state: SessionState) -> tuple[KeepDecisionRow, ...]:
    """Every decision in the journal's order, each with the tune that came before it (a tune's
    decision follows its `tune_finished`) and the commits of the decisions before it."""
    rows: list[KeepDecisionRow] = []
    tune: str | None = None
    for e in events:
        if e.get("type") == TUNE_FINISHED:
            tune = text(e.get("run"))
        elif e.get("type") == ev.DECISION:
            rows.append(_decision(e, state, _versus(e, state, rows, tune)))
    return tuple(rows)


def decision_words(events: tuple[Event, ...]) -> KnobWords | None:
    """The words journaled with the last decision (a tune's: its workload's knobs'); None without."""
    last = next((e for e in reversed(events) if e.get("type") == ev.DECISION), None)
    return KnobWords.from_json(last.get("words")) if last is not None else None


def _decision(e: Event, state: SessionState, versus: str) -> KeepDecisionRow:
    """One keep/revert decision, with the last finished measuring run before it: the bench it
    was decided on."""
    t = float(e["t"])
    before = [r for r in state.gate_runs if measures(r.gate) and r.finished_t is not None
              and r.finished_t <= t]
    summary = e.get("summary")
    return KeepDecisionRow(t, clean_value(e.get("action")),
                           clean_value(line_cut(summary) if isinstance(summary, str) else summary),
                           e.get("confirmed") is True, _improvement(e),
                           clean_value(e["commit"]) if e.get("commit") else None,
                           before[-1].run_id if before else None,
                           TUNE if e.get("source") == TUNE else None, pair(e.get("interval")),
                           clean_line(versus))


def _improvement(e: Event) -> float | None:
    value = e.get("improvement")
    return None if isinstance(value, bool) else as_number(value)


def _versus(e: Event, state: SessionState, earlier: list[KeepDecisionRow], tune: str | None) -> str:
    """What the decision compared with: the tuned values before its tune, or the earlier bench it
    names."""
    if e.get("source") == TUNE:
        return f"the tuned values before {tune or 'the tune'}"
    reference = text(e.get("reference"))
    if reference is None:
        return "the best earlier bench (the journal does not name it)"
    return "the best earlier bench, " + _reference_words(reference, state, earlier)


def _reference_words(reference: str, state: SessionState, earlier: list[KeepDecisionRow]) -> str:
    """"run 004-bench (2026-11-23 11:17 UTC, commit abc1234)" for a run of this session; a tune's
    confirmation or a bench record by its name, and the session it is of when another."""
    session, name = _named(reference)
    said = f"the confirmation of {name}" if name.startswith("tune-") else name
    if session != state.id:
        return f"{said} of session {session}"
    run = next((r for r in state.gate_runs if r.run_id == name), None)
    return f"{said} of this session" if run is None else f"run {name} ({_built(run, earlier)})"


def _built(run: GateRunRecord, earlier: list[KeepDecisionRow]) -> str:
    """'2026-11-23 11:17 UTC, commit abc1234': when the run finished, and the commit its build was
    kept as where a decision after it committed one."""
    commit = next((d.commit for d in reversed(earlier) if d.after_run == run.run_id and d.commit), None)
    return utc(run.finished_t or run.started_t) + (f", commit {commit}" if commit else "")


def _named(reference: str) -> tuple[str, str]:
    """(session, run) of a reference: `<session>/<run>`, or a bench record's path from before
    (`sessions/<session>/results/bench-*.json`, `<session>/bench-*.json`)."""
    parts = reference.split("/")
    session = parts[1] if parts[0] == "sessions" and len(parts) > 2 else parts[0]
    return session, parts[-1].removesuffix(".json")
