"""A KernelBench problem as a cockpit workload, as it is: no adapter.

A KernelBench problem file holds `class Model(nn.Module)`, module globals that size it
(`batch_size = 4096`, `dim = 393216`, ...), `get_inputs()` and `get_init_inputs()`; the engineer's
answer is `class ModelNew` with the same constructor, in a file of its own (KernelBench's
`custom_src`). Here, as KernelBench's own evaluation does:

- weights are paired by seed: the seed set, then `Model(*get_init_inputs())`; the same seed set
  again, then `ModelNew(...)`; one pair per shape, built at the shape's first inputs;
- `Model` is the timed baseline ("Model"), and in float64 with the same weights (a deep copy) the
  oracle; the check is KernelBench's, allclose with atol = rtol = 1e-2;
- the calls run under `torch.no_grad()` (inference, as KernelBench times them);
- the profile is every kernel of one call of the first ModelNew on the largest timed shape.

A shape is the problem's whole-number globals (`{"batch_size": 4096, "dim": 393216}`): the bench
grid is the problem's own shape; correctness adds the same problem scaled down (its size-like
globals divided, then made odd), where kernels break. `get_inputs()` runs with the globals set to
the shape and torch's default device set to the GPU, so a 6 GB input is made there, never on the
host first. A call's inputs end with the shape's name: how a candidate finds its shape's model.

Runs in the gates' child Python; the cockpit passes the problem, the ModelNew files and any grid
from cockpit.toml in the task file (cockpit/workload/describe.py).
"""

from __future__ import annotations

import copy
import functools
import re
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from cockpit.probes.gpumode import import_file
from cockpit.workload.spec import NoBuild, Reference, Workload, allclose, shape_name

INIT_SEED = 42
"""The seed set before each model is made (KernelBench's default `seed_num`)."""
TOLERANCE = 1e-2
"""KernelBench's atol and rtol."""
SCALED_DOWN = 32
"""Correctness's scaled shapes: size-like globals divided by this, then the same made odd (+1)."""
SHAPES_HELD = 2
"""Shapes whose models are kept at once (a level-3 network per shape adds up)."""
_SIZE_NAMES = re.compile(r"^(batch(_size)?|[mnkbMNKB]|dim|size|length|seq(uence)?_len(gth)?|height|width|"
                         r"depth|num_tokens|tokens|.*_features|hidden(_size|_dim)?|(embed|head|input|output|model)_dim)$")
SMALLEST_SIZE = 16
"""A global under this is a parameter (an axis, a kernel size, a stride), never scaled."""


class ProblemError(Exception):
    """One line naming the problem's file and line."""


def kernelbench_workload(problem: Path, model_new: Sequence[Path], device: str = "cuda",
                         test_sizes: Sequence[Mapping[str, int]] = (),
                         bench_sizes: Sequence[Mapping[str, int]] = ()) -> Workload:
    """The workload of the KernelBench problem file `problem`: one candidate per ModelNew file (named
    by its stem), `Model` as the baseline and the float64 oracle. `test_sizes`/`bench_sizes` replace
    the grids (globals -> values; the globals they leave out keep the problem's values)."""
    problem = problem.resolve()
    module = _import(problem, "kernelbench_problem_" + re.sub(r"\W", "_", problem.stem))
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not callable(getattr(module, name, None)):
            raise ProblemError(f"{problem.name}: defines no {name}; a KernelBench problem has class Model, "
                               "get_inputs() and get_init_inputs()")
    own = {k: v for k, v in vars(module).items()
           if not k.startswith("_") and isinstance(v, int) and not isinstance(v, bool)}
    if not model_new:
        raise ProblemError(f"{problem.name}: no ModelNew to run: name its file with [workload] model_new")
    import torch

    models: dict[str, tuple[Any, dict[str, Any]]] = {}

    def set_globals(shape: Mapping[str, Any]) -> None:
        for k, v in shape.items():
            setattr(module, k, v)

    def pair(shape: Mapping[str, Any]) -> dict[str, Any]:
        """The shape's models: Model, its float64 copy, and each ModelNew, all from the same seed."""
        name = shape_name(shape)
        if name not in models:
            set_globals(shape)
            with torch.device(device):
                torch.manual_seed(INIT_SEED)
                init = _call(problem, module.get_init_inputs)
                torch.manual_seed(INIT_SEED)
                ref = _call(problem, module.Model, *init).to(device).eval()
                made = {"Model": ref, "fp64": copy.deepcopy(ref).double()}
                for path in model_new:
                    torch.manual_seed(INIT_SEED)
                    made[path.stem] = _call(path, new_class(path), *init).to(device).eval()
            while len(models) >= SHAPES_HELD:
                del models[next(iter(models))]
            models[name] = (dict(shape), made)
        return models[name][1]

    @functools.cache
    def new_class(path: Path) -> Callable[..., Any]:
        # imported at the first call: a ModelNew may compile at import (load_inline), which
        # describing the workload should not wait for, and a broken one fails as its own candidate
        found = getattr(_import(path, "kernelbench_new_" + re.sub(r"\W", "_", path.stem)), "ModelNew", None)
        if not callable(found):
            raise ProblemError(f"{path.name}: defines no class ModelNew")
        return found  # type: ignore[no-any-return]

    def make_inputs(seed: int, /, **shape: Any) -> tuple[Any, ...]:
        pair(shape)
        set_globals(shape)
        torch.manual_seed(seed)
        with torch.device(device):
            inputs = _call(problem, module.get_inputs)
        return (*(x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs), shape_name(shape))

    def runner(which: str, fp64: bool = False) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            *inputs, name = args
            model = models[name][1][which]
            if fp64:
                inputs = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                          for x in inputs]
            with torch.no_grad():
                return model(*inputs)
        run.__qualname__ = run.__name__ = which
        return run

    def size(**shape: Any) -> int:
        total = 1
        for k, v in shape.items():
            if is_size(k, own.get(k, v)):
                total *= max(1, int(v))
        return total

    bench = [dict(own, **s) for s in bench_sizes] or [dict(own)]
    tests = [dict(own, **s) for s in test_sizes] or scaled_down(own)
    counted = functools.partial(moved_bytes, module, set_globals)
    # profiled: every kernel of one call of the first ModelNew on the largest timed shape (a GEMM
    # and its epilogue are two kernels: the verdict names the longest and its share)
    return Workload(
        name=problem.stem,
        candidates={path.stem: runner(path.stem) for path in model_new},
        references=(Reference("fp64", runner("fp64", fp64=True), oracle=True),
                    Reference("Model", runner("Model"), baseline=True)),
        make_inputs=make_inputs,
        test_grid=tuple(tests),
        bench_grid=tuple(bench),
        build=NoBuild(),  # a load_inline or Triton ModelNew compiles at its first call
        check=allclose(TOLERANCE, TOLERANCE),
        bytes=counted if counted(**bench[0]) > 0 else None,  # no GB/s rather than a made-up one
        dtype_key=None,  # KernelBench's problems carry no dtype axis: the dtype is get_inputs()'s
        size=size,
    ).or_every_kernel()


