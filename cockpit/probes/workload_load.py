"""The workload, loaded in the gates' CHILD Python, and the manifest it describes.

The child may be the user's own Python (the one with their CUDA torch), where the cockpit is
not installed: the folder holding the `cockpit` package is put on sys.path first, so a workload
module can `from cockpit.workload import ...` (which imports no torch and nothing else of the
cockpit). A module that does not load is one line naming its file and line.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

_PACKAGE_PARENT = Path(__file__).resolve().parents[2]
if not (_PACKAGE_PARENT / "cockpit" / "workload" / "spec.py").exists():
    raise ImportError(f"{_PACKAGE_PARENT} does not hold the cockpit package")
if str(_PACKAGE_PARENT) not in sys.path:
    sys.path.insert(0, str(_PACKAGE_PARENT))

from cockpit.workload.probe_wire import (  # noqa: E402  (after the path above)
    BuildJson,
    GridShapeJson,
    GroupSpaceJson,
    KnobDefaultsJson,
    KnobJson,
    ManifestJson,
    ProfileJson,
    SpaceJson,
)
from cockpit.workload.spec import Build, Knob, Workload  # noqa: E402
from cockpit.workload.tuned import GroupKey, Scalar  # noqa: E402

MANIFEST_SCHEMA = 1


def first_line(exc: BaseException) -> str:
    """`Type: first line of the message`, for a one-line log."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class WorkloadLoadError(Exception):
    """A workload that cannot be used; the message is one line that names the file and line."""


def load_workload(source: str, workspace: Path, task: Mapping[str, Any] | None = None,
                  only: Sequence[str] = ()) -> Workload:
    """`source` as cockpit.toml names it: a workspace-relative .py path, a dotted module,
    "gpumode:DIR" (then `task` holds its task.yml, read by the cockpit) or "kernelbench:FILE.py"
    (then `task` names its ModelNew files and any grid); `only` keeps those candidates."""
    importable(workspace)
    if source.startswith("gpumode:"):
        workload = _gpumode(source.removeprefix("gpumode:"), workspace, task or {})
    elif source.startswith("kernelbench:"):
        workload = _kernelbench(source.removeprefix("kernelbench:"), workspace, task or {})
    else:
        workload = _from_module(source, workspace).or_every_kernel()
    if only:
        missing = [name for name in only if name not in workload.candidates]
        if missing:
            raise WorkloadLoadError(f"{source}: no candidate {missing[0]!r} (it declares: "
                                    f"{', '.join(workload.candidates)}); fix [workload] candidates")
        workload = _keep(workload, only)
    return workload


def _gpumode(folder_name: str, workspace: Path, task: Mapping[str, Any]) -> Workload:
    """A GPU MODE task folder as a workload (its task.yml read by the cockpit, passed as `task`)."""
    from cockpit.probes.gpumode import gpumode_workload

    folder = _inside(workspace, folder_name)
    try:
        return gpumode_workload(folder, list(task.get("tests", [])), list(task.get("benchmarks", [])),
                                list(task.get("submissions", [])), bytes=task.get("bytes"),
                                flops=task.get("flops"))
    except Exception as exc:
        raise WorkloadLoadError(_where(exc, folder)) from exc


def _kernelbench(problem_file: str, workspace: Path, task: Mapping[str, Any]) -> Workload:
    """A KernelBench problem as a workload, with the ModelNew files and any grid `task` names."""
    from cockpit.probes.kernelbench import ProblemError, kernelbench_workload

    problem = _inside(workspace, problem_file)
    model_new = [_inside(workspace, str(p)) for p in task.get("model_new", [])]
    try:
        return kernelbench_workload(problem, model_new, test_sizes=list(task.get("test_sizes", [])),
                                    bench_sizes=list(task.get("bench_sizes", [])))
    except ProblemError as exc:
        raise WorkloadLoadError(str(exc)) from exc
    except Exception as exc:
        raise WorkloadLoadError(_where(exc, problem)) from exc


def importable(workspace: Path) -> None:
    """What a workload may import in the gates' child: the workspace root's packages and modules, a
    `src/` layout's packages (from the repository root, as pip's editable install would put them),
    then whatever the gates' Python has installed."""
    for place in (workspace / "src", workspace):
        if place.is_dir() and str(place) not in sys.path:
            sys.path.insert(0, str(place))


def _keep(w: Workload, only: Sequence[str]) -> Workload:
    from dataclasses import replace

    return replace(w, candidates={name: w.candidates[name] for name in only})


def _inside(workspace: Path, relative: str) -> Path:
    path = (workspace / relative).resolve()
    if not path.is_relative_to(workspace.resolve()):
        raise WorkloadLoadError(f"{relative}: outside the workspace {workspace}; name a path inside it")
    return path


