"""The profiler checks: ncu installed, GPU performance counters readable by this user, and
persistence mode on every GPU."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .probe import MachineCheck, Probe, version_check

NVIDIA_PARAMS = Path("/proc/driver/nvidia/params")
_CAP_SYS_ADMIN = 21


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


def check_ncu(p: Probe) -> MachineCheck:
    expected = "ncu (Nsight Compute) for the profile gate"
    cuda = p.torch_cuda() or "13.0"
    missing = MachineCheck("ncu", "warn", "not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)", expected,
                           f"apt-get install cuda-nsight-compute-{cuda.replace('.', '-')}  "
                           "# Nsight Compute; or add $CUDA_HOME/bin to PATH")
    check = version_check(p, "ncu", p.ncu_path(), expected, missing, r"Version (\S+)")
    # ncu being there but broken does not block building: the profile gate needs it.
    if check.status == "pass":
        return check
    return MachineCheck(check.name, "warn", check.value, expected, check.fix)


def check_ncu_counters(p: Probe) -> MachineCheck:
    expected = "GPU performance counters readable by this user (RmProfilingAdminOnly: 0, or root)"
    admin_only = profiling_admin_only()
    if admin_only is None:
        return MachineCheck("ncu_counters", "warn", "unknown (no NVIDIA driver params)", expected,
                            "install or load the NVIDIA driver; `nvidia-smi` must work")
    if not admin_only:
        return MachineCheck("ncu_counters", "pass", "RmProfilingAdminOnly: 0", expected)
    if os.geteuid() == 0 or has_cap_sys_admin():
        return MachineCheck(
            "ncu_counters", "pass", "RmProfilingAdminOnly: 1, but running as root/CAP_SYS_ADMIN",
            expected)
    return MachineCheck(
        "ncu_counters", "warn", "RmProfilingAdminOnly: 1 and not root: ncu gets ERR_NVGPUCTRPERM",
        expected, "run as root or with CAP_SYS_ADMIN, or set NVreg_RestrictProfilingToAdminUsers=0 "
        "(modprobe option) and reload the driver")


def check_persistence_mode(p: Probe) -> MachineCheck:
    expected = "on for every GPU (else each process pays the driver's start-up, clocks reset)"
    try:
        import pynvml  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return MachineCheck("persistence_mode", "warn", "unknown: pynvml not installed", expected,
                            "pip install nvidia-ml-py")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return MachineCheck("persistence_mode", "warn", f"no NVML (no driver?): {exc}", expected,
                            "install or load the NVIDIA driver; `nvidia-smi` must list the GPUs")
    try:
        count = int(pynvml.nvmlDeviceGetCount())
        off = [index for index in range(count)
               if pynvml.nvmlDeviceGetPersistenceMode(pynvml.nvmlDeviceGetHandleByIndex(index))
               != pynvml.NVML_FEATURE_ENABLED]
    finally:
        pynvml.nvmlShutdown()
    if count == 0:
        return MachineCheck("persistence_mode", "warn", "NVML sees no GPU", expected,
                            "run `nvidia-smi`; install or reload the NVIDIA driver")
    if off:
        return MachineCheck("persistence_mode", "warn", f"off on GPU {', '.join(map(str, off))} of {count}",
                            expected, "sudo nvidia-smi -pm 1")
    return MachineCheck("persistence_mode", "pass", f"on ({count}/{count} GPUs)", expected)
