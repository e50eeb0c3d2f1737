"""The Correctness gate: every candidate of the workload against its oracle on the test grid and
the bench grid's smallest and largest shapes, in the child Python (`probes/workload_probe.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from cockpit.gates.correctness.result import CorrectnessResult, OracleCheck, read_checked
from cockpit.gates.gate import GateContext, Verdict
from cockpit.gates.probe_call import ShapeCounter, probe_argv, read_result


class CorrectnessGate:
    """Candidates against the oracle, smallest shape first, stopping at the first failure."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return probe_argv(ctx, "correctness")

    def tracker(self, ctx: GateContext) -> ShapeCounter:
        return ShapeCounter()

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        return judge_correctness(read_checked(read_result(ctx, exit_code, tail)))


def judge_correctness(read: CorrectnessResult, planned: int | None = None) -> Verdict:
    """The verdict on the checks the probe (or a replaced command) made: the first failure, or
    how many passed and the worst relative error."""
    checks = read.checks
    planned = planned if planned is not None else read.planned or len(checks)
    result = replace(read, planned=None)  # the journal keeps the checks, not the plan
    failed = read.failed
    if failed is not None:
        return Verdict("fail", f"FAILS at {_who(failed)}{failed.config}: {_why(failed)}; "
                       f"{len(checks) - 1} smaller checks passed", result)
    if not checks:
        return Verdict("error", "no shape was checked", result)
    head = f"all {len(checks)}/{planned} checks correct{_how(checks)}"
    measured = [c for c in checks if c.rel_l2 is not None]
    own = " (the workload's own check)" if any(c.tolerance is None for c in checks) else ""
    if not measured:
        return Verdict("pass", f"{head}{own}", result)
    worst = max(measured, key=lambda c: c.rel_l2 or 0.0)
    return Verdict("pass", f"{head}; worst rel L2 {worst.rel_l2:.1e} at {worst.config}{own}", result)


def _how(checks: Sequence[OracleCheck]) -> str:
    """' on 3 rounds of fresh inputs, each repeat bit for bit the same' (or how far repeats
    differed under declared atomics); nothing for results from before the rounds."""
    rounds = min((c.rounds for c in checks if c.rounds is not None), default=None)
    if rounds is None:
        return ""
    said = f" on {rounds} round{'s' if rounds != 1 else ''} of fresh inputs"
    repeats = [c for c in checks if c.deterministic is not None]
    if repeats and all(c.deterministic for c in repeats):
        return said + ", each repeat bit for bit the same"
    differ = max((c.repeat_max_abs or 0.0 for c in repeats if c.deterministic is False), default=0.0)
    return said + (f", repeats differ by up to {differ:.1e} (atomics declared)" if repeats else "")


def _who(check: OracleCheck) -> str:
    return f"{check.candidate} " if check.candidate and check.candidate != "ours" else ""


def _why(check: OracleCheck) -> str:
    if check.what and check.mode == "backward":
        return check.what  # names the gradient ("grad of input #0 (x): 3 NaN/Inf")
    if check.nonfinite:
        return f"{check.nonfinite} NaN/Inf (max |Δ| {check.max_abs or 0:.2e})"
    if check.what:
        return check.what
    if check.rel_l2 is not None and check.tolerance is not None:
        return f"rel L2 {check.rel_l2:.2e} > {check.tolerance:g} (max |Δ| {check.max_abs or 0:.2e})"
    return "the check failed"
