"""Each configuration compiled once, alone, in the background: csrc/attention.cu (no torch
header: seconds, not the ~50 s of the binding) into its own small shared library with a C entry
(`cockpit_attn_forward_contiguous`) that the measuring probe loads with ctypes.

The library is cached in `<workspace>/build/tune/` under a content key: the kernel's sources,
the nvcc version, the flags, the arch and the configuration. It is written under a temporary
name and renamed into place, so a killed run leaves at most a stray temporary file, never a
lock or a half-written library that a later run would trust. ptxas's `-v` report is kept next
to it, so a cache hit still knows the registers and spills.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.gates.build_log import KernelResources, parse_errors, parse_ptxas
from cockpit.hardware.symbols import demangle_all, function_parts
from cockpit.tune.space import KernelParams

# The build gate's nvcc flags, and torch's own defaults for extensions (the kernel is timed as
# the extension would build it); -Xptxas=-v for the registers and spills.
NVCC_FLAGS = ("-std=c++17", "-O3", "-Xptxas=-v", "-lineinfo", "--use_fast_math",
              "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
              "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
              "--expt-relaxed-constexpr", "-shared", "-Xcompiler", "-fPIC")
SOURCES = ("attention.cu", "attention.h", "tuned_config.h")
COMPILE_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Compiled:
    params: KernelParams
    head_dim: int
    key: str
    library: Path | None
    """None when nvcc failed."""
    seconds: float
    """nvcc's wall time; 0 for a cache hit."""
    cached: bool
    kernels: tuple[KernelResources, ...] = ()
    """ptxas -v for this head dim's kernels."""
    error: str = ""


@dataclass(frozen=True)
class Toolchain:
    nvcc: str
    version: str
    """`nvcc --version`'s last line: part of every content key."""


def find_toolchain(nvcc: str = "nvcc") -> Toolchain:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CockpitError(f"nvcc does not run ({exc}): put CUDA's bin folder on PATH") from exc
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        raise CockpitError(f"nvcc --version failed: {out.stderr.strip()[:200]}")
    return Toolchain(nvcc, lines[-1])


def arch_flags(arch: str) -> tuple[str, ...]:
    """SASS for the target and its PTX, so a newer GPU can still run it through the JIT."""
    number = arch.removeprefix("sm_")
    return (f"-gencode=arch=compute_{number},code=[sm_{number},compute_{number}]",)


def content_key(csrc: Path, toolchain: Toolchain, params: KernelParams, head_dim: int, arch: str,
                max_smem: int) -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        path = csrc / name
        h.update(name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"-") + b"\0")
    for part in (toolchain.version, *NVCC_FLAGS, *arch_flags(arch), *params.macros(head_dim),
                 str(max_smem)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:20]


def nvcc_command(toolchain: Toolchain, csrc: Path, params: KernelParams, head_dim: int, arch: str,
                 max_smem: int, out: Path) -> list[str]:
    return [toolchain.nvcc, *NVCC_FLAGS, *arch_flags(arch), *params.macros(head_dim),
            f"-DCOCKPIT_ATTN_MAX_SMEM={max_smem}", str(csrc / "attention.cu"), "-o", str(out)]


def compile_config(toolchain: Toolchain, csrc: Path, cache: Path, params: KernelParams, head_dim: int,
                   arch: str, max_smem: int) -> Compiled:
    """The library for this configuration: from the cache, else built now."""
    key = content_key(csrc, toolchain, params, head_dim, arch, max_smem)
    library, report, failed = cache / f"{key}.so", cache / f"{key}.ptxas.txt", cache / f"{key}.failed.txt"
    if library.exists() and report.exists():
        return Compiled(params, head_dim, key, library, 0.0, True, _kernels(report.read_text(), head_dim))
    if failed.exists():
        return Compiled(params, head_dim, key, None, 0.0, True, error=failed.read_text().strip())
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{key}.", suffix=".so.tmp", dir=cache)
    os.close(fd)
    tmp = Path(tmp_name)
    started = time.perf_counter()
    try:
        out = subprocess.run(nvcc_command(toolchain, csrc, params, head_dim, arch, max_smem, tmp),
                             capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        seconds = time.perf_counter() - started
        text = out.stdout + out.stderr
        if out.returncode != 0:
            errors = parse_errors(text.splitlines())
            why = str(errors[0]) if errors else (text.strip().splitlines() or ["nvcc failed"])[-1]
            _write_atomically(failed, why + "\n")
            return Compiled(params, head_dim, key, None, seconds, False, error=why)
        _write_atomically(report, text)
        os.replace(tmp, library)  # last: a library in place always has its report
    except subprocess.TimeoutExpired:
        return Compiled(params, head_dim, key, None, COMPILE_TIMEOUT_S, False,
                        error=f"nvcc took more than {COMPILE_TIMEOUT_S:.0f} s")
    finally:
        tmp.unlink(missing_ok=True)
    return Compiled(params, head_dim, key, library, seconds, False, _kernels(text, head_dim))


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _kernels(ptxas_text: str, head_dim: int) -> tuple[KernelResources, ...]:
    kernels = parse_ptxas(ptxas_text.splitlines())
    names = demangle_all(k.name for k in kernels)
    return tuple(k for k in kernels if _head_dim_of(names.get(k.name, k.name)) == head_dim)


def _head_dim_of(name: str) -> int | None:
    args = function_parts(name)[1]
    return int(args[1]) if len(args) > 1 and args[1].isdigit() else None


@dataclass
class CompilePool:
    """Compiles in background threads (each drives one nvcc process), ahead of the timing;
    one future per content of (configuration, head dim), however often it is asked for."""

    compile_one: Callable[[KernelParams, int], Compiled]
    workers: int
    _pool: ThreadPoolExecutor = field(init=False)
    _futures: dict[tuple[KernelParams, int], Future[Compiled]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max(1, self.workers), thread_name_prefix="nvcc")

    def submit(self, params: KernelParams, head_dim: int) -> Future[Compiled]:
        with self._lock:
            key = (params, head_dim)
            if key not in self._futures:
                self._futures[key] = self._pool.submit(self.compile_one, params, head_dim)
            return self._futures[key]

    @property
    def queued(self) -> int:
        """Compiles asked for and not finished."""
        with self._lock:
            return sum(1 for f in self._futures.values() if not f.done())

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
