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
    kernelbench: str = ""
    """A KernelBench problem file (class Model, its sizing globals, get_inputs, get_init_inputs)."""
    model_new: tuple[str, ...] = ()
    """The files holding the engineer's `class ModelNew` for `kernelbench` (default: the one file
    beside the problem that defines it, PROBLEM_new.py first); each is a candidate, by stem."""
    test_sizes: tuple[Mapping[str, int], ...] = ()
    """A KernelBench problem's correctness shapes, as its globals: [{batch_size = 16, dim = 1000}]
    (default: its own shape scaled down, then made odd)."""
    bench_sizes: tuple[Mapping[str, int], ...] = ()
    """A KernelBench problem's timed shapes (default: the problem's own)."""
    candidates: tuple[str, ...] = ()
    """Which candidates to run (default: all the workload declares; for a GPU MODE folder, the
    submission files by stem, or by path relative to the folder: solutions/correct/submission_triton.py)."""
    bytes: str = ""
    """A GPU MODE folder's bytes moved per call: a formula over its task.yml shape keys
    ("3 * size * size * 2"; cockpit/workload/formula.py), for GB/s. "" : none."""
    flops: str = ""
    """A GPU MODE folder's floating-point operations per call, likewise, for TFLOP/s."""
    reps: int = 30
    warmup: int = 5
    settle_ms: float = 100.0
    """Before each timed block, each implementation runs this long untimed, so it is timed at its
    own steady clock: a power-capped GPU needs ~100 ms to settle after a lighter kernel."""
    rounds: int = 2
    """Timed blocks per implementation and shape, in alternating order (drift hits all alike)."""

    @property
    def named(self) -> bool:
        return bool(self.module or self.gpumode or self.kernelbench)

    @property
    def source(self) -> str:
        """How the workload is named, for messages and the manifest: the module, gpumode:DIR or
        kernelbench:FILE."""
        if self.gpumode:
            return f"gpumode:{self.gpumode}"
        return f"kernelbench:{self.kernelbench}" if self.kernelbench else self.module


def read_workload(table: Mapping[str, Any], reader: ConfigReader) -> WorkloadConfig:
    d = WorkloadConfig()
    refuse_moved(table, "workload", reader)
    keys = ("module", "gpumode", "kernelbench", "model_new", "test_sizes", "bench_sizes", "candidates",
            "bytes", "flops", "reps", "warmup", "settle_ms", "rounds")
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

    module, gpumode, kernelbench = text("module"), text("gpumode"), text("kernelbench")
    named = [k for k, v in (("module", module), ("gpumode", gpumode), ("kernelbench", kernelbench)) if v]
    if len(named) > 1:
        raise reader.fail(f"workload.{named[1]}", f"name one workload: {' or '.join(named)}, not both")
    model_new = _model_new(table, kernelbench, reader)
    counts = {key: _count_formula(table, key, gpumode, reader) for key in ("bytes", "flops")}
    candidates = _candidates(table, reader)
    return WorkloadConfig(
        module=module, gpumode=gpumode, kernelbench=kernelbench,
        model_new=model_new,
        test_sizes=_sizes(table, "test_sizes", reader), bench_sizes=_sizes(table, "bench_sizes", reader),
        candidates=tuple(candidates), bytes=counts["bytes"], flops=counts["flops"],
        reps=count("reps", 3), warmup=count("warmup", 1),
        settle_ms=reader.number(table.get("settle_ms", d.settle_ms), "workload.settle_ms",
                                lambda v: 0 <= v <= 5000, "milliseconds from 0 to 5000"),
        rounds=count("rounds", 1),
    )


def _model_new(table: Mapping[str, Any], kernelbench: str, reader: ConfigReader) -> tuple[str, ...]:
    """`model_new`: the file, or files, holding the engineer's class ModelNew; only beside a
    KernelBench problem."""
    model_new = table.get("model_new", [])
    model_new = [model_new] if isinstance(model_new, str) else model_new
    if not isinstance(model_new, list) or not all(isinstance(m, str) and m.strip() and "\0" not in m
                                                  for m in model_new):
        raise reader.fail("workload.model_new", f"{model_new!r} is not allowed (expected a file, or a list "
                          'of files, holding class ModelNew: model_new = "problem_new.py")')
    if model_new and not kernelbench:
        raise reader.fail("workload.model_new", "model_new names a KernelBench answer: add kernelbench = "
                          '"PROBLEM.py" beside it')
    return tuple(m.strip() for m in model_new)


def _count_formula(table: Mapping[str, Any], key: str, gpumode: str, reader: ConfigReader) -> str:
    """`bytes` or `flops`: a formula over a GPU MODE folder's shape keys; a module declares its own."""
    value = table.get(key, "")
    if not isinstance(value, str) or "\0" in value or len(value) > 500:
        raise reader.fail(f"workload.{key}", f"{value!r} is not allowed (expected a formula over the "
                          'shape\'s keys in quotes, e.g. "3 * size * size * 2")')
    if value.strip() and not gpumode:
        raise reader.fail(f"workload.{key}", f"{key} counts a GPU MODE folder's calls "
                          f"(gpumode = \"DIR\"); a workload module declares {key}= in its Workload")
    return value.strip()


def _candidates(table: Mapping[str, Any], reader: ConfigReader) -> list[str]:
    """`candidates`: the names of the candidates to run (none: every one)."""
    candidates = table.get("candidates", [])
    if not isinstance(candidates, list) or not all(isinstance(c, str) and c for c in candidates):
        raise reader.fail("workload.candidates", f"{candidates!r} is not allowed (expected a list of "
                          "candidate names)")
    return candidates


def _is_globals(sizes: Any) -> bool:
    """One table of a problem's globals: identifiers, each to a whole number > 0."""
    return isinstance(sizes, dict) and bool(sizes) and all(
        isinstance(k, str) and k.isidentifier() and isinstance(v, int) and not isinstance(v, bool) and v > 0
        for k, v in sizes.items())


def _sizes(table: Mapping[str, Any], key: str, reader: ConfigReader) -> tuple[Mapping[str, int], ...]:
    """`test_sizes`/`bench_sizes`: a list of tables of whole numbers, the problem's globals."""
    value = table.get(key, [])
    if not isinstance(value, list) or not all(_is_globals(s) for s in value):
        raise reader.fail(f"workload.{key}", f"{value!r} is not allowed (expected a list of the problem's "
                          "globals with whole numbers > 0, e.g. [{batch_size = 16, dim = 1000}])")
    if value and not table.get("kernelbench"):
        raise reader.fail(f"workload.{key}", f"{key} sizes a KernelBench problem: add "
                          'kernelbench = "PROBLEM.py"')
    return tuple(dict(s) for s in value)
