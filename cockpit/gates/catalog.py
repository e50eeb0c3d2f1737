"""The gates the cockpit runs, in the order a session needs them.

The catalog names each gate and says where its code is; that code (log parsers, validity rules,
kernel resources, ncu verdicts) loads when the gate first runs or judges a run. The TUI lists
all five at start and an idle one runs none: ~0.6 MiB it need not hold.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from cockpit.gates.gate import GateCode, GateContext, ProgressTracker, Verdict


@dataclass(frozen=True)
class CatalogGate:
    """A gate as the catalog names it; `code` is "module:Class" of what runs and judges it."""

    name: str
    title: str
    timeout_s: float
    code: str

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return _code(self.code).argv(ctx)

    def tracker(self, ctx: GateContext) -> ProgressTracker:
        return _code(self.code).tracker(ctx)

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        return _code(self.code).verdict(ctx, exit_code, tail)


@cache
def _code(where: str) -> GateCode:
    module, name = where.split(":")
    code: GateCode = getattr(importlib.import_module(module), name)()
    return code


GATES: dict[str, CatalogGate] = {
    gate.name: gate
    for gate in (
        CatalogGate("env", "Environment", 120.0, "cockpit.gates.env:EnvGate"),
        CatalogGate("build", "Build", 1800.0, "cockpit.gates.build:BuildGate"),
        CatalogGate("correctness", "Correctness", 1800.0, "cockpit.gates.correctness:CorrectnessGate"),
        CatalogGate("bench", "Benchmark", 3600.0, "cockpit.gates.bench:BenchGate"),
        CatalogGate("profile", "Profile", 600.0, "cockpit.gates.profile:ProfileGate"),
    )
}
