"""What the env checks share: the MachineCheck they return, a few file and text helpers, and the Probe:
the arguments, one torch import, the driver's CUDA, and the tools' `--version` run in parallel.

Standard library only at top level, like every module of this package: torch and pynvml are
imported inside the methods that need them, so a missing torch is a clean `fail`.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Literal

Status = Literal["pass", "warn", "fail"]

SUBPROCESS_TIMEOUT_S = 5.0
WALK_DEPTH = 3
TORCH_INDEX = "https://download.pytorch.org/whl/cu130"


@dataclass(frozen=True)
class MachineCheck:
    name: str
    status: Status
    value: str
    expected: str
    fix: str = ""


class TorchUnavailable(Exception):
    """torch did not import; the message is the one-line reason."""


def one_line(text: object, limit: int = 300) -> str:
    """`text` on one line, cut to `limit` characters: a check's value never spans lines."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def run_command(argv: list[str], timeout_s: float = SUBPROCESS_TIMEOUT_S) -> tuple[int, str]:
    """(exit code, stdout+stderr). Raises FileNotFoundError / subprocess.TimeoutExpired."""
    proc = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                          stdin=subprocess.DEVNULL, timeout=timeout_s, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def format_age(seconds: float) -> str:
    """45 -> '45 s', 7980 -> '2 h 13 min', 200000 -> '2 d 7 h'."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    minutes = s // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def find_files(root: Path, match: Callable[[str], bool], max_depth: int = WALK_DEPTH,
               max_entries: int = 50_000) -> list[Path]:
    """Files under `root` whose name matches, at most `max_depth` folders down; no symlinks
    followed, and bounded so a huge tree cannot eat the probe's 10 s."""
    found: list[Path] = []
    stack: list[tuple[str, int]] = [(str(root), 0)]
    seen = 0
    while stack:
        folder, depth = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > max_entries:
                    return sorted(found)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if depth < max_depth:
                            stack.append((entry.path, depth + 1))
                    elif match(entry.name):
                        found.append(Path(entry.path))
                except OSError:
                    continue
    return sorted(found)


def shell_quote(text: str) -> str:
    """`text` quoted for a POSIX shell only where it must be, so a fix pastes as is."""
    return text if re.fullmatch(r"[\w@%+=:,./-]+", text) else "'" + text.replace("'", "'\"'\"'") + "'"


