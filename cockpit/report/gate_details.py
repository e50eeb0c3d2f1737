"""What a gate run adds to the report: its view (`gates/<name>/view.py`, the one the TUI draws too) as
facts, warnings and tables of clean text. Results come from journals that may be old,
hand-edited or torn: their types read what is there (`gates/<name>/result.py`), never an error."""

from __future__ import annotations

from cockpit.gates.catalog import read_result, view_of
from cockpit.gates.view import Column, Fact, GateView
from cockpit.report.model import ReportFact, Table
from cockpit.report.text import clean_value

Details = tuple[tuple[ReportFact, ...], tuple[str, ...], tuple[Table, ...]]


def details(gate: str, result: object) -> Details:
    """(facts, warnings, tables) for one finished run of `gate`, its journaled result read once
    as the gate's type."""
    view = view_of(gate, read_result(gate, result))
    return written(view) if view is not None else ((), (), ())


def written(view: GateView) -> Details:
    """The view as the report writes it: text only, each line clean; what failed or warns is
    among the warnings."""
    facts = tuple(ReportFact(clean_value(f.label), _value(f)) for f in view.facts)
    warnings = tuple(clean_value(c.text.removeprefix("✗ ").removeprefix("! ")) for c in view.problems)
    tables = tuple(Table(clean_value(t.title), tuple(_title(c) for c in t.columns),
                         tuple(tuple(clean_value(cell.text) for cell in row) for row in t.rows),
                         tuple(c.numeric for c in t.columns))
                   for t in view.tables if t.rows)
    return facts, warnings + tuple(clean_value(w) for w in view.warnings), tables


def _value(fact: Fact) -> str:
    """A kernel's name without its parameters (ncu's `(AttnParams, float)`)."""
    return clean_value(fact.value.split("(")[0] if fact.kernel else fact.value)


def _title(column: Column) -> str:
    return clean_value(column.title)
