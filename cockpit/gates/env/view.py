"""The env gate's view: each check, failures first, with its fix where it did not pass."""

from __future__ import annotations

from cockpit.gates.env.result import EnvResult
from cockpit.gates.view import Cell, Column, Fix, GateView, Tone, ViewTable, present

STATUS_TONE: dict[str, Tone] = {"pass": "good", "warn": "warn", "fail": "bad"}


def env_view(result: EnvResult) -> GateView:
    rows = tuple((Cell(c.status.upper(), tone := STATUS_TONE.get(c.status, "dim")), Cell(c.name or "?", tone),
                  Cell(c.value), Cell(c.fix if c.status != "pass" else "", "quiet"))
                 for c in result.worst_first)
    warnings = tuple(present(c.name, c.value, sep=": ") for c in result.checks
                     if c.status in ("warn", "fail") and (c.name or c.value))
    # a path or a command folded into a column 16 cells wide read in pieces: narrower, a card per check
    columns = (Column("status", status=True), Column("check"), Column("value", share=2, least=24),
               Column("fix", share=3, least=32))
    first = next((c for c in result.worst_first if c.status in ("fail", "warn") and c.fix), None)
    return GateView(warnings=warnings, tables=(ViewTable("checks", columns, rows),) if rows else (),
                    fix=Fix(first.fix, first.name or "?") if first is not None else None)