class Probe:
    """What the checks share: the arguments, one torch import, tool versions run in parallel."""

    def __init__(self, workspace: Path, build_dir: Path, extension: str) -> None:
        self.workspace = workspace
        self.build_dir = build_dir
        self.extension = extension
        self.extension_note = ""
        """Why there is no extension to check when the workload could not be asked."""
        self.torch_import_noise = ""
        self._torch: ModuleType | None = None
        self._torch_error: str | None = None
        self._driver_asked = False
        self._driver_cuda: str | None = None
        # `ncu --version` alone can take a second: start the tools now, while torch imports.
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="env-probe")
        self._tools: dict[str, Future[tuple[int, str]]] = {}
        for tool in (self.compiler(), "ninja", self.ncu_path()):
            if tool:
                self.tool_version(tool)

    def shown(self, path: Path) -> str:
        """`path` as a report shows it: relative to the workspace when inside it (what the
        journal and an exported report keep), else as given."""
        try:
            return str(path.relative_to(self.workspace)) or "."
        except ValueError:
            return str(path)

    def close(self) -> None:
        for future in self._tools.values():
            future.cancel()  # (not shutdown's cancel_futures: a python < 3.9 must still get to say so)
        self._pool.shutdown(wait=False)

    def tool_version(self, path: str) -> Future[tuple[int, str]]:
        if path not in self._tools:
            self._tools[path] = self._pool.submit(run_command, [path, "--version"])
        return self._tools[path]

    def compiler(self) -> str | None:
        """The C++ compiler torch's extension build will use ($CXX, else gcc, else c++)."""
        for name in (os.environ.get("CXX"), "gcc", "c++"):
            if name and shutil.which(name):
                return shutil.which(name)
        return None

    def ncu_path(self) -> str | None:
        found = shutil.which("ncu")
        if found:
            return found
        for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
            if home and os.access(os.path.join(home, "bin", "ncu"), os.X_OK):
                return os.path.join(home, "bin", "ncu")
        return None

    def torch(self) -> ModuleType:
        """torch, imported once; raises TorchUnavailable. Its import-time warnings and stderr are
        kept (the NumPy 1.x/2.x mismatch shows only there) and passed on to stderr."""
        if self._torch is None and self._torch_error is None:
            noise = io.StringIO()
            with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(noise):
                warnings.simplefilter("always")
                try:
                    import torch

                    self._torch = torch
                except Exception as exc:
                    self._torch_error = one_line(f"{type(exc).__name__}: {exc}")
            messages = "".join(f"{w.category.__name__}: {w.message}\n" for w in caught)
            self.torch_import_noise = noise.getvalue() + messages
            sys.stderr.write(self.torch_import_noise)
        if self._torch is None:
            raise TorchUnavailable(self._torch_error or "torch did not import")
        return self._torch

    def torch_cuda(self) -> str | None:
        try:
            version = self.torch().version.cuda
        except TorchUnavailable:
            return None
        return str(version) if version else None

    def cuda_home(self) -> tuple[str | None, str]:
        """(path, where it came from): torch's own answer first, since that is what the build uses."""
        if self.torch_cuda():  # a CPU-only torch never sets it; skip the 0.3 s import
            from torch.utils import cpp_extension

            if cpp_extension.CUDA_HOME:
                return str(cpp_extension.CUDA_HOME), "torch.utils.cpp_extension.CUDA_HOME"
        for var in ("CUDA_HOME", "CUDA_PATH"):
            if os.environ.get(var):
                return os.environ[var], f"${var}"
        if os.path.isdir("/usr/local/cuda"):
            return "/usr/local/cuda", "default"
        return None, ""

    def driver_cuda(self) -> str | None:
        """The newest CUDA the driver supports ("13.0"), from NVML; None without a driver."""
        if not self._driver_asked:
            self._driver_asked = True
            try:
                import pynvml  # type: ignore[import-untyped, unused-ignore]

                pynvml.nvmlInit()
                try:
                    v = int(pynvml.nvmlSystemGetCudaDriverVersion_v2())
                    self._driver_cuda = f"{v // 1000}.{v % 1000 // 10}"
                finally:
                    pynvml.nvmlShutdown()
            except Exception:
                pass  # no pynvml or no driver: the fixes fall back to the generic advice
        return self._driver_cuda

    def torch_install_fix(self) -> str:
        driver = self.driver_cuda()
        pick = f"cuXY ≤ the driver's CUDA {driver}" if driver else "cuXY ≤ the CUDA nvidia-smi shows"
        # Fixes that are commands carry their reason as a shell comment, so the line pastes as is.
        return f"pip install torch --index-url {TORCH_INDEX}  # {pick}"


def version_check(p: Probe, name: str, path: str | None, expected: str, missing: MachineCheck,
                  pattern: str) -> MachineCheck:
    """A tool's check from its `--version` (run by the Probe): `missing` when there is no tool,
    a `fail` when it hangs or exits non-zero, else a `pass` with the version `pattern` found."""
    if path is None:
        return missing
    try:
        rc, out = p.tool_version(path).result(timeout=SUBPROCESS_TIMEOUT_S + 1)
    except (subprocess.TimeoutExpired, FutureTimeout):
        return MachineCheck(name, "fail", f"`{path} --version` did not answer in {SUBPROCESS_TIMEOUT_S:g} s",
                            expected, f"run `{path} --version` by hand and reinstall it if it hangs")
    lines = [line for line in out.splitlines() if line.strip()]
    m = re.search(pattern, out, re.MULTILINE)
    version = m.group(1) if m else (one_line(lines[0], 80) if lines else "?")
    if rc != 0:
        return MachineCheck(name, "fail", f"`{path} --version` exited {rc}: {one_line(out, 120)}", expected,
                            missing.fix)
    return MachineCheck(name, "pass", f"{version} ({path})", expected)
