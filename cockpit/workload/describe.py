"""Ask the gates' child Python what the workload declares, and keep the answer.

The workload module may import torch at its top, so the cockpit never imports it: a child runs
`probes/workload_probe.py describe` and prints the manifest. The answer is cached under
`build/cockpit/` keyed on the files that declare it, so `cockpit workload show` and the gates
pay for the child (a torch import: ~2 s warm, 15-40 s the first time on a box) once per edit; the
caller's `watch` says so while it waits.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from cockpit.config import Config
from cockpit.errors import CockpitError
from cockpit.files import open_file, read_file
from cockpit.workload.gpumode_task import GpuModeTask, read_task
from cockpit.workload.manifest import Manifest, ManifestError, manifest_from_json

PROBE = Path(__file__).resolve().parent.parent / "probes" / "workload_probe.py"
MANIFEST_LINE = "MANIFEST "
DESCRIBE_TIMEOUT_S = 180.0
Watch = Callable[[str], AbstractContextManager[object]]
"""Around a child the caller waits on, given what it is doing ("describing the workload"): how a
verb says so and counts the time (cockpit/cli/waiting.py); the core prints nothing itself."""
NO_WORKLOAD = ('no workload named: add [workload] module = "workloads/NAME.py" (or gpumode = "DIR", or '
               'kernelbench = "PROBLEM.py") to cockpit.toml; `cockpit init` writes one to fill in')


@dataclass(frozen=True)
class WorkloadArgs:
    """How a gate's child is told which workload to load: arguments for the workload probe."""

    source: str
    task_file: str | None
    """A GPU MODE folder's task.yml, or a KernelBench problem's ModelNew files and grids, as JSON in
    a file (workspace-relative): a command line holds at most 128 KB per argument."""
    candidates: tuple[str, ...]

    def argv(self) -> list[str]:
        out = ["--workload", self.source]
        if self.task_file is not None:
            out += ["--task", self.task_file]
        if self.candidates:
            out += ["--candidates", json.dumps(list(self.candidates))]
        return out


def workload_args(workspace: Path, config: Config) -> WorkloadArgs:
    """The workload cockpit.toml names, ready for a child; CockpitError when none is named or a
    GPU MODE folder does not read."""
    w = config.workload
    if not w.named:
        raise CockpitError(NO_WORKLOAD)
    task_file, candidates = None, w.candidates
    if w.gpumode:
        folder = _inside(workspace, w.gpumode)
        # [workload] candidates may name submissions by path (solutions/correct/submission_triton.py):
        # read_task resolves them to files for the child and to candidate names (file stems)
        task = read_task(folder, w.candidates, bytes=w.bytes or None, flops=w.flops or None)
        task_file = _task_file(workspace, task)
        candidates = tuple(task["selected"])
    elif w.kernelbench:
        task_file = _task_file(workspace, {"model_new": model_new_files(workspace, config),
                                           "test_sizes": [dict(s) for s in w.test_sizes],
                                           "bench_sizes": [dict(s) for s in w.bench_sizes]})
    return WorkloadArgs(w.source, task_file, candidates)


MODEL_NEW = re.compile(rb"^class\s+ModelNew\b", re.MULTILINE)
MAX_SCANNED = 1 << 20
"""A file beside the problem is searched for `class ModelNew` in its first megabyte."""
MAX_MANIFEST_BYTES = 64 << 20
"""The biggest cached manifest read (the cockpit writes its own there): a bigger one is described again."""


def model_new_files(workspace: Path, config: Config) -> list[str]:
    """The files holding the engineer's ModelNew (workspace-relative): [workload] model_new, else the
    one file beside the problem that defines it (PROBLEM_new.py first). One line when none or
    several could be meant."""
    w = config.workload
    problem = _inside(workspace, w.kernelbench)
    if not problem.is_file():
        raise CockpitError(f"[workload] kernelbench = {w.kernelbench!r}: no such file in {workspace}")
    if w.model_new:
        named = [_inside(workspace, m) for m in w.model_new]
        for m, path in zip(w.model_new, named, strict=True):
            if not path.is_file():
                raise CockpitError(f"[workload] model_new = {m!r}: no such file in {workspace}")
        return [path.relative_to(workspace.resolve()).as_posix() for path in named]
    found = answers_beside(problem)
    if len(found) != 1:
        which = (f"several files beside it define ModelNew ({', '.join(p.name for p in found)})" if found
                 else "no file beside it defines class ModelNew")
        suggested = problem.with_name(f"{problem.stem}_new.py").relative_to(workspace.resolve()).as_posix()
        raise CockpitError(f"[workload] kernelbench = {w.kernelbench!r}: {which}; name yours with "
                           f'model_new = "{suggested}"')
    return [found[0].relative_to(workspace.resolve()).as_posix()]


def answers_beside(problem: Path) -> list[Path]:
    """The files beside a KernelBench problem that define `class ModelNew`: PROBLEM_new.py alone
    when it does, else every one."""
    beside = []
    for path in sorted(problem.parent.glob("*.py")):
        try:
            with open_file(path) as f:
                if path != problem and MODEL_NEW.search(f.read(MAX_SCANNED)):
                    beside.append(path)
        except OSError:
            continue
    preferred = [p for p in beside if p.stem == f"{problem.stem}_new"]
    return preferred or beside


