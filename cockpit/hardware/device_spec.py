"""Which physical GPU is meant: by UUID or PCI bus id, never by a CUDA ordinal.

CUDA numbers the GPUs a process can see (after `CUDA_VISIBLE_DEVICES`, fastest first unless
`CUDA_DEVICE_ORDER=PCI_BUS_ID`); NVML numbers every GPU of the machine in its own order. With
`CUDA_VISIBLE_DEVICES=1`, torch's `cuda:0` is NVML's GPU 1. Everything that says which GPU ran
or was watched therefore names it by UUID ("GPU-bb9154e7-…", as `nvidia-smi -L` prints it) or
PCI bus id ("00000000:1B:00.0"); this module parses those names (cockpit.toml's `[gates] device`,
CUDA_VISIBLE_DEVICES); `telemetry.identity` finds the GPU they mean among NVML's. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

DeviceKind = Literal["uuid", "mig", "pci", "index"]

_UUID = re.compile(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_MIG = re.compile(r"MIG-[0-9A-Za-z/-]+")
_PCI = re.compile(r"(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])", re.IGNORECASE)
DEVICE_RULE = ('a GPU UUID such as "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20" (`nvidia-smi -L` lists '
               'them), a MIG UUID "MIG-…", a PCI bus id such as "0000:1b:00.0", or an NVML index such as 1')


@dataclass(frozen=True)
class DeviceSpec:
    """One physical GPU (or MIG slice) named the way cockpit.toml or CUDA_VISIBLE_DEVICES names it."""

    kind: DeviceKind
    value: str
    """Normalised: a UUID in lower case, a PCI bus id as NVML writes it, an index as digits."""

    def __str__(self) -> str:
        return self.value


def parse_device(text: str | int) -> DeviceSpec:
    """A full GPU UUID, a MIG UUID, a PCI bus id or an NVML index; ValueError saying what is allowed."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text >= 0:
            return DeviceSpec("index", str(text))
    elif isinstance(text, str):
        s = text.strip()
        if _UUID.fullmatch(s):
            return DeviceSpec("uuid", "GPU-" + s[4:].lower())
        if _MIG.fullmatch(s):
            return DeviceSpec("mig", s)
        if s.isdigit():
            return DeviceSpec("index", str(int(s)))
        pci = normalise_pci_bus_id(s)
        if pci is not None:
            return DeviceSpec("pci", pci)
    raise ValueError(f"{text!r} is not a GPU (expected {DEVICE_RULE})")


def normalise_pci_bus_id(text: str) -> str | None:
    """'1b:00.0', '0000:1b:00.0' or NVML's '00000000:1B:00.0' as NVML writes it; None if not one."""
    m = _PCI.fullmatch(text.strip())
    if m is None:
        return None
    domain, bus, device, function = m.groups()
    return f"{int(domain or '0', 16):08X}:{int(bus, 16):02X}:{int(device, 16):02X}.{function}"


def pci_bus_id(domain: int, bus: int, device: int) -> str:
    """The PCI bus id of a CUDA device from its domain, bus and device numbers (function 0)."""
    return f"{domain:08X}:{bus:02X}:{device:02X}.0"


def visible_devices(value: str | None) -> tuple[str, ...] | None:
    """CUDA_VISIBLE_DEVICES split as CUDA reads it: None when unset (every GPU, ordinal 0 first),
    the entries up to the first one that is not a device otherwise (CUDA ignores the rest)."""
    if value is None:
        return None
    entries: list[str] = []
    for raw in value.split(","):
        entry = raw.strip()
        if not entry or not (entry.isdigit() or entry.startswith(("GPU-", "MIG-"))):
            break
        entries.append(entry)
    return tuple(entries)
