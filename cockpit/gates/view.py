"""What a gate run shows, as data: one view model per gate result, drawn by the TUI
(`ui/widgets/gate_results.py`, with colours and icons) and written by the report (`report/gate_details.py`,
as text), so both say the same thing. Each gate's view is named by its line in `gates/catalog.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Tone = Literal["", "good", "warn", "bad", "dim", "strong", "fix", "quiet"]
"""How a cell or a fact reads: good (green), warn (yellow), bad (red), dim, strong (bold), fix
(the one thing to do), quiet (italic). The report writes the text alone."""


@dataclass(frozen=True)
class Cell:
    text: str
    tone: Tone = ""


@dataclass(frozen=True)
class Column:
    title: str
    numeric: bool = False
    """Right-aligned."""
    status: bool = False
    """A status word (PASS, WARN, FAIL): the TUI draws it as an icon in its tone."""
    share: int = 0
    """A text column's share of the width the others leave (cut with "…"); 0: its text's width."""
    least: int = 0
    """Cells a text column (a path, a command) needs to be read in a table, where its widest cell
    is wider; narrower, each row is a card. 0: the TUI's own least (16)."""


@dataclass(frozen=True)
class ViewTable:
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    notes: tuple[str, ...] = ()
    """Lines said under the table (what the build found but did not judge)."""


@dataclass(frozen=True)
class Fact:
    label: str
    value: str
    tone: Tone = ""
    meter: float | None = None
    """A share of peak in percent: the TUI draws it as a bar beside the value."""
    kernel: bool = False
    """The value is a kernel's name as ncu gives it (return type, namespaces, parameters): the
    TUI fits it to its width readably, the report leaves out the parameters."""


@dataclass(frozen=True)
class Fix:
    """The one thing to do first, as a line to copy and paste as it is (a command, a URL): the TUI
    draws it on a row of its own, never broken; `what` names what it fixes."""

    line: str
    what: str


@dataclass(frozen=True)
class GateView:
    """What one finished gate run shows: facts, warnings, tables; `problems` first (what failed)."""

    facts: tuple[Fact, ...] = ()
    warnings: tuple[str, ...] = ()
    tables: tuple[ViewTable, ...] = ()
    problems: tuple[Cell, ...] = ()
    """What failed or warns, one line each, said above everything else."""
    fix: Fix | None = None
    """What to do first, above the result (the report has it in its table's row)."""

    @property
    def empty(self) -> bool:
        return not (self.facts or self.warnings or self.tables or self.problems)


def fmt(value: float | None, spec: str, none: str = "n/a") -> str:
    """A recorded number formatted, or `none` where it was not recorded."""
    return none if value is None else format(value, spec)


def unit(value: float | None, spec: str, suffix: str) -> str | None:
    """`12.3 s`, or None when the number was not recorded."""
    return None if value is None else f"{format(value, spec)}{suffix}"


def present(*parts: str | None, sep: str = " ") -> str:
    """The parts that were recorded, joined; empty when none was."""
    return sep.join(p for p in parts if p)


def speed_tone(speedup: float | None) -> Tone:
    """Under 0.5x red, under 1x yellow, else green."""
    return "" if speedup is None else "bad" if speedup < 0.5 else "warn" if speedup < 1 else "good"
