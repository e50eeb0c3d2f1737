"""The Env gate's probe: is this machine ready to build and load a torch CUDA extension?

    python -m cockpit.probes.env_probe --out RESULT.json [--workspace DIR] [--build-dir DIR]
                                       [--extension NAME]

Prints one line per check as it goes (`PASS  torch  2.13.0+cu130 (CUDA 13.0)`), then writes
RESULT.json atomically: `{"checks": [{"name", "status", "value", "expected", "fix"}...],
"duration_s": float}`. Exit 0: no check failed; 1: a check failed; 2: the probe could not run
(bad arguments, --out not writable).

It imports only the standard library at top level (torch, numpy and pynvml are imported inside
the checks that need them), so a missing torch is a clean `fail`, and the file also runs as a
plain script under a python that does not have cockpit installed (the CUDA venv). Every
subprocess has a timeout, and a watchdog writes what was measured and exits if the whole probe
runs past its deadline (a wedged driver can hang `torch.cuda.is_available()` forever).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

Status = Literal["pass", "warn", "fail"]

DEFAULT_EXTENSION = "cockpit_attn"
SUBPROCESS_TIMEOUT_S = 5.0
# Under the 10 s the gate allows, with room to write the result.
DEFAULT_DEADLINE_S = 9.5
WALK_DEPTH = 3
GIB = 1024**3
TORCH_INDEX = "https://download.pytorch.org/whl/cu130"
NVIDIA_PARAMS = Path("/proc/driver/nvidia/params")
_CAP_SYS_ADMIN = 21
_NUMPY_ABI_NOISE = (
    "compiled using NumPy 1.x",
    "Failed to initialize NumPy",
    "_ARRAY_API not found",
    "numpy.core.multiarray failed to import",
    "Numpy is not available",
)


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    value: str
    expected: str
    fix: str = ""


class TorchUnavailable(Exception):
    """torch did not import; the message is the one-line reason."""


def _one_line(text: object, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _run(argv: list[str], timeout_s: float = SUBPROCESS_TIMEOUT_S) -> tuple[int, str]:
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


def nearest_existing(path: Path) -> Path:
    for folder in (path, *path.parents):
        if folder.exists():
            return folder
    return Path("/")


def torch_extensions_dir() -> Path:
    """Where `torch.utils.cpp_extension.load` builds by default."""
    explicit = os.environ.get("TORCH_EXTENSIONS_DIR")
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "torch_extensions"


def profiling_admin_only(params: Path = NVIDIA_PARAMS) -> bool | None:
    """The driver's RmProfilingAdminOnly; None when there is no NVIDIA driver params file."""
    try:
        text = params.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r"^RmProfilingAdminOnly:\s*(\d+)", text, re.MULTILINE)
    return None if m is None else m.group(1) != "0"


def has_cap_sys_admin() -> bool:
    try:
        status = Path("/proc/self/status").read_text(encoding="utf-8")
    except OSError:
        return False
    m = re.search(r"^CapEff:\s*([0-9a-fA-F]+)", status, re.MULTILINE)
    return m is not None and bool(int(m.group(1), 16) >> _CAP_SYS_ADMIN & 1)


class Probe:
    """What the checks share: the arguments, one torch import, tool versions run in parallel."""

    def __init__(self, workspace: Path, build_dir: Path, extension: str) -> None:
        self.workspace = workspace
        self.build_dir = build_dir
        self.extension = extension
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

    def close(self) -> None:
        for future in self._tools.values():
            future.cancel()  # (not shutdown's cancel_futures: a python < 3.9 must still get to say so)
        self._pool.shutdown(wait=False)

    def tool_version(self, path: str) -> Future[tuple[int, str]]:
        if path not in self._tools:
            self._tools[path] = self._pool.submit(_run, [path, "--version"])
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
                    self._torch_error = _one_line(f"{type(exc).__name__}: {exc}")
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


# ---------------------------------------------------------------- checks


