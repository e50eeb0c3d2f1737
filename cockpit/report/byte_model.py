"""Byte counts for bench rows that carry none, from the workload's declared model, so the roofline
can place a run recorded before the bench stored them.

The first workload's results stored the FLOPs their bench counted but not the bytes; its model
(cockpit/before_workloads.py, `BYTES`) is evaluated on each row's shape. The report says the bytes
are that model's, never the run's.
"""

from __future__ import annotations

from dataclasses import dataclass

from cockpit import before_workloads
from cockpit.gates.bench.result import BenchResult
from cockpit.json_fields import JsonObject, obj
from cockpit.workload.formula import Formula, FormulaError, parse_formula


@dataclass(frozen=True)
class ByteModel:
    """Where a run's byte counts come from when its rows carry none."""

    formula: Formula
    workload: str

    def bytes_of(self, row: JsonObject) -> float | None:
        """The model on the row's shape (its "shape" object, else the row's own keys, as the first
        results stored them); None where the shape lacks a key the model reads."""
        shape = obj(row.get("shape")) or row
        try:
            return self.formula(**shape)
        except FormulaError:
            return None

    def sentence(self, run_id: str) -> str:
        """What the roofline says of its bytes."""
        return (f"bytes are the {self.workload} workload's model ({self.formula.text.replace('*', '·')}: "
                f"{before_workloads.BYTES_MEANING}); run {run_id} was recorded before "
                "the bench stored byte counts")


def byte_model(result: BenchResult) -> ByteModel | None:
    """The model for `result`'s rows where none of them carries bytes and the workload's model is
    known here (the first workload's); None otherwise (a run that carries its own)."""
    if result.workload != before_workloads.WORKLOAD or any(r.bytes for r in result.rows):
        return None
    return ByteModel(parse_formula(before_workloads.BYTES), result.workload)
