"""The GPU a name means among NVML's, and the GPU a gate's child runs on.

The names themselves (UUID, MIG UUID, PCI bus id, NVML index) are parsed in
`cockpit.hardware.device_spec`; this module matches them against the GPUs NVML lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cockpit.hardware.device_spec import DeviceSpec, normalise_pci_bus_id, visible_devices
from cockpit.telemetry.sample import GpuStatic


@dataclass(frozen=True)
class GpuChoice:
    """The physical GPU a gate's child runs on, as far as the cockpit can tell before it starts."""

    gpu: GpuStatic | None
    """The NVML GPU meant; None when it cannot be told (a MIG slice, an entry that names no GPU)."""
    exact: bool
    """True when named by UUID or PCI bus id; False for a CUDA ordinal taken to be NVML's order."""
    why: str
    """How it was chosen, in words: "[gates] device in cockpit.toml", "CUDA_VISIBLE_DEVICES=1", …"""

    @property
    def uuid(self) -> str | None:
        return self.gpu.uuid if self.gpu is not None else None


def find_gpu(spec: DeviceSpec, gpus: Sequence[GpuStatic]) -> GpuStatic | None:
    """The NVML GPU a spec names (an index is NVML's index here); None when none matches."""
    if spec.kind == "uuid":
        return next((g for g in gpus if (g.uuid or "").lower() == spec.value.lower()), None)
    if spec.kind == "pci":
        return next((g for g in gpus if g.pci_bus_id is not None
                     and normalise_pci_bus_id(g.pci_bus_id) == spec.value), None)
    if spec.kind == "index":
        return next((g for g in gpus if g.index == int(spec.value)), None)
    return None  # a MIG slice: NVML lists it under its GPU, which only the probe can name


def cuda_ordinal_gpu(visible: str | None, ordinal: int, gpus: Sequence[GpuStatic],
                     pci_order: bool = False) -> GpuChoice:
    """The GPU behind CUDA ordinal `ordinal` for a process with this CUDA_VISIBLE_DEVICES.

    A UUID entry is exact. A number is a CUDA ordinal, which is NVML's index only when CUDA
    enumerates in PCI order: with `CUDA_DEVICE_ORDER=PCI_BUS_ID` (`pci_order`), or on a box of
    one GPU model (CUDA's fastest-first order ties break by PCI bus). Otherwise it is a guess,
    and `exact` says so; the probe reports the UUID it really ran on.
    """
    entries = visible_devices(visible)
    where = "CUDA's first GPU" if entries is None else f"CUDA_VISIBLE_DEVICES={visible}"
    if entries is not None and ordinal >= len(entries):
        return GpuChoice(None, False, f"{where}: no GPU {ordinal} visible")
    entry = str(ordinal) if entries is None else entries[ordinal]
    same_model = len({g.name for g in gpus}) <= 1
    if entry.isdigit():
        gpu = next((g for g in gpus if g.index == int(entry)), None)
        return GpuChoice(gpu, gpu is not None and (pci_order or same_model), where)
    if entry.startswith("GPU-"):
        prefix = entry.lower()
        matches = [g for g in gpus if (g.uuid or "").lower().startswith(prefix)]
        return GpuChoice(matches[0] if len(matches) == 1 else None, len(matches) == 1, where)
    return GpuChoice(None, False, f"{where}: a MIG slice (its GPU is named once the probe runs)")


def short_uuid(uuid: str | None) -> str:
    """'GPU-bb9154e7' for 'GPU-bb9154e7-4d32-…': enough to tell a box's GPUs apart."""
    return "-".join(uuid.split("-")[:2]) if uuid else "no UUID"
