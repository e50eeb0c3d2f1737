"""The journal's event types and their constructors (the JSON edge of the session model)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cockpit.config import PhaseSpec
from cockpit.session.journal import Event

SESSION_STARTED = "session_started"
PHASE_STARTED = "phase_started"
PHASE_ENDED = "phase_ended"
PHASE_OVER_BUDGET = "phase_over_budget"
TIMER_PAUSED = "timer_paused"
TIMER_RESUMED = "timer_resumed"
STATUS = "status"
NOTE = "note"
GATE_STARTED = "gate_started"
GATE_FINISHED = "gate_finished"
GATE_STALLED = "gate_stalled"
DECISION = "decision"
PATTERN_APPLIED = "pattern_applied"
SESSION_ENDED = "session_ended"
GPU_SUMMARY = "gpu_summary"
APP_OPENED = "app_opened"
APP_CLOSED = "app_closed"


def event(kind: str, t: float, **fields: Any) -> Event:
    return {"t": round(t, 3), "type": kind, **fields}


def session_started(
    t: float, session_id: str, objective: str, template: str, phases: tuple[PhaseSpec, ...],
    gpu_cost_per_hour: float,
) -> Event:
    return event(
        SESSION_STARTED, t, id=session_id, objective=objective, template=template,
        phases=[{"name": p.name, "budget_s": p.budget_s} for p in phases],
        gpu_cost_per_hour=gpu_cost_per_hour,
    )


def phase_started(t: float, phase: str) -> Event:
    return event(PHASE_STARTED, t, phase=phase)


def phase_ended(t: float, phase: str, outcome: str, elapsed_s: float, budget_s: float) -> Event:
    return event(
        PHASE_ENDED, t, phase=phase, outcome=outcome, elapsed_s=round(elapsed_s, 1),
        budget_s=budget_s, over_budget=elapsed_s > budget_s,
    )


def phase_over_budget(t: float, phase: str, elapsed_s: float, budget_s: float) -> Event:
    return event(PHASE_OVER_BUDGET, t, phase=phase, elapsed_s=round(elapsed_s, 1), budget_s=budget_s)


def status(t: float, text: str, auto: bool) -> Event:
    return event(STATUS, t, text=text, auto=auto)


def note(t: float, text: str) -> Event:
    return event(NOTE, t, text=text)


def gate_started(t: float, run_id: str, gate: str, argv: tuple[str, ...], log: str,
                 pid: int, owner: int | None = None, pid_start: int | None = None,
                 mark: str | None = None) -> Event:
    """`pid`: the gate's child (the leader of its own process group); `owner`: the cockpit process
    that runs it; `pid_start`: when the child started, in the kernel's ticks since boot (so a
    later cockpit knows a live pid is still that child, not a reused number); `mark`: the seal of
    the token in the child's environment, which the OS must confirm before anything is signalled
    (gates/mark.py)."""
    extra = {k: v for k, v in (("owner", owner), ("pid_start", pid_start), ("mark", mark)) if v is not None}
    return event(GATE_STARTED, t, run_id=run_id, gate=gate, argv=list(argv), log=log, pid=pid, **extra)


def gate_stalled(t: float, run_id: str, gate: str, silent_s: float) -> Event:
    return event(GATE_STALLED, t, run_id=run_id, gate=gate, silent_s=round(silent_s, 1))


def gate_finished(
    t: float, run_id: str, gate: str, status: str, summary: str, duration_s: float,
    exit_code: int | None, log: str, result: Mapping[str, object],
) -> Event:
    return event(GATE_FINISHED, t, run_id=run_id, gate=gate, status=status, summary=summary,
                 duration_s=round(duration_s, 2), exit_code=exit_code, log=log, result=result)


def decision(t: float, action: str, summary: str, confirmed: bool, **details: Any) -> Event:
    """KEEP/REVERT after a benchmark, and whether the engineer carried it out."""
    return event(DECISION, t, action=action, summary=summary, confirmed=confirmed, **details)


def gpu_summary(t: float, phase: str, summary: dict[str, Any]) -> Event:
    """What the GPUs did during a phase (mean/max util, power, temperature, throttled seconds)."""
    return event(GPU_SUMMARY, t, phase=phase, **summary)


def pattern_applied(t: float, pattern: int, title: str, why: str) -> Event:
    return event(PATTERN_APPLIED, t, pattern=pattern, title=title, why=why)


def session_ended(t: float, reason: str) -> Event:
    return event(SESSION_ENDED, t, reason=reason)


def app_opened(t: float, pid: int) -> Event:
    return event(APP_OPENED, t, pid=pid)


def app_closed(t: float, pid: int, reason: str) -> Event:
    return event(APP_CLOSED, t, pid=pid, reason=reason)