def check_python(p: Probe) -> Check:
    v = sys.version_info
    value = f"{v.major}.{v.minor}.{v.micro} ({sys.executable})"
    if v < (3, 10):
        return Check("python", "fail", value, "≥ 3.10",
                     "use a python ≥ 3.10, e.g. `uv venv -p 3.11` or `conda create -n k python=3.11`")
    return Check("python", "pass", value, "≥ 3.10")


def check_torch(p: Probe) -> Check:
    expected = "a CUDA build of torch (torch.version.cuda set)"
    try:
        torch = p.torch()
    except TorchUnavailable as exc:
        return Check("torch", "fail", f"does not import: {exc}", expected, p.torch_install_fix())
    version = str(torch.__version__)
    if getattr(torch.version, "hip", None):
        return Check("torch", "fail", f"{version} (ROCm build, HIP {torch.version.hip})", expected,
                     p.torch_install_fix())
    cuda = p.torch_cuda()
    if not cuda:
        return Check("torch", "fail", f"{version} (CPU-only build: torch.version.cuda is None)",
                     expected, p.torch_install_fix())
    return Check("torch", "pass", f"{version} (CUDA {cuda})", expected)


def check_cuda_available(p: Probe) -> Check:
    expected = "torch.cuda.is_available() and a GPU"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    visible_note = "CUDA_VISIBLE_DEVICES " + (f"= {visible!r}" if visible is not None else "unset")
    gpu_fix = ("run `nvidia-smi`: no GPU listed → install or reload the NVIDIA driver; "
               f"GPUs listed → fix or unset CUDA_VISIBLE_DEVICES ({visible_note})")
    try:
        torch = p.torch()
    except TorchUnavailable:
        return Check("cuda_available", "fail", "unknown: torch does not import", expected,
                     "fix the torch check first, then `nvidia-smi` must list the GPU")
    if not p.torch_cuda():
        return Check("cuda_available", "fail", "False (CPU-only torch build)", expected,
                     "install torch's CUDA build (see the torch check); then `nvidia-smi` must list the GPU")
    if not torch.cuda.is_available():
        return Check("cuda_available", "fail", f"False ({visible_note})", expected, gpu_fix)
    count = torch.cuda.device_count()
    devices = []
    for index in range(count):
        major, minor = torch.cuda.get_device_capability(index)
        devices.append(f"{torch.cuda.get_device_name(index)}, sm_{major}{minor}")
    listed = devices[0] if len(set(devices)) == 1 else "; ".join(devices)
    prefix = f"{count}× " if count > 1 and len(set(devices)) == 1 else ""
    return Check("cuda_available", "pass", f"True: {prefix}{listed}", expected)


