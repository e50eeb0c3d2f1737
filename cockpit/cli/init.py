"""`cockpit init [DIR] [--workload cuda|triton|callable|gpumode=DIR|kernelbench=FILE]`: a workspace
in your kernel's repository: a commented cockpit.toml and a workload module to fill in (a GPU MODE
folder or a KernelBench problem is read as it is; a problem with no answer beside it gets
PROBLEM_new.py, its Model as a ModelNew to start from), nothing of the shipped example. Never
overwrites a file without --force (the module and the answer never). What its cockpit.toml names
is recorded as trusted: the user made this workspace (`cockpit trust`)."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from cockpit.config import CONFIG_NAME, load_config
from cockpit.errors import CockpitError
from cockpit.session.trust import allow, what_runs
from cockpit.workload.describe import MAX_SCANNED, answers_beside
from cockpit.workload.gpumode_task import read_task
from cockpit.workload.model_new import NotAProblem, model_new_starter

KINDS = ("cuda", "triton", "callable")


def init(args: argparse.Namespace) -> int:
    """Write cockpit.toml (and workloads/NAME.py) into DIR; print what was written and what next."""
    root = args.dir.expanduser().resolve()
    if not root.is_dir():
        raise CockpitError(f"{root} is not a folder; create it first or pass your kernel repository")
    config = root / CONFIG_NAME
    if config.exists() and not args.force:
        raise CockpitError(f"{config} exists already; edit it, or pass --force to write a new one")
    kind, _, target = args.workload.partition("=")
    written: list[Path] = []
    answer: Answer | None = None
    named_after = ""  # the folder's name, when it names the kernel
    if kind == "kernelbench":
        text, answer = _kernelbench_config(root, target)
    elif kind == "gpumode":
        text = _gpumode_config(root, target)
    elif kind in KINDS:
        name = _name(args.name or root.name)  # an identifier already: the extension's name too
        text = _write_starters(root, kind, name, written)
        named_after = "" if args.name else name
    else:
        raise CockpitError(f"--workload {args.workload!r}: expected cuda, triton, callable, gpumode=DIR or "
                           "kernelbench=FILE")
    config.write_text(text, encoding="utf-8")
    written.insert(0, config)
    allow(what_runs(root, load_config(root)))  # the user made it: no question before its gates run
    wrote = _write_answer(answer, written)
    # gpumode and kernelbench are read as they are: nothing to fill in
    _say_written(root, written, named_after, answer, wrote, ready=kind in ("gpumode", "kernelbench"))
    return 0


def _write_answer(answer: Answer | None, written: list[Path]) -> bool:
    """The ModelNew starter written beside the problem (listed with what was written); False when
    there is none to write or a file is there."""
    if answer is None or not answer.write():
        return False
    written.append(answer.path)
    return True


def _kernelbench_config(root: Path, target: str) -> tuple[str, Answer | None]:
    """cockpit.toml naming a KernelBench problem, and the answer beside it; read before anything
    is written, so a problem that does not read stops init."""
    problem = (root / target).resolve()
    if not target or not problem.is_relative_to(root) or not problem.is_file():
        raise CockpitError("--workload kernelbench=FILE: FILE is a KernelBench problem inside the "
                           "workspace (copy it in: the gates read only the workspace)")
    answer = _answer(root, problem)
    text = _starter("cockpit.toml.tmpl").substitute(module="").replace(
        'module = ""', f'kernelbench = "{problem.relative_to(root).as_posix()}"\n'
        '# model_new = "PROBLEM_new.py"   # your class ModelNew (default: the one file beside it)')
    return text, answer


def _gpumode_config(root: Path, target: str) -> str:
    """cockpit.toml naming a GPU MODE problem folder; one that is not a problem is said now, not at
    the first gate."""
    folder = (root / target).resolve()
    if not target or not folder.is_relative_to(root):
        raise CockpitError("--workload gpumode=DIR: DIR is a problem folder inside the workspace "
                           "(copy it in: the gates read only the workspace)")
    read_task(folder)
    return _starter("cockpit.toml.tmpl").substitute(module="").replace(
        'module = ""', f'gpumode = "{folder.relative_to(root).as_posix()}"')


def _write_starters(root: Path, kind: str, name: str, written: list[Path]) -> str:
    """The workload module of `kind` (and for cuda the sources it builds: a kernel that runs, to
    replace with yours), each written unless a file is there; cockpit.toml naming the module."""
    module = root / "workloads" / f"{name}.py"
    relative = module.relative_to(root).as_posix()
    starters = [(module, f"{kind}.py.tmpl")]
    if kind == "cuda":
        starters += [(root / "csrc" / f"{name}.cu", "cuda_kernel.cu.tmpl"),
                     (root / "csrc" / f"{name}_binding.cpp", "cuda_binding.cpp.tmpl")]
    for path, starter in starters:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_starter(starter).substitute(name=name, module=relative, extension=name),
                            encoding="utf-8")
            written.append(path)
    return _starter("cockpit.toml.tmpl").substitute(module=relative)


def _say_written(root: Path, written: list[Path], named_after: str, answer: Answer | None, wrote: bool,
                 ready: bool) -> None:
    """The files written, one a line, then how the kernel was named, the answer, and what next."""
    for path in written:
        print(path)
    if named_after:
        print(f"(the kernel is named after the folder: {named_after}; `--name NAME` names it)")
    if answer is not None:
        print(answer.said(root, wrote))
    print(("next: " if ready else "next: fill in the workload, then ") + "`cockpit workload show` (no GPU "
          "needed) and `cockpit` (Enter starts the first session)"
          + (f"; your kernel goes in {answer.path.relative_to(root)}" if answer is not None else ""))


@dataclass(frozen=True)
class Answer:
    """PROBLEM_new.py, where the engineer's ModelNew goes, and its starter (None when a file is
    there already: never overwritten)."""

    path: Path
    text: str | None

    def write(self) -> bool:
        """The starter written; False when a file is there (one made since, too: kept)."""
        if self.text is None:
            return False
        try:
            with self.path.open("x", encoding="utf-8") as f:  # "x": a file made since is kept, not replaced
                f.write(self.text)
        except FileExistsError:
            return False
        except OSError as exc:
            raise CockpitError(f"{self.path}: cannot write the ModelNew to start from ({exc.strerror}); "
                               "make the problem's folder writable, or write your ModelNew there") from exc
        return True

    def said(self, root: Path, wrote: bool) -> str:
        shown = self.path.relative_to(root)
        if not wrote:
            return (f"({shown} is there already and defines no class ModelNew: left as it is; your ModelNew "
                    "goes in it)")
        return (f"({shown}: class ModelNew, a copy of Model to start from: it runs and passes correctness "
                "as it is; replace the torch ops in its forward, marked YOUR KERNEL GOES HERE, with your "
                "kernel: a load_inline or Triton launch, sketched at its top)")


def _answer(root: Path, problem: Path) -> Answer | None:
    """Where the engineer's ModelNew goes, when no file beside the problem defines one yet."""
    if answers_beside(problem):
        return None
    path = problem.with_name(f"{problem.stem}_new.py")
    if path.exists():
        return Answer(path, None)
    shown = problem.relative_to(root)
    try:
        with problem.open("rb") as f:
            data = f.read(MAX_SCANNED + 1)
        if len(data) > MAX_SCANNED:
            raise CockpitError(f"{shown}: over {MAX_SCANNED >> 20} MiB: not a KernelBench problem (a class "
                               "Model, get_inputs() and get_init_inputs())")
        return Answer(path, model_new_starter(data.decode("utf-8"), problem.name))
    except (OSError, UnicodeDecodeError) as exc:
        raise CockpitError(f"{shown}: cannot read it ({exc}); a KernelBench problem is a Python "
                           "file") from exc
    except NotAProblem as exc:
        raise CockpitError(str(exc).replace(problem.name, str(shown), 1)) from exc


def _name(given: str) -> str:
    """A module name from --name or the repository's folder: 'My-Kernels' -> 'my_kernels'."""
    name = re.sub(r"[^a-z0-9_]+", "_", given.lower()).strip("_")
    return name if name and not name[0].isdigit() else f"kernel_{name}".rstrip("_")


def _starter(name: str) -> Template:
    starter = resources.files("cockpit.workload") / "starters" / name
    return Template(starter.read_text(encoding="utf-8"))
