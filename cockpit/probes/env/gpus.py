"""The GPU mapping check: which NVML GPU (index, UUID, name) each CUDA ordinal is. They differ
whenever CUDA_VISIBLE_DEVICES is set or CUDA's fastest-first order is not the PCI order; the
cockpit names GPUs by UUID everywhere, and this line shows the engineer the mapping."""

from __future__ import annotations

import os
from typing import Any

from .probe import MachineCheck, Probe, TorchUnavailable, one_line

EXPECTED = "CUDA ordinal i is NVML GPU i (when not, the cockpit still finds each GPU by UUID)"
PIN_FIX = ('nothing to fix: the cockpit watches the GPU a gate ran on by UUID; to pin the gates to one '
           'GPU set [gates] device = "GPU-…" in cockpit.toml (`nvidia-smi -L` lists the UUIDs)')


def cuda_gpus(torch: Any) -> list[dict[str, Any]]:
    """Each CUDA device this process sees, by ordinal, with its UUID and PCI bus id."""
    out = []
    for ordinal in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(ordinal)
        raw = str(getattr(props, "uuid", "") or "")
        pci = None
        if hasattr(props, "pci_bus_id"):
            pci = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
        out.append({"ordinal": ordinal, "name": props.name, "pci_bus_id": pci,
                    "uuid": raw if raw.startswith(("GPU-", "MIG-")) or not raw else f"GPU-{raw}"})
    return out


def nvml_gpus() -> list[dict[str, Any]]:
    """Each GPU NVML lists, by NVML index; raises when NVML cannot be read."""
    import pynvml  # type: ignore[import-untyped, unused-ignore]

    def text(value: Any) -> str:
        return value.decode() if isinstance(value, bytes) else str(value)

    pynvml.nvmlInit()
    try:
        out = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(index)
            out.append({"index": index, "name": text(pynvml.nvmlDeviceGetName(h)),
                        "uuid": text(pynvml.nvmlDeviceGetUUID(h)),
                        "pci_bus_id": text(pynvml.nvmlDeviceGetPciInfo(h).busId)})
        return out
    finally:
        pynvml.nvmlShutdown()


def _short(uuid: str | None) -> str:
    return "-".join(uuid.split("-")[:2]) if uuid else "no UUID"


def mapping_check(cuda: list[dict[str, Any]], nvml: list[dict[str, Any]],
                  visible: str | None) -> MachineCheck:
    """`cuda:0 → NVML 1 GPU-5f0e2c71 (NVIDIA H200)` for each CUDA device: a pass when every
    ordinal is its NVML index, a warning when not (or when NVML does not know a device)."""
    parts, differ, unknown = [], False, []
    for dev in cuda:
        match = next((g for g in nvml if dev["uuid"] and g["uuid"].lower() == dev["uuid"].lower()), None)
        match = match or next((g for g in nvml if dev["pci_bus_id"] and g["pci_bus_id"] == dev["pci_bus_id"]),
                              None)
        if match is None:
            unknown.append(f"cuda:{dev['ordinal']}")
            parts.append(f"cuda:{dev['ordinal']} → not in NVML ({_short(dev['uuid'])}, {dev['name']})")
            continue
        differ |= match["index"] != dev["ordinal"]
        parts.append(f"cuda:{dev['ordinal']} → NVML {match['index']} {_short(match['uuid'])} "
                     f"({match['name']})")
    where = f"CUDA_VISIBLE_DEVICES={visible!r}" if visible is not None else "CUDA_VISIBLE_DEVICES unset"
    value = one_line("; ".join(parts) + f"; NVML sees {len(nvml)} GPU{'s' * (len(nvml) != 1)} ({where})")
    if unknown:
        return MachineCheck(
            "gpu_mapping", "warn", value, EXPECTED,
            f"{', '.join(unknown)} matched no NVML GPU by UUID or PCI bus id: a MIG slice or "
            "a container that hides the GPU from NVML; the bench watch will say it saw nothing")
    if differ:
        return MachineCheck(
            "gpu_mapping", "warn", "CUDA ordinals are not NVML indices here: " + value, EXPECTED,
            PIN_FIX)
    return MachineCheck("gpu_mapping", "pass", value, EXPECTED)


def check_gpu_mapping(p: Probe) -> MachineCheck:
    try:
        torch = p.torch()
    except TorchUnavailable:
        return MachineCheck("gpu_mapping", "warn", "unknown: torch does not import", EXPECTED,
                            "fix the torch check first")
    if not p.torch_cuda() or not torch.cuda.is_available():
        return MachineCheck("gpu_mapping", "warn", "unknown: no CUDA device", EXPECTED,
                            "fix the cuda_available check first")
    cuda = cuda_gpus(torch)
    try:
        nvml = nvml_gpus()
    except Exception as exc:  # no pynvml, or no driver: the ordinals alone, and why
        listed = "; ".join(f"cuda:{d['ordinal']} {d['uuid']}" for d in cuda)
        return MachineCheck(
            "gpu_mapping", "warn", one_line(f"{listed}; NVML not readable: {type(exc).__name__}: "
                                            f"{exc}"), EXPECTED,
            "pip install nvidia-ml-py  # the cockpit watches GPUs through NVML")
    return mapping_check(cuda, nvml, os.environ.get("CUDA_VISIBLE_DEVICES"))
