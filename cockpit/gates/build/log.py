"""Reading a CUDA build's log, whatever drives it (the cockpit's own ninja build, CMake, setup.py,
make or plain nvcc): ninja progress, ptxas resource usage, compiler and linker errors, the step
ninja or make says failed, and `.ninja_log` step durations for the ETA. Pure functions over text."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cockpit.files import read_tail
from cockpit.hardware.limits import limits_for
from cockpit.hardware.symbols import demangle

_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\]\s+(.*)$")
_OUTPUT = re.compile(r"\s-o\s+(\S+)")
_ENTRY = re.compile(r"ptxas info\s*: Compiling entry function '([^']+)' for '(sm_\d+a?)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"ptxas info\s*: Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes smem)?")
_PTXAS_ERROR = re.compile(r"ptxas (?:error|fatal)\s*: (.*)")
_SOURCE = r"(?P<file>[^\s:()]+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hxx|inl))"
_NVCC_ERROR = re.compile(_SOURCE + r"\((?P<line>\d+)\): (?:catastrophic )?error:?\s*(?P<msg>.*)")
_GCC_ERROR = re.compile(_SOURCE + r":(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<msg>.*)")
_UNDEFINED_REF = re.compile(r"undefined reference to [`'](?P<sym>[^'`]+)'")
_MULTIPLE_DEF = re.compile(r"(?:(?P<file>[^\s:]+):\([^)]*\): )?multiple definition of [`'](?P<sym>[^'`]+)'")
_UNDEFINED_SYMBOL = re.compile(r"undefined symbol: (?P<sym>\S+)")
_LD_ERROR = re.compile(r"(?:/usr/bin/ld|collect2|ld\.lld|ld): (?:error: )?(?P<msg>.*)")
_LD_EXIT = re.compile(r"^ld returned \d+ exit status$")
_SAYS_ONLY_LD_FAILED = re.compile(r"\bld returned \d+ exit status")
_FAILED = re.compile(r"^FAILED: (?:\[code=(?P<code>\d+)\] )?(?P<outputs>\S.*?)\s*$")
_NINJA_OWN = re.compile(r"^(?:\[\d+/\d+\] |FAILED: |ninja: )")
# `make: *** [Makefile:4: k.o] Error 2` (make 4), `make[2]: *** [k.o] Error 1` (older, recursive)
_MAKE_FAILED = re.compile(r"^g?make(?:\[\d+\])?: \*\*\* \[(?:[^\]]*?:\d+: )?(?P<target>[^\]]+)\] "
                          r"(?:Error (?P<code>\d+))?")
_MAKE_OWN = re.compile(r"^g?make(?:\[\d+\])?: |^\[\s*\d+%\] ")  # make's lines, CMake's `[ 50%] Building`
# What a failed step's error line says, among its echoed command and the compiler's context lines.
_ERRORISH = re.compile(r"\b(?:error|fatal|not found|no such file|cannot|undefined|multiple definition|"
                       r"permission denied|killed|segmentation fault)\b", re.IGNORECASE)


@dataclass(frozen=True)
class NinjaStep:
    n: int
    total: int
    output: str
    """What this step makes: from `-o`, else the last word of the step's description (CMake's
    `Linking CUDA shared library libk.so`)."""


def parse_ninja_step(line: str) -> NinjaStep | None:
    m = _NINJA_STEP.match(line)
    if not m:
        return None
    out = _OUTPUT.search(m.group(3))
    words = m.group(3).split()
    name = out.group(1) if out else words[-1] if words else ""
    return NinjaStep(int(m.group(1)), int(m.group(2)), Path(name).name or name)


@dataclass(frozen=True)
class KernelResources:
    name: str
    arch: str
    registers: int
    smem: int
    stack: int
    spill_stores: int
    spill_loads: int


def parse_ptxas(lines: Iterable[str]) -> list[KernelResources]:
    """Every kernel ptxas reported with `-Xptxas -v`, in order (one per kernel per arch)."""
    kernels: list[KernelResources] = []
    entry: tuple[str, str] | None = None
    frame = (0, 0, 0)
    for line in lines:
        m = _ENTRY.search(line)
        if m:
            entry, frame = (m.group(1), m.group(2)), (0, 0, 0)
            continue
        f = _FRAME.search(line)
        if f and entry:
            frame = (int(f.group(1)), int(f.group(2)), int(f.group(3)))
            continue
        u = _USED.search(line)
        if u and entry:
            kernels.append(KernelResources(entry[0], entry[1], int(u.group(1)),
                                           int(u.group(2) or 0), *frame))
            entry = None
    return kernels


def parse_cuobjdump(text: str, arch_hint: str = "") -> list[KernelResources]:
    """`cuobjdump --dump-resource-usage LIB.so`: what ptxas said, for a build that was cached.
    cuobjdump has no spill counts: LOCAL (per-thread local memory) stands in for the stack.

    Its SHARED counts the shared memory the system reserves per block on sm_80 and later (1 KB),
    which ptxas's "bytes smem" does not: recorded on an H200, the example kernels ptxas gave
    no static shared memory read SHARED:1024 from the same library. The kernel's own static
    shared memory is the rest, so a cached build is judged as the fresh one was (the reserved KB
    counts against the SM, which the occupancy calculator adds itself, not against the 48 KB a
    block may use without the opt-in)."""
    kernels: list[KernelResources] = []
    arch = arch_hint
    name: str | None = None
    for line in text.splitlines():
        a = re.search(r"arch = (sm_\d+a?)", line)
        if a:
            arch = a.group(1)
        f = re.match(r"\s*Function (\S+):", line)
        if f:
            name = f.group(1)
            continue
        r = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", line)
        if r and name:
            static = own_static_smem(int(r.group(3)), arch)
            kernels.append(KernelResources(name, arch, int(r.group(1)), static, int(r.group(2)), 0, 0))
            name = None
    return kernels


def own_static_smem(shared: int, arch: str) -> int:
    """cuobjdump's SHARED less what the architecture reserves per block (parse_cuobjdump)."""
    limits = limits_for(arch)
    return max(0, shared - (limits.smem_reserved_per_block if limits is not None else 0))