def is_size(name: str, value: Any) -> bool:
    """A global that sizes the problem (batch_size, dim, in_features, N, ...), not a parameter."""
    return (isinstance(value, int) and not isinstance(value, bool) and value >= SMALLEST_SIZE
            and bool(_SIZE_NAMES.match(name)))


def scaled_down(own: Mapping[str, int]) -> list[dict[str, int]]:
    """The problem's shape with its sizes divided by 32, then the same made odd: small and ragged
    (its parameters, and any global that is not a size, as they are)."""
    sizes = [k for k, v in own.items() if is_size(k, v)]
    if not sizes:
        return []
    small = {**own, **{k: max(1, own[k] // SCALED_DOWN) for k in sizes}}
    odd = {**own, **{k: max(1, own[k] // SCALED_DOWN) + 1 for k in sizes}}
    return [small, odd] if odd != small else [small]


def moved_bytes(module: ModuleType, set_globals: Callable[[Mapping[str, Any]], None], **shape: Any) -> float:
    """What one call must move at least: its inputs, its weights and its output, counted on torch's
    meta device (shapes only: nothing is allocated, no GPU needed). 0 when the model cannot run
    there (the bench then states no GB/s for it)."""
    import torch

    set_globals(shape)
    try:
        with torch.device("meta"):
            torch.manual_seed(INIT_SEED)
            inputs = list(module.get_inputs())
            model = module.Model(*module.get_init_inputs())
            total = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
            total += sum(p.numel() * p.element_size() for p in model.parameters())
            with torch.no_grad():
                out = model(*inputs)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            total += sum(x.numel() * x.element_size() for x in outs if isinstance(x, torch.Tensor))
    except Exception:  # an op without a meta kernel, a model that reads its input's values
        return 0.0
    return float(total)


def _call(path: Path, fn: Callable[..., Any], *args: Any) -> Any:
    """The problem's (or ModelNew's) own code; what it raises is one line at its file and line."""
    try:
        return fn(*args)
    except ProblemError:
        raise
    except Exception as exc:
        raise ProblemError(where(exc, path)) from exc


def where(exc: BaseException, path: Path) -> str:
    """`FILE:LINE: Type: message` at the deepest frame in `path`, else the file's name."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == path]
    text = str(exc).splitlines()[0] if str(exc) else ""
    what = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return f"{path.name}:{frames[-1].lineno}: {what}" if frames else f"{path.name}: {what}"


def _import(path: Path, name: str) -> ModuleType:
    """The problem's (or ModelNew's) file as a module, its helpers beside it importable (the
    loader GPU MODE folders use); what its top level raises is one line at its file and line."""
    if not path.is_file():
        raise ProblemError(f"{path}: no such file")
    try:
        return import_file(path, name, (path.parent,))
    except Exception as exc:
        if isinstance(exc, ImportError) and exc.name in ("torch", "triton"):
            raise
        raise ProblemError(where(exc, path.resolve())) from exc
