"""The correctness gate's view: each check against the oracle, and by how much it missed; and the
words the gate's summary and a pull request's correctness line say them in."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.gates.correctness.result import CorrectnessResult, OracleCheck
from cockpit.gates.view import Cell, Column, Fact, GateView, ViewTable, fmt


def correctness_view(result: CorrectnessResult) -> GateView:
    rows = tuple((Cell("ok", "good") if c.ok else Cell("FAIL", "bad"), Cell(c.config, "" if c.ok else "bad"),
                  Cell(fmt(c.max_abs, ".2e")), Cell(fmt(c.rel_l2, ".2e")), Cell(fmt(c.tolerance, "g")),
                  Cell(f"{c.nonfinite}"))
                 for c in result.checks)
    columns = (Column("", status=True), Column("config", share=2),
               *(Column(name, numeric=True) for name in ("max |Δ|", "rel L2", "tolerance", "NaN/Inf")))
    off = (Fact("checks off", ", ".join(sorted(result.guards_off)), "warn"),) if result.guards_off else ()
    facts = (*((Fact("device", result.device),) if result.device else ()),
             *(Fact("warning", line, "warn") for line in result.warnings), *off)
    return GateView(facts, (), (ViewTable("configs", columns, rows),) if rows else ())


def correctness_words(result: CorrectnessResult) -> str:
    """What a reviewer asks of a correctness run, in one line: "all 104/104 configs correct on 3
    rounds of fresh inputs, each repeat bit for bit the same; rel L2 tolerance 1e-2; worst rel L2
    2.3e-03 at B2 H16 S8192 D128 bf16 full"; what a run from before the rounds did not record is
    said to be missing; a failure names its first config and how it missed."""
    checks = result.checks
    if not result.judged:
        return f"not judged: the command handed back no result (exit {result.exit_code})"
    if not checks:
        return "no shape was checked"
    failures = result.failures
    if failures:
        return (f"FAILS at {len(failures)} of {len(checks)} checks; first {_who(failures[0])}"
                f"{failures[0].config}: {why_failed(failures[0])}")
    shapes = len({c.config for c in checks})
    head = f"all {len(checks)}/{len(checks)} " + ("configs correct" if shapes == len(checks)
                                                  else f"checks correct over {shapes} configs")
    said = [head + (rounds_words(checks) or ", rounds not recorded"), tolerance_words(checks)]
    said += [f"checks off: {', '.join(sorted(result.guards_off))}"] if result.guards_off else []
    return "; ".join([*said, *_worst(checks)])


def rounds_words(checks: Sequence[OracleCheck]) -> str:
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


def tolerance_words(checks: Sequence[OracleCheck]) -> str:
    """'rel L2 tolerance 1e-2' (or '1e-3 to 1e-2' across dtypes); the workload's own check where
    no tolerance was recorded."""
    tolerances = sorted({c.tolerance for c in checks if c.tolerance is not None})
    if not tolerances:
        return "the workload's own check"
    own = " (and the workload's own check)" if any(c.tolerance is None for c in checks) else ""
    span = _sci(tolerances[0]) + (f" to {_sci(tolerances[-1])}" if len(tolerances) > 1 else "")
    return f"rel L2 tolerance {span}{own}"


def why_failed(check: OracleCheck) -> str:
    if check.what:
        return check.what  # names what it did ("changed its input #0 in place", "grad of input #0 ...")
    if check.nonfinite:
        return f"{check.nonfinite} NaN/Inf (max |Δ| {check.max_abs or 0:.2e})"
    if check.rel_l2 is not None and check.tolerance is not None:
        return f"rel L2 {check.rel_l2:.2e} > {check.tolerance:g} (max |Δ| {check.max_abs or 0:.2e})"
    return "the check failed"


def _who(check: OracleCheck) -> str:
    return f"{check.candidate} at " if check.candidate and check.candidate != "ours" else "at "


def _worst(checks: Sequence[OracleCheck]) -> list[str]:
    """['worst rel L2 2.3e-03 at B2 H16 S8192 D128 bf16 full'], or nothing without a measured error."""
    measured = [c for c in checks if c.rel_l2 is not None]
    if not measured:
        return []
    worst = max(measured, key=lambda c: c.rel_l2 or 0.0)
    return [f"worst rel L2 {worst.rel_l2:.1e} at {worst.config}"]


def _sci(value: float) -> str:
    """1e-2, 1.5e-3: a tolerance as one writes it."""
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa.removesuffix('.0')}e{int(exponent)}"
