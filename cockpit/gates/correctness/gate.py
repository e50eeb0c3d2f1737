"""The Correctness gate: every candidate of the workload against its oracle on the test grid and
the bench grid's smallest and largest shapes, in the child Python (`probes/workload_probe.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from cockpit.gates.correctness.result import CorrectnessResult, OracleCheck, read_checked
from cockpit.gates.correctness.view import rounds_words, why_failed
from cockpit.gates.gate import GateContext, GateStatus, Verdict
from cockpit.gates.probe_call import ShapeCounter, probe_argv, read_result
from cockpit.workload.guards import off_line


class CorrectnessGate:
    """Candidates against the oracle, smallest shape first, each up to its first failure."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return probe_argv(ctx, "correctness")

    def tracker(self, ctx: GateContext) -> ShapeCounter:
        return ShapeCounter()

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        return judge_correctness(read_checked(read_result(ctx, exit_code, tail)))


def judge_correctness(read: CorrectnessResult, planned: int | None = None) -> Verdict:
    """The verdict on the checks the probe (or a replaced command) made: every failing candidate's
    failure, or how many passed and the worst relative error; then the warnings, and the guards
    turned off (a run with any off is not a pass)."""
    checks = read.checks
    planned = planned if planned is not None else read.planned or len(checks)
    result = replace(read, planned=None)  # the journal keeps the checks, not the plan
    off = off_line(read.guards_off)
    notes = "".join(f"; {line}" for line in (*read.warnings, *([off] if off else [])))
    failures = read.failures
    if failures:
        many = len(failures) > 1
        said = "; ".join(f"{_who(c, many)}{c.config}: {why_failed(c)}" for c in failures)
        return Verdict("fail", f"FAILS at {said}; {len(checks) - len(failures)} other checks passed{notes}",
                       result)
    if not checks:
        return Verdict("error", f"no shape was checked{notes}", result)
    head = f"all {len(checks)}/{planned} checks correct{rounds_words(checks)}"
    measured = [c for c in checks if c.rel_l2 is not None]
    own = " (the workload's own check)" if any(c.tolerance is None for c in checks) else ""
    status: GateStatus = "warn" if notes else "pass"
    if not measured:
        return Verdict(status, f"{head}{own}{notes}", result)
    worst = max(measured, key=lambda c: c.rel_l2 or 0.0)
    return Verdict(status, f"{head}; worst rel L2 {worst.rel_l2:.1e} at {worst.config}{own}{notes}", result)


def _who(check: OracleCheck, many: bool = False) -> str:
    """The candidate's name before its failure ("ours" too when several failed)."""
    return f"{check.candidate} " if check.candidate and (many or check.candidate != "ours") else ""
