"""The GPU a gate's child runs on.

`[gates] device` in cockpit.toml pins every gate: its child gets CUDA_VISIBLE_DEVICES set to that
GPU's UUID (a PCI bus id or NVML index is looked up in NVML first; a UUID needs no lookup). A
CUDA_VISIBLE_DEVICES in `[gates.<name>] env` wins over the pin for that gate; without either, the
cockpit's own CUDA_VISIBLE_DEVICES is passed on as it is. `GateDevice` says which GPU that is
for the GPU panel, before the probe reports the UUID it really ran on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cockpit.config import Config
from cockpit.errors import CockpitError
from cockpit.hardware.device_spec import DeviceSpec
from cockpit.session.state import GateRunRecord
from cockpit.telemetry.identity import GpuChoice, cuda_ordinal_gpu, find_gpu, short_uuid
from cockpit.telemetry.sample import GpuStatic

if TYPE_CHECKING:
    from cockpit.gates.process import GateCommand
from cockpit.gates.result import gpu_uuid

VISIBLE = "CUDA_VISIBLE_DEVICES"


@dataclass(frozen=True)
class GateDevice:
    """What the cockpit knows about a gate child's GPU without asking NVML: resolved against the
    GPUs NVML lists (`choose`) wherever they are at hand, as in the GPU panel."""

    visible: str | None
    """CUDA_VISIBLE_DEVICES as the child sees it (None: unset, CUDA's first GPU)."""
    pin: DeviceSpec | None = None
    """`[gates] device`, when it decides (a PCI bus id or NVML index not yet turned into a UUID)."""
    pci_order: bool = False
    """CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA's ordinals follow the PCI bus, as NVML's indices do."""
    gate: str | None = None
    """The gate running on it now; None when none runs (the GPU the next gate would use)."""

    def choose(self, gpus: Sequence[GpuStatic]) -> GpuChoice:
        if self.pin is not None and self.pin.kind in ("pci", "index"):
            gpu = find_gpu(self.pin, gpus)
            return GpuChoice(gpu, gpu is not None, f"[gates] device = {self.pin}")
        choice = cuda_ordinal_gpu(self.visible, 0, gpus, self.pci_order)
        return replace(choice, why="[gates] device in cockpit.toml") if self.pin is not None else choice


def gate_device(config: Config, gate: str, environ: Mapping[str, str], running: bool = False) -> GateDevice:
    """The GPU gate `gate` runs on (or would, when not `running`), from cockpit.toml and the
    cockpit's environment."""
    per_gate = config.gate(gate).env
    pci_order = per_gate.get("CUDA_DEVICE_ORDER", environ.get("CUDA_DEVICE_ORDER")) == "PCI_BUS_ID"
    name = gate if running else None
    if VISIBLE in per_gate:
        return GateDevice(per_gate[VISIBLE], None, pci_order, name)
    pin = config.pinned_gpu
    if pin is not None:
        visible = pin.value if pin.kind in ("uuid", "mig") else None
        return GateDevice(visible, pin, pci_order, name)
    return GateDevice(environ.get(VISIBLE), None, pci_order, name)


def command_device(command: GateCommand, environ: Mapping[str, str], gate: str) -> GateDevice:
    """The GPU a started gate runs on: its command's environment after the pin was applied."""
    env = {**environ, **command.env}
    return GateDevice(env.get(VISIBLE), None, env.get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID", gate)


def result_device(result: Mapping[str, Any], gate: str | None = None) -> GateDevice | None:
    """The GPU a journaled gate run's probe said it ran on (by UUID), if it said."""
    return reported_device(gpu_uuid(result.get("gpu")), gate)


def reported_device(uuid: str | None, gate: str | None = None) -> GateDevice | None:
    """The GPU of that UUID, as a finished gate's result names it (`GateResult.ran_on`)."""
    return GateDevice(uuid, None, False, gate) if uuid else None


def pin_command(command: GateCommand, config: Config, gpus: Sequence[GpuStatic] | None) -> GateCommand:
    """`command` with CUDA_VISIBLE_DEVICES set to the pinned GPU's UUID, when `[gates] device` is
    set and the gate's own env does not set CUDA_VISIBLE_DEVICES. `gpus` (NVML's, read only when
    the pin is a PCI bus id or an index) is None when NVML could not be read."""
    pin = config.pinned_gpu
    if pin is None or VISIBLE in command.env:
        return command
    value = pin.value
    if pin.kind in ("pci", "index"):
        value = _pinned_uuid(pin, config.pinned_gpu_where or "cockpit.toml", gpus)
    return replace(command, env={**command.env, VISIBLE: value})


def _pinned_uuid(pin: DeviceSpec, where: str, gpus: Sequence[GpuStatic] | None) -> str:
    """The UUID of the GPU a PCI bus id or an index pins (indices and bus ids can change between
    boots; the UUID is what CUDA_VISIBLE_DEVICES holds); one line saying what to do when NVML
    cannot be read or sees no such GPU."""
    if gpus is None:
        raise CockpitError(f"{where}: gates.device = {pin}: NVML cannot be read to find that GPU; "
                           "pin it by UUID (`nvidia-smi -L` lists them)")
    gpu = find_gpu(pin, gpus)
    if gpu is None or not gpu.uuid:
        seen = ", ".join(f"{g.index} {short_uuid(g.uuid)} {g.pci_bus_id or ''}".rstrip() for g in gpus)
        raise CockpitError(f"{where}: gates.device = {pin}: no such GPU (NVML sees {seen or 'none'}); "
                           "`nvidia-smi -L` lists them")
    return gpu.uuid


def needs_nvml(config: Config) -> bool:
    """Whether pinning needs NVML's list of GPUs (a pin by PCI bus id or NVML index)."""
    pin = config.pinned_gpu
    return pin is not None and pin.kind in ("pci", "index")


def nvml_gpus() -> tuple[GpuStatic, ...] | None:
    """Each GPU's NVML index, name, UUID and PCI bus id (~100 ms: pynvml's import and nvmlInit);
    None without NVML."""
    from cockpit.telemetry.nvml import Nvml

    nvml = Nvml()
    if nvml.open() is not None:
        return None
    try:
        return tuple(GpuStatic(i, name=nvml.name(i), uuid=nvml.uuid(i), pci_bus_id=nvml.pci_bus_id(i))
                     for i in range(nvml.device_count()))
    finally:
        nvml.close()


def phase_gpu_uuids(runs: Iterable[GateRunRecord], t0: float, t1: float, device: GateDevice | None,
                    gpus: Sequence[GpuStatic]) -> set[str] | None:
    """The GPUs a phase's GPU summary covers, by UUID: those the gates' probes said they ran on
    in [t0, t1], and the one the gates use now; None (every GPU) when none of them is known."""
    uuids = set()
    for run in runs:
        reported = result_device(run.result)
        if reported is not None and reported.visible and t0 <= (run.finished_t or run.started_t) <= t1:
            uuids.add(reported.visible)
    chosen = device.choose(gpus).uuid if device is not None else None
    if chosen:
        uuids.add(chosen)
    return uuids or None