@dataclass(frozen=True)
class BuildError:
    kind: str  # "compile" | "ptxas" | "link" | "undefined symbol"
    message: str
    file: str = ""
    line: int = 0

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (
            f"{self.file}: " if self.file else "")
        return f"{where}{self.message}"

    @property
    def says_what(self) -> bool:
        """False for collect2's `ld returned 1 exit status`: it says only that the linker failed."""
        return not _LD_EXIT.match(self.message)


def parse_errors(lines: Iterable[str]) -> list[BuildError]:
    """Compiler, ptxas and linker errors as `file:line: message`; undefined symbols named."""
    errors: list[BuildError] = []
    seen: set[tuple[str, str, int]] = set()

    def add(error: BuildError) -> None:
        key = (error.message, error.file, error.line)
        if key not in seen:
            seen.add(key)
            errors.append(error)

    for line in lines:
        for pattern in (_NVCC_ERROR, _GCC_ERROR):
            m = pattern.search(line)
            if m:
                add(BuildError("compile", m.group("msg").strip(), m.group("file"), int(m.group("line"))))
                break
        else:
            if m := _PTXAS_ERROR.search(line):
                add(BuildError("ptxas", m.group(1).strip()))
            elif m := _UNDEFINED_SYMBOL.search(line):
                add(BuildError("undefined symbol", f"undefined symbol {demangle(m.group('sym'))}"))
            elif m := _UNDEFINED_REF.search(line):
                add(BuildError("link", f"undefined reference to {demangle(m.group('sym'))}"))
            elif m := _MULTIPLE_DEF.search(line):
                add(BuildError("link", f"multiple definition of {demangle(m.group('sym'))}",
                               m.group("file") or ""))
            elif (m := _LD_ERROR.match(line.strip())) and "error" in line:
                add(BuildError("link", m.group("msg").strip()))
    return errors


