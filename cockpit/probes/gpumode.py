"""A GPU MODE problem folder as a cockpit workload, without editing its files.

GPU MODE (github.com/gpu-mode/reference-kernels) ships a problem as `task.yml` (test and
benchmark shapes), `reference.py` (`generate_input(**shape)`, `ref_kernel(data)`,
`check_implementation(data, output)`) and `submission*.py` (`custom_kernel(data)`). Its data is
ONE object, usually a tuple of tensors with the output buffer among them, handed over whole; here
the workload's inputs are the 1-tuple `(data,)`, so every candidate and reference is `fn(data)`.

Runs in the gates' child Python (the folder's own imports bring torch); the cockpit reads
task.yml (`cockpit.workload.gpumode_task.read_task`) and passes the shapes, the submission files
and cockpit.toml's byte and FLOP formulas.

What the profile gate profiles is declared here too: the first candidate on the largest benchmark
shape, every kernel its call launches (a folder names no kernel: its kernels are found by name in
ncu's report, as for any workload).
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from cockpit.workload.formula import Formula, parse_formula
from cockpit.workload.spec import NoBuild, Reference, Workload, custom

_REFERENCE_NAMES = ("generate_input", "ref_kernel", "check_implementation")


def gpumode_workload(folder: Path, tests: Sequence[Mapping[str, Any]],
                     benchmarks: Sequence[Mapping[str, Any]], submissions: list[str],
                     bytes: str | None = None, flops: str | None = None) -> Workload:
    """The workload of the GPU MODE problem in `folder`: one candidate per submission file (named by
    its stem), `ref_kernel` as the oracle and as the timed baseline "reference", the task's own
    `check_implementation` as the check, `tests` and `benchmarks` (task.yml's) as the grids, and a
    profile of the first candidate on the largest benchmark shape (every kernel of its call).

    `submissions` are paths relative to `folder` ("submission.py",
    "solutions/correct/submission_triton.py"); each is imported at its candidate's first call.
    `bytes` and `flops` are cockpit.toml's formulas over a shape's keys ("3 * size * size * 2",
    cockpit/workload/formula.py): the bench's GB/s and TFLOP/s, and the size order."""
    folder = Path(folder).resolve()
    search = _search_path(folder)
    reference = import_file(folder / "reference.py", "reference", search)
    missing = [name for name in _REFERENCE_NAMES if not callable(getattr(reference, name, None))]
    if missing:
        raise AttributeError(f"{folder / 'reference.py'} defines no {', '.join(missing)}; GPU MODE's "
                             "reference.py has generate_input, ref_kernel and check_implementation")

    candidates: dict[str, Callable[..., Any]] = {}
    for relative in submissions:
        path = (folder / relative).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such submission file")
        if path.stem in candidates:
            raise ValueError(f"two submissions named {path.stem!r}: candidates are named by file stem")
        candidates[path.stem] = _candidate(path, _module_name(folder, path), search)

    def make_inputs(seed: int, /, **shape: Any) -> tuple[Any]:
        # GPU MODE gives every task.yml shape its own seed: it is part of the shape (stable names,
        # GPU MODE's own data), so ours is ignored then and used only for a shape without one.
        # `seed` is positional-only so that a shape may carry a key "seed" too.
        if "seed" not in shape:
            shape["seed"] = seed
        return (reference.generate_input(**shape),)

    def ref_kernel(data: Any) -> Any:
        # A copy: ref_kernel writes the output buffer inside `data`, which the candidates write too;
        # the oracle's answer must not be the very tensor a candidate then overwrites.
        return reference.ref_kernel(_clone_data(data))

    def timed_reference(data: Any) -> Any:
        return reference.ref_kernel(data)

    def check_implementation(out: Any, ref: Any, shape: Mapping[str, Any],
                             inputs: Sequence[Any]) -> tuple[bool, str]:
        # GPU MODE's verdict, not ours: check_implementation recomputes the reference from the
        # data. On a copy, as GPU MODE's eval.py does: ref_kernel writes the data's output buffer,
        # which may be the very tensor `out` is, and would then compare the answer with itself.
        (data,) = inputs
        try:
            verdict = reference.check_implementation(_clone_data(data), out)
        except Exception as exc:  # a candidate that returns None or the wrong type fails here
            return False, f"check_implementation raised {type(exc).__name__}: {exc}"
        return check_verdict(verdict)

    workload = Workload(
        name=folder.name,
        candidates=candidates,
        references=(Reference("ref_kernel", ref_kernel, oracle=True),
                    Reference("reference", timed_reference, baseline=True)),
        make_inputs=make_inputs,
        test_grid=tuple(dict(shape) for shape in tests),
        bench_grid=tuple(dict(shape) for shape in benchmarks),
        build=NoBuild(),  # Triton and load_inline submissions compile at their first call
        check=custom(check_implementation),
        dtype_key=None,  # GPU MODE's shapes carry no dtype: the dtype is the problem's
        not_sizes=NOT_SIZES,
        output_in_inputs=True,  # generate_input makes the output buffer with the inputs
        bytes=_count(bytes),
        flops=_count(flops),
    )
    # profiled: every kernel of one call of the first submission kept, on the largest bench shape
    # by the workload's own size order (the byte model's, when one is given)
    return workload.or_every_kernel()


def _count(text: str | None) -> Formula | None:
    return None if text is None else parse_formula(text)


NOT_SIZES = ("seed", "contention")
"""A GPU MODE shape's keys that are not sizes: its seed, and how many contending blocks a
histogram's inputs have (vectorsum's correctness checked 3276800 and 26214400 and never its
smallest and largest bench sizes while the seed counted as one)."""


def check_verdict(verdict: Any) -> tuple[bool, str]:
    """check_implementation's answer as (ok, what). pmpp_v2 and later return (ok, message); the
    first pmpp problems returned a message alone, empty when it passed (GPU MODE's own
    `wrap_check_implementation` in problems/amd/eval.py reads both the same way)."""
    if isinstance(verdict, tuple) and len(verdict) == 2:
        ok, message = verdict
        return bool(ok), str(message) or f"check_implementation: {'pass' if ok else 'fail'}"
    message = "" if verdict is None else str(verdict)
    return not message, message or "check_implementation: pass"


def _candidate(path: Path, module_name: str, search: tuple[Path, ...]) -> Callable[[Any], Any]:
    # Imported at the first call, not here: a submission may compile at import (load_inline) or
    # need Triton, which describing the workload should not wait for, and a broken one then fails
    # as its own candidate instead of taking the whole workload down.
    @functools.cache
    def custom_kernel() -> Callable[[Any], Any]:
        module = import_file(path, module_name, search)
        kernel = getattr(module, "custom_kernel", None)
        if not callable(kernel):
            raise AttributeError(f"{path} defines no custom_kernel(data)")
        return cast(Callable[[Any], Any], kernel)

    def candidate(data: Any) -> Any:
        return custom_kernel()(data)

    candidate.__qualname__ = candidate.__name__ = path.stem
    return candidate


def _search_path(folder: Path) -> tuple[Path, ...]:
    # task.yml's `files:` copies shared files such as `../utils.py` beside reference.py; the parent
    # folder after the problem's own does the same without copying (a folder's own utils.py wins).
    return (folder, folder.parent)


def import_file(path: Path, module_name: str, search: tuple[Path, ...]) -> ModuleType:
    """`path` as module `module_name`, with its plain imports (`from task import input_t`,
    `from utils import ...`) finding the files of `search` first."""
    for place in reversed(search):
        if str(place) in sys.path:
            sys.path.remove(str(place))
        sys.path.insert(0, str(place))
    _forget_other_copies(search)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _forget_other_copies(search: tuple[Path, ...]) -> None:
    # Every GPU MODE problem has its own `task`, `reference` and `utils`: a module of that name
    # imported from elsewhere (another problem's folder) must not stand in for this folder's.
    ours = {place.resolve() for place in search}
    for place in search:
        for file in place.glob("*.py"):
            module = sys.modules.get(file.stem)
            where = getattr(module, "__file__", None)
            if where is not None and Path(where).resolve().parent not in ours:
                del sys.modules[file.stem]


def _module_name(folder: Path, path: Path) -> str:
    # Unique per problem and file: several submissions define `custom_kernel`.
    return "gpumode_" + re.sub(r"\W", "_", f"{folder.name}_{path.stem}")


def _clone_data(data: Any) -> Any:
    """A copy of every tensor in `data` (tuples, lists, dicts), as GPU MODE's eval.py makes one:
    the correctness check's own copy (torch is imported by then)."""
    from cockpit.probes.copies import clone

    return clone(data)