def _from_module(source: str, workspace: Path) -> Workload:
    if source.endswith(".py") or "/" in source:
        module = _module_from_file(source, workspace)
    else:
        try:
            module = importlib.import_module(source)
        except Exception as exc:
            raise WorkloadLoadError(_where(exc, None, source)) from exc
    found = getattr(module, "WORKLOAD", None)
    if callable(found) and not isinstance(found, Workload):
        try:
            found = found()
        except Exception as exc:
            raise WorkloadLoadError(_where(exc, Path(module.__file__ or source))) from exc
    if not isinstance(found, Workload):
        raise WorkloadLoadError(f"{source}: defines no WORKLOAD = Workload(...) (found "
                                f"{type(found).__name__}); see docs/workloads.md")
    if not found.candidates:
        raise WorkloadLoadError(f"{source}: WORKLOAD declares no candidate (the kernel to run)")
    return found


def _module_from_file(source: str, workspace: Path) -> ModuleType:
    """The workload's module from its file in the workspace, its folder importable (so its own
    helper modules are); one line naming the file and line when it raises."""
    path = _inside(workspace, source)
    if not path.is_file():
        raise WorkloadLoadError(f"{source}: no such file in {workspace}; fix [workload] module in "
                                "cockpit.toml (or run `cockpit init` to write one)")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(f"cockpit_workload_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise WorkloadLoadError(f"{source}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise WorkloadLoadError(_where(exc, path)) from exc
    return module


def _where(exc: BaseException, path: Path | None, name: str | None = None) -> str:
    """`file:line: Type: message` at the deepest frame in the workload's own file; a missing torch
    is said as what to do."""
    missing = _missing_module(exc)
    if missing == "torch":
        traceback.print_exc()  # stays in the gate's log
        return (f"torch does not import in {sys.executable} ({exc}): install torch's CUDA build in this "
                "python, or start the cockpit from the environment that has it")
    if missing == "triton":
        traceback.print_exc()
        return _triton_missing(exc)
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{_short(Path(exc.filename))}:{exc.lineno}: SyntaxError: {exc.msg}"
    mine = _own_frames(frames, path)
    what = first_line(exc)
    if not (mine or frames):
        return f"{name or path}: {what}"
    frame = (mine or frames)[-1]
    return f"{_short(Path(frame.filename))}:{frame.lineno}: {what}"


def _missing_module(exc: BaseException) -> str | None:
    """"torch" or "triton" when the exception is that module failing to import, else None."""
    if not isinstance(exc, ImportError):
        return None
    return next((m for m in ("torch", "triton") if exc.name == m or str(exc) == f"No module named '{m}'"),
                None)


def _triton_missing(exc: BaseException) -> str:
    """The line for a Triton that does not import: where the workload imported it, and what to do."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename]
    at = f"{_short(Path(frames[-1].filename))}:{frames[-1].lineno}: " if frames else ""
    return (f"{at}triton does not import in {sys.executable} ({exc}): install Triton in this python "
            "(pip install triton; torch's CUDA wheels bring it), or import it inside the function "
            "that launches the kernel, so describing the workload does not need it")


def _own_frames(frames: traceback.StackSummary, path: Path | None) -> list[traceback.FrameSummary]:
    """The frames in the workload's own file (or its folder's): where its line is said from."""
    if path is None:
        return []
    folder = path if path.is_dir() else path.parent
    # "<frozen os>" is no file: resolved, it would land in the working folder (the workspace)
    return [f for f in frames
            if not f.filename.startswith("<") and Path(f.filename).resolve().is_relative_to(folder)]


def _short(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def manifest_json(w: Workload, source: str, limits: Mapping[str, Any] | None = None) -> ManifestJson:
    """The manifest (cockpit/workload/manifest.py reads it): every shape with its name, FLOPs and
    bytes as the workload's own functions count them."""
    combos = knob_combinations(w)
    groups = tune_groups(w)
    allowed = _allowed(w, combos, groups, limits) if w.rule is not None and combos else None
    defaults: list[KnobDefaultsJson] = [{"group": g, "knobs": knob_defaults(w, g)} for g in groups]
    return {
        "schema": MANIFEST_SCHEMA, "name": w.name, "source": source, "build": _build_json(w.build),
        "candidates": list(w.candidates),
        "references": [{"name": r.name, "oracle": r.oracle, "baseline": r.baseline, "optional": r.optional}
                       for r in w.references],
        "test_grid": [_row(w, s) for s in w.test_grid],
        "correctness": [w.shape_name(s) for s in w.correctness_grid()],
        "bench_grid": [_row(w, s) for s in w.bench_grid],
        "check": {"kind": w.check.kind, "tolerance": dict(w.check.tolerance), "atol": dict(w.check.atol)},
        "dtype_key": w.dtype_key, "writes_output": w.make_output is not None,
        "profile": _profile_json(w), "knobs": [_knob_json(k) for k in w.knobs],
        "knob_combinations": len(combos), "knob_allowed": allowed,
        "keep_per": list(w.keep_per),
        "tune_grid": _grid_json(w, w.tune_grid),
        "knob_defaults": defaults,
        "modes": list(w.modes), "grad_inputs": list(w.grad_inputs), "group_words": dict(w.group_words),
    }


