"""Each configuration of a workload's define knobs compiled once, in the background: the workload's
own Extension with the configuration's -D flags, built by the workload probe in a child (the build
gate's ninja build) into `build/tune/<name>_v<key>/`, under a module name of its own so the
measuring child can hold many at once; or, for `Extension(variant_build="relink")`, its .cu objects
alone, linked with one base build's other objects under the base's module name (seconds, not the
binding's ~40 s: cockpit/probes/relink.py).

A build is reused when its stamp names the same content: the sources and include files, the flags,
the arch and the Python. The stamp is written last, after the module is in place, so a killed build
is never trusted. ptxas's report is read from the build's log for registers and spills.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cockpit.gates.build.log import parse_errors, parse_ptxas
from cockpit.tune.space import Variant
from cockpit.workload.builds import Extension
from cockpit.workload.describe import PROBE

STAMP = "cockpit-variant.json"
HEADERS = (".h", ".hpp", ".cuh", ".hh", ".inl")
RELINK_MARK = "cockpit-build: relinking "
"""The line a relinked variant's build log starts its own compile with (probes/workload_probe.py)."""
"""Files beside a source that it may include: a change to any of them is a new build."""
BUILD_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Built:
    key: str
    ok: bool
    seconds: float
    """The build's wall time; 0 when reused."""
    cached: bool
    error: str = ""
    spills: int = 0
    """Bytes spilled per thread (stores + loads), summed over the kernels ptxas reported."""
    registers: int = 0
    """The most registers any kernel uses."""


def content_key(
    workspace: Path,
    sources: Sequence[str],
    include_dirs: Sequence[str],
    flags: Sequence[str],
    arch: str,
    python: str,
) -> str:
    h = hashlib.sha256()
    files = [workspace / s for s in sources]
    for folder in dict.fromkeys((workspace / s).parent for s in sources):  # the headers they include
        files += sorted(p for p in folder.glob("*") if p.suffix in HEADERS and p.is_file())
    for d in include_dirs:
        files += sorted(p for p in (workspace / d).rglob("*") if p.is_file())
    for f in files:
        h.update(str(f.relative_to(workspace) if f.is_relative_to(workspace) else f).encode() + b"\0")
        h.update((f.read_bytes() if f.is_file() else b"-") + b"\0")
    for part in (*flags, arch, python):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:20]


def build_dir(workspace: Path, name: str, variant: str) -> Path:
    """Where the variant is built (the contract's own answer: `Extension.with_flags(...).build_dir`)."""
    return Extension(name, ()).with_flags(variant, []).build_dir(workspace)


def torch_arch(arch: str) -> str:
    """ "sm_90" -> "9.0", as TORCH_CUDA_ARCH_LIST takes it."""
    digits = arch.removeprefix("sm_").rstrip("af")
    return f"{digits[:-1]}.{digits[-1]}"


def build_variant(
    workspace: Path,
    python: str,
    workload_argv: Sequence[str],
    name: str,
    sources: Sequence[str],
    include_dirs: Sequence[str],
    variant: Variant,
    arch: str,
    jobs: int,
    relink: bool = False,
) -> Built:
    """The variant's module: reused when its stamp matches, else built now in a child (`relink`: the
    .cu objects alone, linked with a base build's others: probes/relink.py)."""
    flags = list(variant.flags)
    module = Extension(name, (), variant_build="relink" if relink else "rebuild").with_flags(
        variant.key, []).module_name
    key = content_key(workspace, sources, include_dirs, flags, arch, python)
    folder = build_dir(workspace, name, variant.key)
    log = folder / "tune-build.log"
    try:
        stamp = json.loads((folder / STAMP).read_text(encoding="utf-8"))
        if stamp.get("key") == key and (folder / f"{module}.so").exists():
            return _with_ptxas(Built(key, bool(stamp.get("ok")), 0.0, True, str(stamp.get("error", ""))), log)
    except (OSError, ValueError, AttributeError):
        pass
    folder.mkdir(parents=True, exist_ok=True)
    argv = [
        python,
        str(PROBE),
        "build",
        "--workspace",
        str(workspace),
        *workload_argv,
        "--variant",
        variant.key,
        "--defines",
        json.dumps(flags),
        "--out",
        str(folder / "build.json"),
    ]
    env = dict(
        os.environ,
        COCKPIT_WORKSPACE=str(workspace),
        TORCH_CUDA_ARCH_LIST=torch_arch(arch),
        MAX_JOBS=str(max(1, jobs)),
        PYTHONUNBUFFERED="1",
    )
    started = time.monotonic()
    try:
        with log.open("w", encoding="utf-8") as out:
            code = subprocess.call(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=workspace,
                env=env,
                timeout=BUILD_TIMEOUT_S,
                start_new_session=True,
            )
    except subprocess.TimeoutExpired:
        return Built(key, False, BUILD_TIMEOUT_S, False, f"the build took more than {BUILD_TIMEOUT_S:.0f} s")
    seconds = time.monotonic() - started
    text = log.read_text(encoding="utf-8", errors="replace")
    error = "" if code == 0 else _why(text, code)
    if code == 0:  # a failed build is not stamped: the next search tries again (it may be the box)
        tmp = folder / f".{STAMP}.tmp"
        tmp.write_text(json.dumps({"key": key, "ok": True, "flags": flags}), encoding="utf-8")
        os.replace(tmp, folder / STAMP)
    return _with_ptxas(Built(key, code == 0, seconds, False, error), log)


def _why(text: str, code: int) -> str:
    lines = text.splitlines()
    errors = parse_errors(lines)
    if errors:
        return str(errors[0])
    said = [ln.strip() for ln in lines if ln.strip()]
    return said[-1][:300] if said else f"the build exited {code}"


def _with_ptxas(built: Built, log: Path) -> Built:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return built
    # a relinked variant's log may open with the base build's own ptxas report: only its own counts
    kernels = parse_ptxas(text.rpartition(RELINK_MARK)[2].splitlines() if RELINK_MARK in text
                          else text.splitlines())
    if not kernels:
        return built
    from dataclasses import replace

    return replace(
        built,
        spills=sum(k.spill_stores + k.spill_loads for k in kernels),
        registers=max(k.registers for k in kernels),
    )


class BuildPool:
    """Builds in background threads, ahead of the timing; one future per variant however often asked."""

    def __init__(self, build_one: Callable[[Variant], Built], workers: int) -> None:
        self._build_one = build_one
        self.workers = max(1, workers)
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="build")
        self._futures: dict[str, Future[Built]] = {}

    def submit(self, variant: Variant) -> Future[Built]:
        key = variant.key
        if key not in self._futures:
            self._futures[key] = self._pool.submit(self._build_one, variant)
        return self._futures[key]

    @property
    def queued(self) -> int:
        return sum(1 for f in self._futures.values() if not f.done())

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
