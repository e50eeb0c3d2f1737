"""The correctness gate's view: each check against the oracle, and by how much it missed."""

from __future__ import annotations

from cockpit.gates.correctness.result import CorrectnessResult
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