def _build_json(build: Build) -> BuildJson:
    """How the workload builds its kernel (a build kind without a field gets that field's default)."""
    return {"kind": build.kind, "name": getattr(build, "name", None),
            "sources": list(getattr(build, "sources", ())),
            "include_dirs": list(getattr(build, "include_dirs", ())),
            "cuda_flags": list(getattr(build, "cuda_flags", ())),
            "variant_build": getattr(build, "variant_build", "rebuild"),
            "tuned_header": getattr(build, "tuned_header", None)}


def _knob_json(k: Knob) -> KnobJson:
    """One knob; a define knob's untuned value is the source's own #ifndef default unless the
    workload says."""
    return {"name": k.name, "values": list(k.values), "via": k.via, "macro": k.macro or k.name,
            "start": k.default if k.via == "define" else k.start, "hints": dict(k.hints),
            "words": dict(k.words) if isinstance(k.words, Mapping) else k.words}


def knob_combinations(w: Workload) -> list[tuple[Any, ...]]:
    """Every combination of the knobs' values (none when the workload has no knob)."""
    return list(itertools.product(*(k.values for k in w.knobs))) if w.knobs else []


def _allowed(w: Workload, combos: Sequence[tuple[Any, ...]], groups: Sequence[GroupKey],
             limits: Mapping[str, Any] | None) -> int:
    """How many combinations the workload's rule allows on the first tune group, on a GPU with
    these limits."""
    names = [k.name for k in w.knobs]
    known = dict(limits or {})
    group = groups[0] if groups else {}
    return sum(1 for c in combos if rule_verdict(w, dict(zip(names, c, strict=True)), known, group) is None)


def _profile_json(w: Workload) -> ProfileJson | None:
    """What `cockpit profile` profiles: the kernel, the shape and the candidate (the first one
    when the workload names none); None when it declares no profile."""
    if w.profile is None:
        return None
    return {"kernel": w.profile.kernel, "shape": _row(w, w.profile.shape),
            "candidate": w.profile.candidate or next(iter(w.candidates))}


def _grid_json(w: Workload, grid: Sequence[Mapping[str, Any]] | None) -> list[GridShapeJson] | None:
    """A grid's rows (None for a grid the workload does not declare)."""
    return [_row(w, s) for s in grid] if grid is not None else None


def _row(w: Workload, shape: Mapping[str, Any]) -> GridShapeJson:
    return {"name": w.shape_name(shape), "shape": dict(shape),
            "flops": float(w.flops(**shape)) if w.flops else None,
            "bytes": float(w.bytes(**shape)) if w.bytes else None}


def tune_groups(w: Workload) -> list[GroupKey]:
    """The keep_per values among the shapes a tune times (its tune grid, else the bench grid), in order."""
    keys: list[GroupKey] = []
    for shape in w.tune_grid if w.tune_grid is not None else w.bench_grid:
        key = {k: shape[k] for k in w.keep_per if k in shape}
        if key not in keys:
            keys.append(key)
    return keys


def knob_defaults(w: Workload, group: GroupKey) -> dict[str, Any]:
    """The knob values the workload says a group runs untuned ({} when it says nothing); one line
    naming the workload and the group when its function raises."""
    if w.knob_defaults is None:
        return {}
    try:
        return dict(w.knob_defaults(**group))
    except Exception as exc:  # the workload's own code: a bug to name, in one line
        why = f"{w.name}: knob_defaults raised on {dict(group)}: {first_line(exc)}"
        raise WorkloadLoadError(why) from exc


def rule_verdict(w: Workload, values: Mapping[str, Any], limits: Mapping[str, Any],
                 group: Mapping[str, Any]) -> str | None:
    """The rule's answer; a rule of three parameters is told the group too."""
    import inspect

    if w.rule is None:
        return None
    try:
        takes_group = len(inspect.signature(w.rule).parameters) >= 3
    except (TypeError, ValueError):
        takes_group = False
    try:
        args = (dict(values), dict(limits), dict(group)) if takes_group else (dict(values), dict(limits))
        why = w.rule(*args)
    except Exception as exc:  # a rule that raises is a bug to name, not a rejection to count
        raise WorkloadLoadError(f"{w.name}: the knob rule raised on {dict(values)} "
                                f"{dict(group) or ''}: {first_line(exc)}") from exc
    return None if why is None else str(why)


def space(w: Workload, limits: Mapping[str, Any]) -> SpaceJson:
    """Per tune group, every knob combination the workload's rule allows on a GPU with these limits,
    and how many it rejects for which reason (the rule's words, numbers folded so alike reasons
    count together)."""
    import re

    names = [k.name for k in w.knobs]
    combos = knob_combinations(w)
    groups: list[GroupSpaceJson] = []
    for group in tune_groups(w):
        feasible: list[list[Scalar]] = []
        rejected: dict[str, int] = {}
        examples: dict[str, str] = {}
        for combo in combos:
            why = rule_verdict(w, dict(zip(names, combo, strict=True)), limits, group)
            if why is None:
                feasible.append(list(combo))
                continue
            reason = re.sub(r"\d+(\.\d+)?", "N", why)
            rejected[reason] = rejected.get(reason, 0) + 1
            examples.setdefault(reason, why)
        groups.append({"key": group, "feasible": feasible, "rejected": rejected, "examples": examples})
    return {"knobs": names, "groups": groups}
