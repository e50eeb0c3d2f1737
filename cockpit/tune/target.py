"""Which GPU the search is for, and which GPUs it runs on.

The target's limits decide which configurations are searched: `--arch`, else
`TORCH_CUDA_ARCH_LIST` (one arch, e.g. `8.9`), else the GPU present. So an L4's space can be
examined on an H100 or on a machine with no GPU at all. The GPUs it runs on are named by UUID,
never by ordinal: each worker is pinned with CUDA_VISIBLE_DEVICES=<UUID> and watched through the
same UUID's NVML index.

A card is named as NVML names it (`NVIDIA H200`), never by the best-known card of its arch: an
H200 tuned is not called an H100 for sharing sm_90. A plan made where no card is present (a dry
run with `--arch`) names the arch alone; the search's results name the card that measured them
(`measured_on`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cockpit.errors import CockpitError
from cockpit.hardware.limits import LIMITS, GpuLimits, arch_of, limits_for
from cockpit.telemetry.nvml import Nvml


@dataclass(frozen=True)
class Gpu:
    index: int
    """NVML's index: nvidia-smi's numbering."""
    uuid: str
    name: str
    arch: str | None


@dataclass(frozen=True)
class Target:
    limits: GpuLimits
    source: str
    """How it was chosen, for the report: `--arch 8.9`, `TORCH_CUDA_ARCH_LIST=8.9`, `the GPU present`."""
    gpu_name: str | None = None
    """The card itself when it is the GPU present: an H200 is not called an H100 for sharing its arch."""

    @property
    def label(self) -> str:
        """`NVIDIA H200 (sm_90)`; the arch alone (`sm_89`) when no card present chose it."""
        return f"{self.gpu_name} ({self.limits.arch})" if self.gpu_name else self.limits.arch


def list_gpus(nvml: Nvml) -> list[Gpu]:
    """Every GPU NVML sees (none when it cannot start)."""
    if nvml.open() is not None:
        return []
    out = []
    for i in range(nvml.device_count()):
        uuid = nvml.uuid(i)
        if uuid is None:
            continue
        cc = nvml.compute_capability(i)
        out.append(Gpu(i, uuid, nvml.name(i) or "GPU", f"sm_{cc[0]}{cc[1]}" if cc else None))
    return out


def measured_on(target: str, arch: str, gpu: Gpu) -> str:
    """What a search's results say they were measured on: the card that measures them, as NVML
    names it (`NVIDIA H200 (sm_90)`), whatever chose the target (`--arch 9.0` on an H200 is still
    the H200); the target's limits beside it when they are another arch's."""
    card = f"{gpu.name} ({gpu.arch or arch})"
    return card if gpu.arch in (None, arch) else f"{card}, held to the limits of {target}"


def pick_gpus(gpus: list[Gpu], wanted: str | None, env: Mapping[str, str]) -> list[Gpu]:
    """The GPUs named by `--gpus` (nvidia-smi indices or UUIDs, comma-separated), else by
    CUDA_VISIBLE_DEVICES (UUIDs, or indices read as nvidia-smi's), else all of them."""
    spec = wanted if wanted is not None else env.get("CUDA_VISIBLE_DEVICES")
    if spec is None:
        return gpus
    picked: list[Gpu] = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        match = [g for g in gpus if (item.isdigit() and g.index == int(item))
                 or (not item.isdigit() and g.uuid.startswith(item))]
        if len(match) != 1:
            seen = ", ".join(f"{g.index} ({g.uuid})" for g in gpus) or "none"
            source = "--gpus" if wanted is not None else "CUDA_VISIBLE_DEVICES"
            raise CockpitError(f"{source}: {item!r} names {'no' if not match else 'more than one'} GPU "
                               f"(GPUs here: {seen}); name them by nvidia-smi index or UUID")
        if match[0] not in picked:
            picked.append(match[0])
    return picked


def resolve_target(arch_flag: str | None, env: Mapping[str, str], gpus: list[Gpu]) -> Target:
    """The GPU whose limits the space is held to."""
    if arch_flag is not None:
        return Target(_limits(arch_flag, "--arch"), f"--arch {arch_flag}")
    listed = env.get("TORCH_CUDA_ARCH_LIST", "").strip()
    if listed:
        items = listed.replace(",", ";").replace(" ", ";").split(";")
        arches = [a.strip().removesuffix("+PTX") for a in items if a.strip()]
        if len(set(arches)) > 1:
            raise CockpitError(f"TORCH_CUDA_ARCH_LIST={listed!r} names several arches: tune for one, "
                               "e.g. cockpit tune --arch 9.0")
        return Target(_limits(arches[0], "TORCH_CUDA_ARCH_LIST"), f"TORCH_CUDA_ARCH_LIST={listed}")
    if not gpus:
        raise CockpitError("no GPU here to tune for: name the target, e.g. cockpit tune --dry-run --arch 8.9 "
                           "(an L4) or --arch 9.0 (H100/H200)")
    first = gpus[0]
    if first.arch is None:
        raise CockpitError(f"NVML did not give {first.name}'s compute capability: name it with --arch")
    return Target(_limits(first.arch, "the GPU present"), f"the GPU present ({first.name})", first.name)


def _limits(text: str, source: str) -> GpuLimits:
    limits = limits_for(text)
    if limits is None:
        known = ", ".join(f"{a} ({lim.gpu})" for a, lim in LIMITS.items())
        name = arch_of(text) or text
        raise CockpitError(f"{source}: {name!r} is not an arch cockpit has limits for (known: {known})")
    return limits
