"""The gates as the house runs them: each line of `cockpit/gate_lines.py`, with its code, result
type and view loaded from the gate's folder (`cockpit/gates/<name>/`) when first used.

The TUI lists every gate at start and an idle one runs none: their code (log parsers, validity
rules, kernel resources, ncu verdicts) is ~0.6 MiB it need not hold.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import cast

from cockpit.analysis.decide import URGENCY, class_words
from cockpit.config import Config
from cockpit.gate_lines import CATALOG, MEASURING_GATE, GateLine
from cockpit.gates.gate import GateCode, GateContext, ProgressTracker, Verdict
from cockpit.gates.result import GateResult
from cockpit.gates.view import GateView
from cockpit.json_fields import pair


@dataclass(frozen=True)
class CatalogGate:
    """A line of the catalog with what it names in its folder: "module:name" of what runs and
    judges the gate (`code`), of the type its results are read as (`result`) and of what shows a
    result (`view`)."""

    line: GateLine

    @property
    def name(self) -> str:
        return self.line.name

    @property
    def title(self) -> str:
        return self.line.title

    @property
    def timeout_s(self) -> float:
        return self.line.timeout_s

    @property
    def needs_workload(self) -> bool:
        """Its probe reads the workspace's workload (env checks the box with or without one)."""
        return self.line.needs_workload

    @property
    def code(self) -> str:
        return f"cockpit.gates.{self.line.name}.gate:{self.line.code}"

    @property
    def result(self) -> str:
        return f"cockpit.gates.{self.line.name}.result:{self.line.result}"

    @property
    def view(self) -> str:
        return f"cockpit.gates.{self.line.name}.view:{self.line.view}"

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return _code(self.code).argv(ctx)

    def tracker(self, ctx: GateContext) -> ProgressTracker:
        return _code(self.code).tracker(ctx)

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        return _code(self.code).verdict(ctx, exit_code, tail)

    def read(self, raw: object) -> GateResult | None:
        """A run's result (as the journal holds it) as this gate's type; None when it is not one
        (a run that died before it had one)."""
        return _result_type(self.result).from_json(raw)

    def show(self, result: GateResult) -> GateView:
        """A run's result as the view the TUI and the report draw."""
        return _view(self.view)(result)


def _load(where: str) -> object:
    module, name = where.split(":")
    found: object = getattr(importlib.import_module(module), name)
    return found


@cache
def _code(where: str) -> GateCode:
    factory = _load(where)
    if not callable(factory):
        raise TypeError(f"{where} is not a gate's code (a class with argv, tracker and verdict)")
    return cast(GateCode, factory())


@cache
def _result_type(where: str) -> type[GateResult]:
    found = _load(where)
    if not isinstance(found, type) or not hasattr(found, "from_json"):
        raise TypeError(f"{where} is not a gate result type (from_json, to_json, SCHEMA)")
    result: type[GateResult] = found
    return result


@cache
def _view(where: str) -> Callable[[GateResult], GateView]:
    found = _load(where)
    if not callable(found):
        raise TypeError(f"{where} is not a view (a function of a gate result)")
    return cast(Callable[[GateResult], GateView], found)


GATES: dict[str, CatalogGate] = {line.name: CatalogGate(line) for line in CATALOG}


def read_result(gate_name: str, raw: object) -> GateResult | None:
    """A journaled run's result read as its gate's type; None for a gate the catalog does not know
    or a result that is not one (a run that died before it had one)."""
    found = GATES.get(gate_name)
    return found.read(raw) if found is not None else None


def view_of(gate_name: str, result: GateResult | None) -> GateView | None:
    """What a run of `gate_name` shows of its result; None when there is nothing to show (no
    result, or one of another gate's type: a replaced command's that judged nothing)."""
    found = GATES.get(gate_name)
    if found is None or result is None or not isinstance(result, _result_type(found.result)):
        return None
    shown = found.show(result)
    return shown if not shown.empty else None


def wanting_workload(config: Config) -> frozenset[str]:
    """The gates that cannot run in this workspace for want of a workload: cockpit.toml names none,
    and the gate reads one (its own probe; a `[gates.<name>] command` of the user's reads none)."""
    if config.workload.named:
        return frozenset()
    return frozenset(name for name, gate in GATES.items()
                     if gate.needs_workload and config.gate(name).command is None)


def measures(gate_name: str) -> bool:
    """Whether the gate's runs are benchmarks (their result is a `BenchResult`): the runs the
    speedup, keep/revert and the session's history are made of."""
    return gate_name == MEASURING_GATE


def summary_said(gate_name: str, summary: str, result_inline: Mapping[str, object]) -> str:
    """A run's summary; a bench journaled before its level was said in words of urgency, or
    before an interval reaching 1.0 was the same as the baseline, reads as one journaled now:
    "(HIGH)" read as a grade of speed, and "1.00x [0.99, 1.01] (ahead of the baseline)" said
    more than the measurement can. The TUI's gate list and pane and the report say it through
    this one function."""
    level = result_inline.get("level") if measures(gate_name) else None
    if not isinstance(level, str) or level not in URGENCY:
        return summary
    said = class_words(level, pair(result_inline.get("interval")))
    journaled = next((w for w in (f"({level})", f"({URGENCY[level]})") if w in summary), None)
    return summary.replace(journaled, f"({said})", 1) if journaled else summary
