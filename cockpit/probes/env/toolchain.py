"""The toolchain checks: python, torch and its CUDA, the GPU it sees, the NumPy ABI, nvcc,
CUDA_HOME, torch's lib on the loader path, ninja and the C++ compiler."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Mapping

from .probe import (
    SUBPROCESS_TIMEOUT_S,
    MachineCheck,
    Probe,
    TorchUnavailable,
    one_line,
    run_command,
    version_check,
)

_NUMPY_ABI_NOISE = (
    "compiled using NumPy 1.x",
    "Failed to initialize NumPy",
    "_ARRAY_API not found",
    "numpy.core.multiarray failed to import",
    "Numpy is not available",
)


def stale_venv(env: Mapping[str, str], prefix: str, own: str | None) -> str | None:
    """The `$VIRTUAL_ENV` this Python (`prefix`) comes from when that venv is stale (its bin/ is not
    on PATH: activated once, then PATH moved on) and the cockpit (`own`) runs elsewhere, else None.

    The cockpit asks `$VIRTUAL_ENV` first, so a venv left behind in the environment can run the
    gates with another Python than the one the engineer sees."""
    venv = env.get("VIRTUAL_ENV")
    if not venv or not own:
        return None
    real = os.path.realpath(venv)
    if os.path.realpath(prefix) != real:
        return None  # the gates' Python is not that venv's
    on_path = {os.path.realpath(folder or ".") for folder in env.get("PATH", "").split(os.pathsep)}
    if os.path.join(real, "bin") in on_path:
        return None  # an active venv, as meant
    inside = os.path.abspath(own).startswith(os.path.abspath(venv).rstrip(os.sep) + os.sep)
    return None if inside else venv


def check_python(p: Probe) -> MachineCheck:
    v = sys.version_info
    value = f"{v.major}.{v.minor}.{v.micro} ({sys.executable})"
    how, own = os.environ.get("COCKPIT_GATES_PYTHON_HOW"), os.environ.get("COCKPIT_OWN_PYTHON")
    if how:  # the gates' interpreter, as the cockpit chose it, and the cockpit's own
        value += f", the gates' ({how})"
        if own and own != sys.executable:
            value += f"; the cockpit runs in {own}"
    if v < (3, 10):
        return MachineCheck("python", "fail", value, "≥ 3.10",
                            "use a python ≥ 3.10, e.g. `uv venv -p 3.11` or `conda create -n k python=3.11`")
    stale = stale_venv(os.environ, sys.prefix, own) if how else None
    if stale is not None:
        return MachineCheck(
            "python", "warn",
            f"the gates run {sys.executable} from a stale VIRTUAL_ENV={stale} (its bin/ is not on "
            f"PATH), the cockpit runs {own}", "VIRTUAL_ENV unset, or its bin/ on PATH",
            "`unset VIRTUAL_ENV` (or activate that venv) before starting the cockpit, or pin "
            "one with `[gates] python = \"/path/to/python\"` in cockpit.toml")
    return MachineCheck("python", "pass", value, "≥ 3.10")


def check_torch(p: Probe) -> MachineCheck:
    expected = "a CUDA build of torch (torch.version.cuda set)"
    try:
        torch = p.torch()
    except TorchUnavailable as exc:
        return MachineCheck("torch", "fail", f"does not import: {exc}", expected, p.torch_install_fix())
    version = str(torch.__version__)
    if getattr(torch.version, "hip", None):
        return MachineCheck("torch", "fail", f"{version} (ROCm build, HIP {torch.version.hip})", expected,
                            p.torch_install_fix())
    cuda = p.torch_cuda()
    if not cuda:
        return MachineCheck("torch", "fail", f"{version} (CPU-only build: torch.version.cuda is None)",
                            expected, p.torch_install_fix())
    return MachineCheck("torch", "pass", f"{version} (CUDA {cuda})", expected)


def check_cuda_available(p: Probe) -> MachineCheck:
    expected = "torch.cuda.is_available() and a GPU"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    visible_note = "CUDA_VISIBLE_DEVICES " + (f"= {visible!r}" if visible is not None else "unset")
    gpu_fix = ("run `nvidia-smi`: no GPU listed → install or reload the NVIDIA driver; "
               f"GPUs listed → fix or unset CUDA_VISIBLE_DEVICES ({visible_note})")
    try:
        torch = p.torch()
    except TorchUnavailable:
        return MachineCheck("cuda_available", "fail", "unknown: torch does not import", expected,
                            "fix the torch check first, then `nvidia-smi` must list the GPU")
    if not p.torch_cuda():
        return MachineCheck(
            "cuda_available", "fail", "False (CPU-only torch build)", expected,
            "install torch's CUDA build (see the torch check); then `nvidia-smi` must list the GPU")
    if not torch.cuda.is_available():
        return MachineCheck("cuda_available", "fail", f"False ({visible_note})", expected, gpu_fix)
    count = torch.cuda.device_count()
    devices = []
    for index in range(count):
        major, minor = torch.cuda.get_device_capability(index)
        devices.append(f"{torch.cuda.get_device_name(index)}, sm_{major}{minor}")
    listed = devices[0] if len(set(devices)) == 1 else "; ".join(devices)
    prefix = f"{count}× " if count > 1 and len(set(devices)) == 1 else ""
    return MachineCheck("cuda_available", "pass", f"True: {prefix}{listed}", expected)


def _numpy_abi_noise(line: str) -> bool:
    """Whether a line is NumPy saying this torch was built against another NumPy ABI."""
    return any(key in line for key in _NUMPY_ABI_NOISE)


def check_numpy(p: Probe) -> MachineCheck:
    expected = "numpy that this torch was built for (tensor.numpy() works)"
    fix = "pip install 'numpy<2'  # or upgrade torch to a build made for NumPy 2"
    try:
        import numpy
    except ImportError as exc:
        return MachineCheck("numpy", "warn", f"not installed ({one_line(exc)}): tensor.numpy() will fail",
                            expected, "pip install numpy")
    version = str(numpy.__version__)
    try:
        torch = p.torch()
    except TorchUnavailable:
        return MachineCheck("numpy", "warn", f"{version}; torch bridge not tested (torch does not import)",
                            expected, "fix the torch check first")
    problems = [line for line in p.torch_import_noise.splitlines() if _numpy_abi_noise(line)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            torch.zeros(2).numpy()
            torch.from_numpy(numpy.zeros(2, dtype=numpy.float32))
        except Exception as exc:
            problems.append(f"{type(exc).__name__}: {exc}")
    problems += [str(w.message) for w in caught if _numpy_abi_noise(str(w.message))]
    if problems:
        return MachineCheck("numpy", "fail", f"{version}; torch bridge broken: {one_line(problems[0], 160)}",
                            expected, fix)
    return MachineCheck("numpy", "pass", f"{version}; torch bridge works", expected)


def check_nvcc(p: Probe) -> MachineCheck:
    torch_cuda = p.torch_cuda()
    expected = f"release {torch_cuda} (torch's CUDA)" if torch_cuda else "release matching torch's CUDA"
    home, _ = p.cuda_home()
    path = None
    if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
        path = os.path.join(home, "bin", "nvcc")
    path = path or shutil.which("nvcc")
    want = torch_cuda or "13.0"
    if path is None:
        return MachineCheck(
            "nvcc", "fail", f"not found (in {home or 'no CUDA_HOME'}/bin nor on PATH)", expected,
            f"install the CUDA {want} toolkit, then export CUDA_HOME=/usr/local/cuda-{want} "
            "PATH=$CUDA_HOME/bin:$PATH")
    try:
        _, out = run_command([path, "--version"])
    except subprocess.TimeoutExpired:
        return MachineCheck(
            "nvcc", "fail", f"{path} --version did not answer in {SUBPROCESS_TIMEOUT_S:g} s",
            expected, f"run `{path} --version` by hand; reinstall the CUDA toolkit if it hangs")
    m = re.search(r"release (\d+)\.(\d+)", out)
    if m is None:
        return MachineCheck(
            "nvcc", "fail", f"{path} --version printed no 'release X.Y': {one_line(out, 120)}",
            expected, f"reinstall the CUDA {want} toolkit")
    release = f"{m.group(1)}.{m.group(2)}"
    value = f"release {release} ({path})"
    if not torch_cuda:
        return MachineCheck("nvcc", "pass", value, "release matching torch's CUDA (unknown: no CUDA torch)")
    t_major, t_minor = torch_cuda.split(".")[:2]
    nodot = f"{m.group(1)}{m.group(2)}"
    if m.group(1) != t_major:
        return MachineCheck(
            "nvcc", "fail", value, expected,
            f"export CUDA_HOME=/usr/local/cuda-{torch_cuda} PATH=$CUDA_HOME/bin:$PATH, or install "
            f"torch for CUDA {release}: pip install torch --index-url "
            f"https://download.pytorch.org/whl/cu{nodot}")
    if m.group(2) != t_minor:
        return MachineCheck(
            "nvcc", "warn", f"{value}: minor version differs from torch's {torch_cuda}", expected,
            f"export CUDA_HOME=/usr/local/cuda-{torch_cuda} PATH=$CUDA_HOME/bin:$PATH  "
            "# usually builds as is; this matches exactly")
    return MachineCheck("nvcc", "pass", value, expected)


def check_cuda_home(p: Probe) -> MachineCheck:
    expected = "a CUDA toolkit folder (torch's CUDA_HOME, $CUDA_HOME or /usr/local/cuda)"
    home, source = p.cuda_home()
    if home is None:
        want = p.torch_cuda() or "13.0"
        return MachineCheck("cuda_home", "fail", "not found", expected,
                            f"install the CUDA {want} toolkit and export CUDA_HOME=/usr/local/cuda-{want}")
    if not os.path.isdir(home):
        return MachineCheck("cuda_home", "fail", f"{home} ({source}) does not exist", expected,
                            "export CUDA_HOME=/usr/local/cuda-X.Y pointing at an installed toolkit")
    return MachineCheck("cuda_home", "pass", f"{home} ({source})", expected)


def check_torch_lib_on_loader_path(p: Probe) -> MachineCheck:
    expected = "torch's lib folder in LD_LIBRARY_PATH (to load the .so outside `import torch`)"
    try:
        torch = p.torch()
    except TorchUnavailable:
        return MachineCheck("torch_lib_on_loader_path", "warn", "unknown: torch does not import", expected,
                            "fix the torch check first")
    lib = os.path.join(os.path.dirname(str(torch.__file__)), "lib")
    entries = [e for e in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if e]
    if any(os.path.realpath(e) == os.path.realpath(lib) for e in entries):
        return MachineCheck("torch_lib_on_loader_path", "pass", lib, expected)
    return MachineCheck("torch_lib_on_loader_path", "warn", f"{lib} not in LD_LIBRARY_PATH", expected,
                        f'export LD_LIBRARY_PATH="{lib}:$LD_LIBRARY_PATH"')


def check_ninja(p: Probe) -> MachineCheck:
    expected = "ninja on PATH (cpp_extension falls back to a slow, serial build without it)"
    missing = MachineCheck("ninja", "fail", "not found on PATH", expected, "pip install ninja")
    return version_check(p, "ninja", shutil.which("ninja"), expected, missing, r"^(\d+\.\d+\S*)")


def check_gcc(p: Probe) -> MachineCheck:
    expected = "a C++ compiler ($CXX, gcc or c++)"
    missing = MachineCheck("gcc", "fail", "no $CXX, gcc nor c++ on PATH", expected,
                           "apt-get install -y build-essential")
    return version_check(p, "gcc", p.compiler(), expected, missing, r"\A.*?(\d+\.\d+(?:\.\d+)?)\S*\s*$")