def check_numpy(p: Probe) -> Check:
    expected = "numpy that this torch was built for (tensor.numpy() works)"
    fix = "pip install 'numpy<2'  # or upgrade torch to a build made for NumPy 2"
    try:
        import numpy
    except ImportError as exc:
        return Check("numpy", "warn", f"not installed ({_one_line(exc)}): tensor.numpy() will fail",
                     expected, "pip install numpy")
    version = str(numpy.__version__)
    try:
        torch = p.torch()
    except TorchUnavailable:
        return Check("numpy", "warn", f"{version}; torch bridge not tested (torch does not import)",
                     expected, "fix the torch check first")
    problems = [line for line in p.torch_import_noise.splitlines()
                if any(key in line for key in _NUMPY_ABI_NOISE)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            torch.zeros(2).numpy()
            torch.from_numpy(numpy.zeros(2, dtype=numpy.float32))
        except Exception as exc:
            problems.append(f"{type(exc).__name__}: {exc}")
    problems += [str(w.message) for w in caught if any(key in str(w.message) for key in _NUMPY_ABI_NOISE)]
    if problems:
        return Check("numpy", "fail", f"{version}; torch bridge broken: {_one_line(problems[0], 160)}",
                     expected, fix)
    return Check("numpy", "pass", f"{version}; torch bridge works", expected)


def check_nvcc(p: Probe) -> Check:
    torch_cuda = p.torch_cuda()
    expected = f"release {torch_cuda} (torch's CUDA)" if torch_cuda else "release matching torch's CUDA"
    home, _ = p.cuda_home()
    path = None
    if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
        path = os.path.join(home, "bin", "nvcc")
    path = path or shutil.which("nvcc")
    want = torch_cuda or "13.0"
    if path is None:
        return Check("nvcc", "fail", f"not found (in {home or 'no CUDA_HOME'}/bin nor on PATH)", expected,
                     f"install the CUDA {want} toolkit, then export CUDA_HOME=/usr/local/cuda-{want} "
                     "PATH=$CUDA_HOME/bin:$PATH")
    try:
        _, out = _run([path, "--version"])
    except subprocess.TimeoutExpired:
        return Check("nvcc", "fail", f"{path} --version did not answer in {SUBPROCESS_TIMEOUT_S:g} s",
                     expected, f"run `{path} --version` by hand; reinstall the CUDA toolkit if it hangs")
    m = re.search(r"release (\d+)\.(\d+)", out)
    if m is None:
        return Check("nvcc", "fail", f"{path} --version printed no 'release X.Y': {_one_line(out, 120)}",
                     expected, f"reinstall the CUDA {want} toolkit")
    release = f"{m.group(1)}.{m.group(2)}"
    value = f"release {release} ({path})"
    if not torch_cuda:
        return Check("nvcc", "pass", value, "release matching torch's CUDA (unknown: no CUDA torch)")
    t_major, t_minor = torch_cuda.split(".")[:2]
    nodot = f"{m.group(1)}{m.group(2)}"
    if m.group(1) != t_major:
        return Check("nvcc", "fail", value, expected,
                     f"export CUDA_HOME=/usr/local/cuda-{torch_cuda} PATH=$CUDA_HOME/bin:$PATH, or install "
                     f"torch for CUDA {release}: pip install torch --index-url "
                     f"https://download.pytorch.org/whl/cu{nodot}")
    if m.group(2) != t_minor:
        return Check("nvcc", "warn", f"{value}: minor version differs from torch's {torch_cuda}", expected,
                     f"export CUDA_HOME=/usr/local/cuda-{torch_cuda} PATH=$CUDA_HOME/bin:$PATH  "
                     "# usually builds as is; this matches exactly")
    return Check("nvcc", "pass", value, expected)


def check_cuda_home(p: Probe) -> Check:
    expected = "a CUDA toolkit folder (torch's CUDA_HOME, $CUDA_HOME or /usr/local/cuda)"
    home, source = p.cuda_home()
    if home is None:
        want = p.torch_cuda() or "13.0"
        return Check("cuda_home", "fail", "not found", expected,
                     f"install the CUDA {want} toolkit and export CUDA_HOME=/usr/local/cuda-{want}")
    if not os.path.isdir(home):
        return Check("cuda_home", "fail", f"{home} ({source}) does not exist", expected,
                     "export CUDA_HOME=/usr/local/cuda-X.Y pointing at an installed toolkit")
    return Check("cuda_home", "pass", f"{home} ({source})", expected)


def check_torch_lib_on_loader_path(p: Probe) -> Check:
    expected = "torch's lib folder in LD_LIBRARY_PATH (to load the .so outside `import torch`)"
    try:
        torch = p.torch()
    except TorchUnavailable:
        return Check("torch_lib_on_loader_path", "warn", "unknown: torch does not import", expected,
                     "fix the torch check first")
    lib = os.path.join(os.path.dirname(str(torch.__file__)), "lib")
    entries = [e for e in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if e]
    if any(os.path.realpath(e) == os.path.realpath(lib) for e in entries):
        return Check("torch_lib_on_loader_path", "pass", lib, expected)
    return Check("torch_lib_on_loader_path", "warn", f"{lib} not in LD_LIBRARY_PATH", expected,
                 f'export LD_LIBRARY_PATH="{lib}:$LD_LIBRARY_PATH"')


def _version_check(p: Probe, name: str, path: str | None, expected: str, missing: Check,
                   pattern: str) -> Check:
    if path is None:
        return missing
    try:
        rc, out = p.tool_version(path).result(timeout=SUBPROCESS_TIMEOUT_S + 1)
    except (subprocess.TimeoutExpired, FutureTimeout):
        return Check(name, "fail", f"`{path} --version` did not answer in {SUBPROCESS_TIMEOUT_S:g} s",
                     expected, f"run `{path} --version` by hand and reinstall it if it hangs")
    lines = [line for line in out.splitlines() if line.strip()]
    m = re.search(pattern, out, re.MULTILINE)
    version = m.group(1) if m else (_one_line(lines[0], 80) if lines else "?")
    if rc != 0:
        return Check(name, "fail", f"`{path} --version` exited {rc}: {_one_line(out, 120)}", expected,
                     missing.fix)
    return Check(name, "pass", f"{version} ({path})", expected)


def check_ninja(p: Probe) -> Check:
    expected = "ninja on PATH (cpp_extension falls back to a slow, serial build without it)"
    missing = Check("ninja", "fail", "not found on PATH", expected, "pip install ninja")
    return _version_check(p, "ninja", shutil.which("ninja"), expected, missing, r"^(\d+\.\d+\S*)")


def check_gcc(p: Probe) -> Check:
    expected = "a C++ compiler ($CXX, gcc or c++)"
    missing = Check("gcc", "fail", "no $CXX, gcc nor c++ on PATH", expected,
                    "apt-get install -y build-essential")
    return _version_check(p, "gcc", p.compiler(), expected, missing, r"\A.*?(\d+\.\d+(?:\.\d+)?)\S*\s*$")


def check_ncu(p: Probe) -> Check:
    expected = "ncu (Nsight Compute) for the profile gate"
    cuda = p.torch_cuda() or "13.0"
    missing = Check("ncu", "warn", "not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)", expected,
                    f"apt-get install cuda-nsight-compute-{cuda.replace('.', '-')}  "
                    "# Nsight Compute; or add $CUDA_HOME/bin to PATH")
    check = _version_check(p, "ncu", p.ncu_path(), expected, missing, r"Version (\S+)")
    # ncu being there but broken does not block building: the profile gate needs it.
    return check if check.status == "pass" else Check(check.name, "warn", check.value, expected, check.fix)


def check_ncu_counters(p: Probe) -> Check:
    expected = "GPU performance counters readable by this user (RmProfilingAdminOnly: 0, or root)"
    admin_only = profiling_admin_only()
    if admin_only is None:
        return Check("ncu_counters", "warn", "unknown (no NVIDIA driver params)", expected,
                     "install or load the NVIDIA driver; `nvidia-smi` must work")
    if not admin_only:
        return Check("ncu_counters", "pass", "RmProfilingAdminOnly: 0", expected)
    if os.geteuid() == 0 or has_cap_sys_admin():
        return Check("ncu_counters", "pass", "RmProfilingAdminOnly: 1, but running as root/CAP_SYS_ADMIN",
                     expected)
    return Check("ncu_counters", "warn", "RmProfilingAdminOnly: 1 and not root: ncu gets ERR_NVGPUCTRPERM",
                 expected, "run as root or with CAP_SYS_ADMIN, or set NVreg_RestrictProfilingToAdminUsers=0 "
                 "(modprobe option) and reload the driver")


def check_disk(p: Probe) -> Check:
    expected = "≥ 5 GiB free for the build (fail under 1 GiB)"
    where = nearest_existing(p.build_dir)
    free = shutil.disk_usage(where).free
    value = f"{free / GIB:.1f} GiB free at {where}"
    fix = f"du -xh {_shell_quote(str(where))} | sort -h | tail  # free space there, or build on another disk"
    if free < GIB:
        return Check("disk", "fail", value, expected, fix)
    if free < 5 * GIB:
        return Check("disk", "warn", value, expected, fix)
    return Check("disk", "pass", value, expected)


def check_stale_lock(p: Probe) -> Check:
    expected = "no `lock` file (a killed build leaves one; every later load then hangs silently)"
    roots: list[Path] = []
    for root in (p.build_dir, torch_extensions_dir()):
        if not any(_inside(root, other) for other in roots):
            roots = [r for r in roots if not _inside(r, root)] + [root]
    now = time.time()
    found = []
    for root in roots:
        for path in find_files(root, lambda name: name == "lock"):
            try:
                age = format_age(now - path.stat().st_mtime)
            except OSError:
                continue  # a build finished and removed it just now
            found.append((path, age))
    if not found:
        return Check("stale_lock", "pass", "none in " + ", ".join(str(r) for r in roots), expected)
    listed = "; ".join(f"{path}, {age} old" for path, age in found)
    rm = " ".join(_shell_quote(str(path)) for path, _ in found)
    # Never deleted here: a build that is running right now holds it.
    return Check("stale_lock", "warn", listed, expected, f"if no build is running, delete it: rm {rm}")


def _inside(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True


def _shell_quote(text: str) -> str:
    return text if re.fullmatch(r"[\w@%+=:,./-]+", text) else "'" + text.replace("'", "'\"'\"'") + "'"


def check_persistence_mode(p: Probe) -> Check:
    expected = "on for every GPU (else each process pays the driver's start-up, clocks reset)"
    try:
        import pynvml  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return Check("persistence_mode", "warn", "unknown: pynvml not installed", expected,
                     "pip install nvidia-ml-py")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return Check("persistence_mode", "warn", f"no NVML (no driver?): {exc}", expected,
                     "install or load the NVIDIA driver; `nvidia-smi` must list the GPUs")
    try:
        count = int(pynvml.nvmlDeviceGetCount())
        off = [index for index in range(count)
               if pynvml.nvmlDeviceGetPersistenceMode(pynvml.nvmlDeviceGetHandleByIndex(index))
               != pynvml.NVML_FEATURE_ENABLED]
    finally:
        pynvml.nvmlShutdown()
    if count == 0:
        return Check("persistence_mode", "warn", "NVML sees no GPU", expected,
                     "run `nvidia-smi`; install or reload the NVIDIA driver")
    if off:
        return Check("persistence_mode", "warn", f"off on GPU {', '.join(map(str, off))} of {count}",
                     expected, "sudo nvidia-smi -pm 1")
    return Check("persistence_mode", "pass", f"on ({count}/{count} GPUs)", expected)


def check_terminal_multiplexer(p: Probe) -> Check:
    expected = "inside tmux or screen"
    if os.environ.get("TMUX"):
        return Check("terminal_multiplexer", "pass", "tmux", expected)
    if os.environ.get("STY"):
        return Check("terminal_multiplexer", "pass", f"screen ({os.environ['STY']})", expected)
    return Check("terminal_multiplexer", "warn", "not inside tmux/screen: an SSH drop kills the session",
                 expected, "run inside tmux: tmux new -s kernel")


def check_extension(p: Probe) -> Check:
    name = p.extension
    expected = f"{name}*.so in {p.build_dir} that imports"
    build_fix = "cockpit gate build  # run the build gate"
    if not p.build_dir.is_dir():
        return Check("extension", "warn", f"not built yet ({p.build_dir} does not exist)", expected,
                     build_fix)
    libraries = find_files(p.build_dir, lambda f: f.startswith(name) and f.endswith(".so"))
    if not libraries:
        return Check("extension", "warn", f"not built yet (no {name}*.so in {p.build_dir})", expected,
                     build_fix)
    library = max(libraries, key=lambda path: path.stat().st_mtime)
    rebuild = f"rm -rf {_shell_quote(str(p.build_dir))} && cockpit gate build  # rebuild against this torch"
    try:
        p.torch()  # its libraries (libc10, libtorch) must be loaded before the extension's
    except TorchUnavailable:
        return Check("extension", "fail", f"{library} found, but torch does not import", expected,
                     "fix the torch check first")
    age = format_age(time.time() - library.stat().st_mtime)
    try:
        _load_extension(library)
    except ImportError as exc:
        message = _one_line(exc, 240)
        symbol = re.search(r"undefined symbol: (\S+)", str(exc))
        if symbol:
            return Check("extension", "fail",
                         f"{library}: ABI/version mismatch, undefined symbol {_demangle(symbol.group(1))}",
                         expected,
                         f"{rebuild}: the extension was built for another torch/CUDA")
        if "cannot open shared object file" in str(exc):
            return Check("extension", "fail", f"{library} does not load: {message}", expected,
                         "put the missing library's folder on LD_LIBRARY_PATH, or rebuild: " + rebuild)
        return Check("extension", "fail", f"{library} does not load: {message}", expected, rebuild)
    return Check("extension", "pass", f"{library} imports (built {age} ago)", expected)


def _load_extension(path: Path) -> None:
    import importlib.machinery
    import importlib.util

    # The module name must be the one PyInit_<name> was compiled with: the file name's first part.
    module = path.name.split(".")[0]
    loader = importlib.machinery.ExtensionFileLoader(module, str(path))
    spec = importlib.util.spec_from_file_location(module, path, loader=loader)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot make an import spec for {path}")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def _demangle(symbol: str) -> str:
    try:
        rc, out = _run(["c++filt", symbol], timeout_s=2.0)
    except (OSError, subprocess.TimeoutExpired):
        return symbol
    out = out.strip()
    return f"{out} ({symbol})" if rc == 0 and out and out != symbol else symbol


CHECKS: tuple[tuple[str, Callable[[Probe], Check]], ...] = (
    ("python", check_python),
    ("torch", check_torch),
    ("cuda_available", check_cuda_available),
    ("numpy", check_numpy),
    ("nvcc", check_nvcc),
    ("cuda_home", check_cuda_home),
    ("torch_lib_on_loader_path", check_torch_lib_on_loader_path),
    ("ninja", check_ninja),
    ("gcc", check_gcc),
    ("ncu", check_ncu),
    ("ncu_counters", check_ncu_counters),
    ("disk", check_disk),
    ("stale_lock", check_stale_lock),
    ("persistence_mode", check_persistence_mode),
    ("terminal_multiplexer", check_terminal_multiplexer),
    ("extension", check_extension),
)


def run_check(name: str, fn: Callable[[Probe], Check], p: Probe) -> Check:
    """A check that raises becomes a `fail` with the exception's text, never a traceback."""
    try:
        return fn(p)
    except (Exception, SystemExit) as exc:
        return Check(name, "fail", f"check raised {type(exc).__name__}: {_one_line(exc, 240)}",
                     "the check to run", "run the probe again; if it repeats, fix what the message names")


def format_line(check: Check) -> str:
    """`PASS  torch                    2.13.0+cu130 (CUDA 13.0)`; warnings and failures add the
    expectation and the fix."""
    line = f"{check.status.upper():<4}  {check.name:<24} {check.value}"
    if check.status != "pass":
        line += f"  (expected: {check.expected})" if check.expected else ""
        line += f"  → fix: {check.fix}" if check.fix else ""
    return line


def write_result(out: Path, checks: list[Check], duration_s: float) -> None:
    """Atomic: a reader sees the old file or the whole new one, never half."""
    payload = {"checks": [asdict(c) for c in checks], "duration_s": round(duration_s, 3)}
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=1, ensure_ascii=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the cockpit may run as another user
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class _Run:
    """The checks done so far, shared with the watchdog; whoever finishes first writes the result."""

    def __init__(self, out: Path, deadline_s: float) -> None:
        self.out = out
        self.deadline_s = deadline_s
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.checks: list[Check] = []
        self.current = ""
        self.done = threading.Event()

    def add(self, check: Check) -> None:
        with self.lock:
            self.checks.append(check)
            _say(format_line(check))

    def finish(self) -> int:
        """Write the result and say the summary; the exit code."""
        duration = time.monotonic() - self.started
        counts = {s: sum(c.status == s for c in self.checks) for s in ("fail", "warn", "pass")}
        try:
            write_result(self.out, self.checks, duration)
        except OSError as exc:
            print(f"env_probe: cannot write {self.out} ({exc.strerror or exc}); pass a writable --out",
                  file=sys.stderr, flush=True)
            return 2
        _say(f"env: {counts['fail']} failed, {counts['warn']} warnings, {counts['pass']} passed "
             f"in {duration:.1f} s → {self.out}")
        return 1 if counts["fail"] else 0

    def watchdog(self) -> None:
        if self.done.wait(self.deadline_s):
            return
        with self.lock:
            if self.done.is_set():
                return
            names = [c.name for c in self.checks]
            for name, _ in CHECKS:
                if name in names:
                    continue
                if name == self.current:
                    check = Check(name, "fail", f"did not finish within the probe's {self.deadline_s:g} s",
                                  "an answer in seconds",
                                  "a hung driver or a cold first torch import: run `nvidia-smi`, then "
                                  "the env gate again")
                else:
                    # Not a failure of its own: the verdict should name the one check that hung.
                    check = Check(name, "warn", f"not run: the probe hit its deadline in {self.current}",
                                  "", f"fix the {self.current} check, then run the env gate again")
                self.checks.append(check)
                _say(format_line(check))
            code = self.finish()
            sys.stderr.flush()
            os._exit(code)  # the stuck check may never return: leave without joining it


def _say(line: str) -> None:
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except OSError:
        # Whoever read stdout went away; the result file is what counts, so keep going silently.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def run_probe(p: Probe, out: Path, deadline_s: float = DEFAULT_DEADLINE_S) -> int:
    """Run every check, print each line as it is known, write `out`; the exit code."""
    state = _Run(out, deadline_s)
    threading.Thread(target=state.watchdog, name="env-probe-watchdog", daemon=True).start()
    try:
        for name, fn in CHECKS:
            state.current = name
            state.add(run_check(name, fn, p))
        with state.lock:
            state.done.set()
            return state.finish()
    finally:
        p.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cockpit.probes.env_probe",
        description="Check that this machine can build and load a torch CUDA extension.",
    )
    parser.add_argument("--out", required=True, type=Path, help="where to write RESULT.json")
    parser.add_argument("--workspace", type=Path, default=None, help="workspace folder (default: cwd)")
    parser.add_argument("--build-dir", type=Path, default=None,
                        help="extension build folder (default: WORKSPACE/build)")
    parser.add_argument("--extension", default=DEFAULT_EXTENSION,
                        help=f"the workload extension's module name (default: {DEFAULT_EXTENSION})")
    parser.add_argument("--deadline-s", type=float, default=DEFAULT_DEADLINE_S,
                        help="write what is known and exit after this many seconds "
                        f"(default: {DEFAULT_DEADLINE_S:g})")
    return parser


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        reconfigure: Any = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")  # a C-locale terminal must not kill the probe over "→"
    args = _parser().parse_args(argv)  # bad arguments: argparse exits 2

    def usage(message: str) -> int:
        print(f"env_probe: {message}", file=sys.stderr, flush=True)
        return 2

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args.extension):
        return usage(f"--extension {args.extension!r} is not a module name; pass e.g. {DEFAULT_EXTENSION}")
    if args.deadline_s <= 0:
        return usage("--deadline-s must be > 0")
    workspace = (args.workspace or Path.cwd()).expanduser().absolute()
    if not workspace.is_dir():
        return usage(f"--workspace {workspace} is not a folder; pass the cockpit workspace")
    out = args.out.expanduser().absolute()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return usage(f"cannot create {out.parent} ({exc.strerror}); pass a writable --out")
    if out.is_dir() or not os.access(out.parent, os.W_OK):
        return usage(f"cannot write {out}; pass a writable --out file path")
    build_dir = (args.build_dir or workspace / "build").expanduser().absolute()
    return run_probe(Probe(workspace, build_dir, args.extension), out, args.deadline_s)


if __name__ == "__main__":
    sys.exit(main())
