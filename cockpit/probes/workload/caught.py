"""A guard's catch during the bench: the bench ends with the guard's line for that candidate."""

from __future__ import annotations

from cockpit.workload.result_wire import BenchRowJson, CaughtJson


class BenchCaught(RuntimeError):
    """A guard caught a candidate at one config (workload/guards.py names the guard): the bench ends
    with its line, keeping the rows before it."""

    def __init__(self, config: str, impl: str, guard: str, line: str) -> None:
        super().__init__(line)
        self.config, self.impl, self.guard, self.line = config, impl, guard, line
        self.rows: list[BenchRowJson] = []

    def as_json(self) -> CaughtJson:
        return {"config": self.config, "impl": self.impl, "guard": self.guard, "line": self.line}
