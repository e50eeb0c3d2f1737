"""Byte counts for bench rows that carry none, from the workload's declared model, so the roofline
can place a run recorded before the bench stored them.

A result written before workloads (no "schema" key: cockpit/before_workloads.py) is the attention
kernel's; its rows hold the FLOPs its bench counted (4·B·H·S²·D, half for causal, as the workload's
`flops` says) but not the bytes. The attention workload declares its bytes as Q, K and V read and O
written once in 2-byte elements (workloads/attention/attention.py, `moved`): the same model,
evaluated on each row's shape. The report says the bytes are that model's, never the run's.
"""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.gates.bench.result import BenchResult
from cockpit.json_fields import JsonObject, obj
from cockpit.workload.formula import Formula, FormulaError, parse_formula

BEFORE_WORKLOADS_BYTES = "4 * B * H * S * D * 2"
"""workloads/attention/attention.py's `moved` (tests/test_report_byte_model.py holds them equal)."""


@dataclass(frozen=True)
class ByteModel:
    """Where a run's byte counts come from when its rows carry none."""

    formula: Formula
    workload: str

    def bytes_of(self, row: JsonObject) -> float | None:
        """The model on the row's shape (its "shape" object, else the row's own keys, as results
        from before workloads stored them); None where the shape lacks a key the model reads."""
        shape = obj(row.get("shape")) or row
        try:
            return self.formula(**shape)
        except FormulaError:
            return None

    def sentence(self, run_id: str) -> str:
        """What the roofline says of its bytes."""
        return (f"bytes are the {self.workload} workload's model ({self.formula.text.replace('*', '·')}: "
                f"Q, K, V read and O written once, 2-byte elements); run {run_id} was recorded before "
                "the bench stored byte counts")


def byte_model(result: BenchResult) -> ByteModel | None:
    """The model for `result`'s rows where none of them carries bytes and the workload's model is
    known here: a result from before workloads; None otherwise (a run that carries its own)."""
    if result.schema != 1 or any(r.bytes for r in result.rows):
        return None
    return ByteModel(parse_formula(BEFORE_WORKLOADS_BYTES), result.workload)
