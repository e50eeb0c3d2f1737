"""`[workload]`: which kernel the gates run, and how the bench times it.

The kernel itself (how it is built, its candidates and references, inputs, grids, tolerance,
FLOP/byte counts, knobs) is declared in the workload: a Python module or a GPU MODE problem
folder (docs/workloads.md). This table names it and holds the bench's method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.config.moved import refuse_moved
from cockpit.config.reader import ConfigReader


@dataclass(frozen=True)
class WorkloadConfig:
    """`[workload]`: the workload the gates run and the bench's method."""

    module: str = ""
    """A workload module: a path relative to the workspace ("workloads/softmax.py") or a dotted
    name importable by the gates' Python ("mykernels.softmax_workload")."""
    gpumode: str = ""
    """A GPU MODE reference-kernels problem folder (task.yml, reference.py, submission*.py)."""
    candidates: tuple[str, ...] = ()
    """Which candidates to run (default: all the workload declares; for a GPU MODE folder, the
    submission files by stem)."""
    reps: int = 30
    warmup: int = 5
    settle_ms: float = 100.0
    """Before each timed block, each implementation runs this long untimed, so it is timed at its
    own steady clock: a power-capped GPU needs ~100 ms to settle after a lighter kernel."""
    rounds: int = 2
    """Timed blocks per implementation and shape, in alternating order (drift hits all alike)."""

    @property
    def named(self) -> bool:
        return bool(self.module or self.gpumode)

    @property
    def source(self) -> str:
        """How the workload is named, for messages and the manifest: the module, or gpumode:DIR."""
        return self.module or (f"gpumode:{self.gpumode}" if self.gpumode else "")


def read_workload(table: Mapping[str, Any], reader: ConfigReader) -> WorkloadConfig:
    d = WorkloadConfig()
    refuse_moved(table, "workload", reader)
    keys = ("module", "gpumode", "candidates", "reps", "warmup", "settle_ms", "rounds")
    reader.check_keys(table, "workload", keys)

    def count(key: str, low: int) -> int:
        return int(reader.number(table.get(key, getattr(d, key)), f"workload.{key}",
                                 lambda v: v >= low and float(v).is_integer(),
                                 f"a whole number >= {low}"))

    def text(key: str) -> str:
        value = table.get(key, "")
        if not isinstance(value, str) or "\0" in value:
            raise reader.fail(f"workload.{key}", f"{value!r} is not allowed (expected a path or module name)")
        return value.strip()

    module, gpumode = text("module"), text("gpumode")
    if module and gpumode:
        raise reader.fail("workload.gpumode", "name one workload: module or gpumode, not both")
    candidates = table.get("candidates", [])
    if not isinstance(candidates, list) or not all(isinstance(c, str) and c for c in candidates):
        raise reader.fail("workload.candidates", f"{candidates!r} is not allowed (expected a list of "
                          "candidate names)")
    return WorkloadConfig(
        module=module, gpumode=gpumode, candidates=tuple(candidates),
        reps=count("reps", 3), warmup=count("warmup", 1),
        settle_ms=reader.number(table.get("settle_ms", d.settle_ms), "workload.settle_ms",
                                lambda v: 0 <= v <= 5000, "milliseconds from 0 to 5000"),
        rounds=count("rounds", 1),
    )
