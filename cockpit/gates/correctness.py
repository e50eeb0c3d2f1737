"""The Correctness gate: every candidate of the workload against its oracle on the test grid and
the bench grid's smallest and largest shapes, in the child Python (`probes/workload_probe.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cockpit.gates.gate import GateContext, Verdict
from cockpit.gates.probe_call import ShapeCounter, probe_argv, read_result


class CorrectnessGate:
    """Candidates against the oracle, smallest shape first, stopping at the first failure."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return probe_argv(ctx, "correctness")

    def tracker(self, ctx: GateContext) -> ShapeCounter:
        return ShapeCounter()

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        return judge_correctness(read_result(ctx, exit_code, tail))


def judge_correctness(data: dict[str, Any], planned: int | None = None) -> Verdict:
    rows = data["rows"]
    planned = planned if planned is not None else data.get("planned") or len(rows)
    result = {"rows": rows, "device": data.get("device"), "gpu": data.get("gpu"),
              "workload": data.get("workload"), "oracle": data.get("oracle")}
    failed = next((r for r in rows if not r.get("ok")), None)
    if failed is not None:
        return Verdict("fail", f"FAILS at {_who(failed)}{failed['config']}: {_why(failed)}; "
                       f"{len(rows) - 1} smaller checks passed", result)
    if not rows:
        return Verdict("error", "no shape was checked", result)
    measured = [r for r in rows if isinstance(r.get("rel_l2"), (int, float))]
    if not measured:
        return Verdict("pass", f"all {len(rows)}/{planned} checks correct (the workload's own check)", result)
    worst = max(measured, key=lambda r: r["rel_l2"])
    return Verdict("pass", f"all {len(rows)}/{planned} checks correct; worst rel L2 "
                   f"{worst['rel_l2']:.1e} at {worst['config']}", result)


def _who(row: dict[str, Any]) -> str:
    cand = row.get("candidate")
    return f"{cand} " if cand and cand != "ours" else ""


def _why(row: dict[str, Any]) -> str:
    if row.get("nonfinite"):
        return f"{row['nonfinite']} NaN/Inf (max |Δ| {row.get('max_abs') or 0:.2e})"
    if row.get("what"):
        return str(row["what"])
    if isinstance(row.get("rel_l2"), (int, float)) and isinstance(row.get("tolerance"), (int, float)):
        return f"rel L2 {row['rel_l2']:.2e} > {row['tolerance']:g} (max |Δ| {row.get('max_abs') or 0:.2e})"
    return "the check failed"