def _task_file(workspace: Path, task: GpuModeTask | dict[str, object]) -> str:
    """The task as JSON under build/cockpit/, named by its content (written once per edit)."""
    text = json.dumps(task)
    relative = f"build/cockpit/tasks/{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    path = workspace / relative
    if not path.is_file():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise CockpitError(f"{path}: cannot write the workload's task for the gate's child "
                               f"({exc.strerror}); make the workspace's build/ folder writable") from exc
    return relative


def _inside(workspace: Path, relative: str) -> Path:
    path = (workspace / relative).resolve()
    if not path.is_relative_to(workspace.resolve()):
        raise CockpitError(f"[workload] {relative}: outside the workspace {workspace}; the gates read only "
                           f"the workspace: copy it in (cp -r {relative} {workspace}/) and name the copy")
    return path


def declaring_files(workspace: Path, config: Config) -> list[Path]:
    """The files whose change changes the manifest: the module (or the GPU MODE folder's files)
    and the contract itself."""
    w = config.workload
    files = [Path(__file__).resolve().parent / "spec.py", PROBE, PROBE.with_name("workload_load.py")]
    if w.gpumode:
        folder = _inside(workspace, w.gpumode)
        files += sorted(folder.glob("*.py")) + sorted(folder.glob("task.yml"))
        files += [PROBE.with_name("gpumode.py"), Path(__file__).resolve().parent / "formula.py"]
    elif w.kernelbench:
        problem = _inside(workspace, w.kernelbench)
        files += [PROBE.with_name("kernelbench.py"), problem, *sorted(problem.parent.glob("*.py"))]
    elif w.module.endswith(".py") or "/" in w.module:
        files.append(_inside(workspace, w.module))
    return files


def cache_key(workspace: Path, config: Config, python: str) -> str:
    w = config.workload
    h = hashlib.sha256(f"{w.source}|{w.candidates}|{w.bytes}|{w.flops}|{python}".encode())
    describer = Path(__file__).resolve().parent.parent / "probes" / "workload_load.py"
    for f in (*declaring_files(workspace, config), describer):  # a newer cockpit describes more
        try:
            st = f.stat()
            h.update(f"{f}:{st.st_mtime_ns}:{st.st_size}".encode())
        except OSError:
            h.update(f"{f}:missing".encode())
    return h.hexdigest()[:16]


def cache_path(workspace: Path) -> Path:
    return workspace / "build" / "cockpit" / "workload-manifest.json"


def cached(workspace: Path, config: Config, python: str) -> Manifest | None:
    """The manifest as last described, when nothing that declares it has changed since; no child."""
    try:
        data = json.loads(read_file(cache_path(workspace), MAX_MANIFEST_BYTES, "a cached manifest may be"))
        if data.get("key") == cache_key(workspace, config, python):
            return manifest_from_json(data["manifest"])
    except (OSError, ValueError, KeyError, AttributeError, ManifestError, CockpitError):
        pass
    return None


def workload_manifest(workspace: Path, config: Config, python: str, use_cache: bool = True,
                      watch: Watch | None = None) -> Manifest:
    """The manifest of the workspace's workload, from the cache or a child (`watch` around it)."""
    args = workload_args(workspace, config)
    cache = cache_path(workspace)
    key = cache_key(workspace, config, python)
    if use_cache and (known := cached(workspace, config, python)) is not None:
        return known
    data = run_describe(workspace, python, args, watch)
    try:
        manifest = manifest_from_json(data)
    except ManifestError as exc:
        raise CockpitError(f"{args.source}: the workload's description does not read ({exc})") from exc
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        tmp.write_text(json.dumps({"key": key, "manifest": data}), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass  # a read-only workspace still describes, it just asks again next time
    return manifest


def run_describe(workspace: Path, python: str, args: WorkloadArgs,
                 watch: Watch | None = None) -> dict[str, object]:
    """Run the child and return the manifest it prints; its last line is the error otherwise."""
    return ask(workspace, python, args, "describe", MANIFEST_LINE, "describing the workload", watch=watch)


def ask(workspace: Path, python: str, args: WorkloadArgs, mode: str, prefix: str, doing: str,
        extra: list[str] | None = None, watch: Watch | None = None) -> dict[str, object]:
    """One question to the workload probe that needs no GPU (`describe`, `space`): the JSON it
    prints after `prefix`; its last line is the error otherwise."""
    argv = [python, str(PROBE), mode, "--workspace", str(workspace), *args.argv(), *(extra or [])]
    env = dict(os.environ, COCKPIT_WORKSPACE=str(workspace))
    try:
        with watch(doing) if watch is not None else nullcontext():
            out = subprocess.run(argv, cwd=workspace, capture_output=True, text=True,
                                 timeout=DESCRIBE_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired as exc:
        raise CockpitError(f"{args.source}: {doing} took over {DESCRIBE_TIMEOUT_S:g} s "
                           "(does importing it run work?)") from exc
    except OSError as exc:
        raise CockpitError(f"cannot run {python} for {doing} ({exc.strerror}); "
                           "the gates run that interpreter: check it") from exc
    for line in out.stdout.splitlines():
        if line.startswith(prefix):
            try:
                data = json.loads(line[len(prefix):])
            except ValueError as exc:
                raise CockpitError(f"{args.source}: the workload probe printed a broken answer "
                                   f"for {doing}") from exc
            if isinstance(data, dict):
                return data
    lines = ([ln for ln in out.stdout.splitlines() if ln.strip()]
             or [ln for ln in out.stderr.splitlines() if ln.strip()])
    raise CockpitError(lines[-1] if lines else f"the workload probe exited {out.returncode} and said nothing")