@dataclass(frozen=True)
class StepFailure:
    """A ninja or make step that failed: what it was making and the first thing it said."""

    target: str
    said: str
    """The step's first line that reads as an error, else its first line of output that is not its
    echoed command ("" if none)."""
    exit_code: int | None = None


def parse_failed_steps(lines: Sequence[str]) -> list[StepFailure]:
    """Every step ninja (`FAILED: [code=N] target`) or make (`make: *** [target] Error N`) says
    failed. Ninja prints the command next, then the step's output up to its next line of its
    own; make prints the step's output before its line, after its previous one."""
    steps: list[StepFailure] = []
    for i, line in enumerate(lines):
        if m := _FAILED.match(line):
            command = lines[i + 1].strip() if i + 1 < len(lines) else ""
            output = []
            for out in lines[i + 2:]:
                if _NINJA_OWN.match(out):
                    break
                output.append(out)
            said = _first_said(output, skip=command)
            target = m.group("outputs").split()[0]
        elif m := _MAKE_FAILED.match(line):
            start = next((j + 1 for j in range(i - 1, -1, -1) if _MAKE_OWN.match(lines[j])), 0)
            if start == i and steps:
                continue  # a parent make passing its child's failure up
            said = _first_said(lines[start:i], skip="", last=True)
            target = m.group("target")
        else:
            continue
        steps.append(StepFailure(Path(target).name, said, int(m.group("code")) if m.group("code") else None))
    return steps


def _first_said(output: Sequence[str], skip: str, last: bool = False) -> str:
    """The first line of a step's output that reads as an error, else its first line (its last:
    make echoes the command first) other than `skip`."""
    said = [out.strip() for out in output if out.strip() and out.strip() != skip]
    errorish = (out for out in said if _ERRORISH.search(out) and not _SAYS_ONLY_LD_FAILED.search(out))
    return next(errorish, said[-1 if last else 0] if said else "")


def up_to_date(lines: Iterable[str]) -> bool:
    return any(line.strip() == "ninja: no work to do." for line in lines)


# .ninja_log -----------------------------------------------------------------------------------


NINJA_LOG_READ_BYTES = 16 << 20
"""What is read of a .ninja_log: its end (an ETA needs only the latest builds)."""


@dataclass(frozen=True)
class NinjaInvocation:
    """The steps of one ninja run: output -> (start ms, end ms), relative to that run's start."""

    steps: dict[str, tuple[int, int]]

    @property
    def wall_s(self) -> float:
        if not self.steps:
            return 0.0
        return (max(e for _, e in self.steps.values()) - min(s for s, _ in self.steps.values())) / 1000


def read_ninja_log(path: Path) -> list[NinjaInvocation]:
    """The invocations recorded in a `.ninja_log` (v5+), oldest first; [] when there is none.
    Each run's times restart near zero, which is how runs are told apart."""
    try:  # through the door: the build folder may come with a clone; its newest runs are at the end
        data, size = read_tail(path, NINJA_LOG_READ_BYTES)
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()[1 if size > len(data) else 0:]
    runs: list[dict[str, tuple[int, int]]] = []
    last_start = -1
    for line in lines:
        parts = line.split("\t")
        if line.startswith("#") or len(parts) < 4:
            continue
        try:
            start, end = int(parts[0]), int(parts[1])
        except ValueError:
            continue
        if start < last_start or not runs:
            runs.append({})
        last_start = start
        runs[-1][Path(parts[3]).name] = (start, end)
    return [NinjaInvocation(r) for r in runs]


def expected_wall_s(history: Sequence[NinjaInvocation], total_steps: int) -> float | None:
    """How long the latest earlier build with the same number of steps took, if any."""
    for run in reversed(history):
        if len(run.steps) == total_steps:
            return run.wall_s
    return None
