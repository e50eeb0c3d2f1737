"""A GPU MODE problem's `task.yml`, read in the cockpit's own process.

GPU MODE (github.com/gpu-mode/reference-kernels) declares a problem's shapes in `task.yml`:
`tests:` and `benchmarks:` lists of shapes such as `{size: 127, seed: 4242}`. The cockpit reads
them here (PyYAML is a cockpit dependency, not necessarily the child's) and hands them to
`cockpit.probes.gpumode.gpumode_workload` in the child, which imports the folder's Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any, TypedDict

import yaml

from cockpit.errors import CockpitError
from cockpit.files import RefusedFile, open_file
from cockpit.workload.formula import FormulaError, parse_formula

_EXAMPLE = "shapes such as {size: 127, seed: 4242}"
MAX_TASK_BYTES = 1 << 20
"""A GPU MODE task.yml lists a few dozen shapes in a few KB: a file over 1 MiB is not read."""
MAX_EXPANDED = 4 << 20
"""What the document may weigh with its aliases expanded (about its JSON's bytes): an alias bomb
of a few hundred bytes would otherwise become gigabytes on their way to the child."""


class _Refused(Exception):
    """The document outgrew a budget while it was composed; the message says which."""


class _BudgetLoader(yaml.SafeLoader):
    """PyYAML's safe loader (the pure-Python one, so composing can be watched) that weighs every
    node as it is composed, an alias at the weight of what it names, and stops past MAX_EXPANDED."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._weight: dict[int, int] = {}

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        alias = self.check_event(yaml.AliasEvent)
        node = super().compose_node(parent, index)
        if node is None or alias:
            if node is not None and id(node) not in self._weight:
                raise _Refused("an alias inside the value it names (a loop); write the value out")
            return node
        if isinstance(node, yaml.ScalarNode):
            weight = len(node.value) + 2
        elif isinstance(node, yaml.SequenceNode):
            weight = 1 + sum(self._weight[id(child)] for child in node.value)
        else:
            weight = 1 + sum(self._weight[id(k)] + self._weight[id(v)] for k, v in node.value)
        if weight > MAX_EXPANDED:
            raise _Refused(f"its aliases expand to over {MAX_EXPANDED >> 20} MB of values (an alias bomb?); "
                           "write the shapes out")
        self._weight[id(node)] = weight
        return node


class GpuModeTask(TypedDict):
    """What the child needs of task.yml (JSON-safe), and what the cockpit shows of it."""

    tests: list[dict[str, object]]
    benchmarks: list[dict[str, object]]
    submissions: list[str]
    """The submission files the child imports, relative to the folder: the folder's
    submission*.py, sorted, or the files `[workload] candidates` selects, in its order."""
    selected: list[str]
    """The candidates `[workload] candidates` selects, by name (the file stems, in its order):
    what the child keeps (`--candidates`); empty: all of `submissions`."""
    bytes: str | None
    """`[workload] bytes`: bytes one call moves, a formula over the shape's keys
    (cockpit/workload/formula.py), checked on every shape here; None: no byte model."""
    flops: str | None
    """`[workload] flops`: likewise, the floating-point operations of one call."""
    lang: str | None
    description: str


def read_task(folder: Path, candidates: Sequence[str] = (), bytes: str | None = None,
              flops: str | None = None) -> GpuModeTask:
    """The shapes, submissions, language and description of the GPU MODE problem in `folder`;
    a CockpitError naming the file and what is wrong otherwise.

    `candidates` (cockpit.toml's `[workload] candidates`) selects submissions: a stem of a
    submission*.py beside task.yml ("submission"), or a path relative to the folder
    ("solutions/correct/submission_triton.py"); each is a candidate named by its file stem.
    `bytes` and `flops` are formulas over the shape's keys ("3 * size * size * 2"): the bench's
    GB/s and TFLOP/s."""
    task = folder / "task.yml"
    if not task.exists():  # a FIFO or a folder in its place is named by the read
        raise CockpitError(f"{task}: not found; a GPU MODE problem folder has task.yml beside "
                           "reference.py and submission.py")
    data = _load(task)
    if not isinstance(data, dict):
        raise CockpitError(f"{task}: should be a mapping with `tests:` and `benchmarks:` lists, "
                           f"not {type(data).__name__}")
    if not (folder / "reference.py").is_file():
        raise CockpitError(f"{folder / 'reference.py'}: not found; GPU MODE's reference.py defines "
                           "generate_input, ref_kernel and check_implementation")
    submissions = sorted(p.name for p in folder.glob("submission*.py") if p.is_file())
    if not submissions and not candidates:
        raise CockpitError(f"{folder}: no submission*.py; GPU MODE's submission.py defines "
                           "custom_kernel(data)")
    selected = [_select(folder, name, submissions) for name in candidates]
    _unique_stems(selected)
    description = data.get("description")
    lang = data.get("lang")
    tests, benchmarks = _shapes(task, data, "tests"), _shapes(task, data, "benchmarks")
    for key, formula in (("bytes", bytes), ("flops", flops)):
        if formula is not None:
            _check_formula(key, formula, folder, tests + benchmarks)
    return GpuModeTask(
        tests=tests,
        benchmarks=benchmarks,
        submissions=selected or submissions,
        selected=[PurePosixPath(path).stem for path in selected],
        bytes=bytes,
        flops=flops,
        lang=None if lang is None else str(lang),
        description=description.strip() if isinstance(description, str) else "",
    )


def _select(folder: Path, name: str, submissions: Sequence[str]) -> str:
    """A `[workload] candidates` entry as the submission file it selects, relative to the folder
    (POSIX separators): a path ("solutions/correct/submission_triton.py") or a stem of a
    submission*.py beside task.yml ("submission")."""
    if "/" not in name and "\\" not in name and not name.endswith(".py"):
        if f"{name}.py" in submissions:
            return f"{name}.py"
        raise CockpitError(f"[workload] candidates: no submission {name!r} in {folder} (its submission*.py: "
                           f"{', '.join(PurePosixPath(s).stem for s in submissions) or 'none'}"
                           f"{_by_path(folder)}); name a file elsewhere in the folder by its path")
    relative = PurePosixPath(name.replace("\\", "/"))
    path = (folder / relative).resolve()
    if relative.is_absolute() or not path.is_relative_to(folder.resolve()):
        raise CockpitError(f"[workload] candidates: {name}: outside the problem folder {folder}; "
                           "name a submission inside it, relative to the folder")
    if path.suffix != ".py" or not path.is_file():
        raise CockpitError(f"[workload] candidates: {name}: no such .py file in {folder}"
                           f"{_by_path(folder, ' (')}")
    return path.relative_to(folder.resolve()).as_posix()


def _by_path(folder: Path, lead: str = "; ") -> str:
    """The submissions under the folder's subfolders (GPU MODE's solutions/*/), as a hint."""
    found = sorted(p.relative_to(folder).as_posix() for p in folder.glob("*/*/*.py")
                   if p.is_file() and not p.name.startswith("_"))[:4]
    if not found:
        return ""
    return f"{lead}by path: {', '.join(found)}" + (")" if lead == " (" else "")


def _unique_stems(selected: Sequence[str]) -> None:
    seen: dict[str, str] = {}
    for path in selected:
        stem = PurePosixPath(path).stem
        if stem in seen:
            if seen[stem] == path:
                raise CockpitError(f"[workload] candidates: {path} is selected twice; name it once")
            raise CockpitError(f"[workload] candidates: {seen[stem]} and {path} are both named {stem!r} "
                               "(a candidate is named by its file stem); select one of them")
        seen[stem] = path


def _check_formula(key: str, text: str, folder: Path, shapes: Sequence[dict[str, object]]) -> None:
    """A byte or FLOP formula that reads, and counts every shape of task.yml."""
    try:
        formula = parse_formula(text)
        for shape in shapes:
            formula(**shape)
    except FormulaError as exc:
        raise CockpitError(f"cockpit.toml [workload] {key}: {exc} (task.yml's shape keys: "
                           f"{', '.join(_keys(shapes))}; e.g. {key} = \"3 * size * size * 2\")") from None


def _keys(shapes: Sequence[dict[str, object]]) -> list[str]:
    keys: list[str] = []
    for shape in shapes:
        keys += [k for k in shape if k not in keys]
    return keys


def _load(task: Path) -> Any:
    try:
        with open_file(task) as f:
            data = f.read(MAX_TASK_BYTES + 1)
        text = data.decode("utf-8")
    except RefusedFile:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise CockpitError(f"{task}: cannot be read: {exc}") from exc
    if len(data) > MAX_TASK_BYTES:
        size = task.stat().st_size
        raise CockpitError(f"{task}: refused: {size / 1e6:.1f} MB, over the {MAX_TASK_BYTES / 1e6:.1f} MB a "
                           "task.yml may be (GPU MODE's list a few dozen shapes); cut it down")
    try:
        return yaml.load(text, Loader=_BudgetLoader)  # a safe loader: task.yml builds no Python objects
    except _Refused as exc:
        raise CockpitError(f"{task}: refused: {exc}") from None
    except RecursionError:
        raise CockpitError(f"{task}: refused: nested deeper than it can be read; "
                           "a task.yml is a list of flat shapes") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}" if mark is not None else ""
        raise CockpitError(f"{task}{where}: not valid YAML: {_one_line(exc.problem or exc.context)}") from exc
    except yaml.reader.ReaderError as exc:
        line = text[:exc.position].count("\n") + 1
        raise CockpitError(f"{task}:{line}: not valid YAML: a control character "
                           f"(#x{exc.character:04x}); remove it") from exc
    except yaml.YAMLError as exc:
        raise CockpitError(f"{task}: not valid YAML: {_one_line(exc)}") from exc


def _shapes(task: Path, data: dict[Any, Any], key: str) -> list[dict[str, object]]:
    value = data.get(key)
    if value is None:
        raise CockpitError(f"{task}: no `{key}:` list ({_EXAMPLE})")
    if not isinstance(value, list) or not value:
        raise CockpitError(f"{task}: `{key}:` should be a non-empty list of {_EXAMPLE}, not {value!r}")
    for number, shape in enumerate(value, 1):
        if not isinstance(shape, dict) or not shape or not all(isinstance(k, str) for k in shape):
            raise CockpitError(f"{task}: `{key}:` item {number} is {shape!r}, not one of {_EXAMPLE}")
    return [dict(shape) for shape in value]


def _one_line(what: object) -> str:
    return " ".join(str(what).split())
