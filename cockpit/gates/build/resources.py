"""Each compiled kernel as it is launched: ptxas's registers, spills and stack, the launcher's
threads and dynamic shared memory per block (the extension's `launch_info()`), and the
occupancy that gives on the GPU present (the CUDA runtime's own answer) and on each target GPU
(the limits table), held against the budgets: a kernel that cannot launch on a target fails the
build, one under the occupancy floor or one that spills is a warning."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypedDict

from cockpit.gates.build.log import KernelResources
from cockpit.hardware.limits import GpuLimits, arch_of, limits_for
from cockpit.hardware.occupancy import occupancy
from cockpit.hardware.symbols import demangle_all, function_parts, short_name, split_args
from cockpit.json_fields import JsonObject, as_number, obj

Launch = tuple[int, int, bool]
"""A kernel's launch as occupancy needs it: threads per block, dynamic smem bytes, smem opt-in."""
KernelKey = tuple[str, tuple[str, ...]]
"""A kernel as launch_info() names it: its unqualified function name and its template arguments."""
Built = dict[tuple[KernelKey, str | None], KernelResources]
"""The kernels compiled, by key and arch."""

@dataclass(frozen=True)
class ResourcePolicy:
    """What the build gate holds every kernel to."""

    targets: tuple[str, ...] = ("sm_89", "sm_90")
    """The GPUs the kernel must run on (the team's L4 and H100/H200): occupancy is computed for
    each, and a kernel that cannot launch on one of them fails the build."""
    occupancy_floor: float = 0.125
    """Under this share of an SM's warp slots (8 of 64 on Hopper, 6 of 48 on an L4: fewer than
    two warps per scheduler to hide latency with) the build warns."""


class TargetOccupancy(TypedDict):
    """A kernel's occupancy on one GPU, as the build result records it."""

    gpu: str
    arch: str
    source: str
    """`CUDA runtime` (the GPU present) or `limits table`."""
    blocks_per_sm: int
    warps_per_sm: int
    fraction: float | None
    limiter: str
    registers: int
    note: str


class KernelRowJson(TypedDict):
    """One compiled kernel's row of the build result: ptxas's numbers, then its launch as
    launch_info() gave it (None: not in launch_info()) and its occupancy on each target."""

    name: str
    arch: str
    registers: int
    smem: int
    stack: int
    spill_stores: int
    spill_loads: int
    label: str
    threads: object
    dynamic_smem: object
    smem_per_block: int | None
    smem_opt_in: object
    occupancy: list[TargetOccupancy]


@dataclass(frozen=True)
class ResourceFinding:
    severity: Literal["fail", "warn"]
    text: str


@dataclass(frozen=True)
class KernelReport:
    rows: tuple[KernelRowJson, ...]
    findings: tuple[ResourceFinding, ...]
    notes: tuple[str, ...]
    launch_known: bool
    why_unknown: str = ""


def _gpu_name(name: str) -> str:
    return name.removeprefix("NVIDIA ").strip()


def launch_entries(launch: JsonObject | None) -> tuple[list[JsonObject], str]:
    """The launch table the build probe recorded, or why there is none."""
    if not launch:
        return [], "the build probe did not report the extension's launch_info()"
    if launch.get("error"):
        return [], str(launch["error"])
    entries = launch.get("kernels")
    if not isinstance(entries, list) or not entries:
        return [], "launch_info() listed no kernel"
    return [obj(e) for e in entries if isinstance(e, dict)], ""


def report_kernels(kernels: list[KernelResources], launch: JsonObject | None,
                   policy: ResourcePolicy | None = None) -> KernelReport:
    """Every kernel ptxas (or cuobjdump) named, joined with its launch-table entry and judged."""
    policy = policy or ResourcePolicy()
    entries, why = launch_entries(launch)
    gpu = _launch_gpu(launch)
    names = demangle_all(k.name for k in kernels)
    by_key = {(e.get("kernel"), split_args(str(e.get("template_args", "")))): e for e in entries}
    built, keyed = _keyed(kernels, names)
    rows: list[KernelRowJson] = []
    findings: list[ResourceFinding] = []
    notes: list[str] = []
    for key, k in keyed:
        entry = by_key.get(key)
        label = str(entry["label"]) if entry else short_name(names[k.name])
        targets = _targets(key, k, entry, gpu, built, policy) if entry is not None else []
        rows.append(_row(k, label, entry, targets))
        findings += _spills(label, k) + _judge(label, targets, policy) + _unlisted(label, k, entry, entries)
        notes += _not_in_limits_table(targets)
    why = _none_matched(entries, kernels, rows) or why
    rows.sort(key=lambda r: (r["label"], r["arch"]))
    findings.sort(key=lambda f: f.severity != "fail")
    return KernelReport(tuple(rows), tuple(findings), tuple(dict.fromkeys(notes)),
                        bool(entries) and not why, why)


def _keyed(kernels: list[KernelResources], names: Mapping[str, str]) -> tuple[
        Built, list[tuple[KernelKey, KernelResources]]]:
    """Each kernel with its key (function name, template args), and the kernels by (key, arch):
    the other targets are judged with the registers of the build for their arch, when there is one."""
    built: Built = {}
    keyed = []
    for k in kernels:
        key = function_parts(names[k.name])
        built[(key, arch_of(k.arch))] = k
        keyed.append((key, k))
    return built, keyed


def _row(k: KernelResources, label: str, entry: JsonObject | None,
         targets: list[TargetOccupancy]) -> KernelRowJson:
    """A kernel's row: ptxas's numbers and, from its launch-table entry (when it has one), the
    launch, its shared memory per block (static from ptxas plus the entry's dynamic) and its
    occupancy on each target."""
    launch = entry or {}
    dynamic = launch.get("dynamic_smem_bytes")
    return {"name": k.name, "arch": k.arch, "registers": k.registers, "smem": k.smem, "stack": k.stack,
            "spill_stores": k.spill_stores, "spill_loads": k.spill_loads, "label": label,
            "threads": launch.get("threads_per_block"), "dynamic_smem": dynamic,
            "smem_per_block": None if entry is None else k.smem + _count(dynamic),
            "smem_opt_in": launch.get("smem_opt_in"), "occupancy": targets}


def _count(value: object) -> int:
    """A count launch_info() gave (a number, or its digits), 0 when it gave none."""
    return int(value) if isinstance(value, (int, float, str)) and value else 0


def _unlisted(label: str, k: KernelResources, entry: JsonObject | None,
              entries: list[JsonObject]) -> list[ResourceFinding]:
    """A warning for a kernel launch_info() leaves out, when it lists others."""
    if entry is not None or not entries:
        return []
    return [ResourceFinding("warn", f"{label} ({k.arch}) is not in launch_info(): its shared memory per "
                                    "block and occupancy are unknown (csrc/README.md)")]


def _not_in_limits_table(targets: list[TargetOccupancy]) -> list[str]:
    """The notes of targets whose limiter is unknown (their arch is not in the limits table)."""
    return [t["note"] for t in targets if t["limiter"] == "?"]


def _launch_gpu(launch: JsonObject | None) -> JsonObject | None:
    """The GPU the build probe ran on, as launch_info() saw it (None when it saw none)."""
    return obj((launch or {}).get("gpu")) or None


def _spills(label: str, k: KernelResources) -> list[ResourceFinding]:
    """A warning for a kernel that spills registers to local memory (none when it spills nothing)."""
    spilled = k.spill_stores + k.spill_loads
    if not spilled:
        return []
    return [ResourceFinding("warn", f"{label} ({k.arch}) spills {spilled} bytes to local memory")]


def _none_matched(entries: list[JsonObject], kernels: list[KernelResources],
                  rows: list[KernelRowJson]) -> str:
    """Why occupancy is unknown when launch_info() lists kernels but none of the compiled ones
    matches an entry ("" when some kernel matched, or there was nothing to match)."""
    if entries and kernels and not any(r["occupancy"] for r in rows):
        return "no compiled kernel matches an entry of launch_info(); check its template_args"
    return ""


def _targets(key: KernelKey, k: KernelResources, entry: JsonObject, gpu: JsonObject | None, built: Built,
             policy: ResourcePolicy) -> list[TargetOccupancy]:
    threads, dynamic, opt_in = _entry_launch(entry)
    own = arch_of(k.arch) or k.arch
    out: list[TargetOccupancy] = []
    here = _gpu_arch(gpu)
    if here is not None and gpu is not None:
        out += _runtime_here(gpu, here, own, entry.get("device"), (threads, dynamic, opt_in),
                             here == own or (key, here) not in built)
    builds = _other_builds(entry)
    for arch in dict.fromkeys((own, *policy.targets)):
        limits = limits_for(arch)
        if limits is None or _has_own_row(arch, own, here if out else None, (key, arch) in built):
            continue
        launch, note = _arch_launch((threads, dynamic, opt_in), builds, arch, own, k)
        occ = occupancy(limits, launch[0], k.registers, launch[1], k.smem, launch[2])
        out.append(TargetOccupancy(gpu=limits.gpu, arch=arch, source="limits table",
                                   blocks_per_sm=occ.blocks_per_sm, warps_per_sm=occ.warps_per_sm,
                                   fraction=occ.fraction, limiter=occ.limiter, registers=k.registers,
                                   note=occ.why_not or note))
    return out


def _gpu_arch(gpu: JsonObject | None) -> str | None:
    """The arch of the GPU present (None when the probe saw no GPU)."""
    return arch_of(str(gpu.get("arch", ""))) if gpu else None


def _runtime_here(gpu: JsonObject, here: str, own: str, device: object, launch: Launch,
                  runs_here: bool) -> list[TargetOccupancy]:
    """The CUDA runtime's answer for the GPU present, when this build is the one that runs on it
    (its own arch, or no build of that arch) and the probe asked the runtime."""
    if not runs_here or not isinstance(device, dict):
        return []
    return [_runtime(gpu, here or own, obj(device), *launch)]


def _other_builds(entry: JsonObject) -> JsonObject:
    """What the extension says a build for each other arch launches (none when it says nothing)."""
    return obj(entry.get("builds"))


def _entry_launch(entry: JsonObject) -> Launch:
    """The launch a launch_info() entry declares: threads per block, dynamic smem, smem opt-in."""
    return (_count(entry.get("threads_per_block")), _count(entry.get("dynamic_smem_bytes")),
            bool(entry.get("smem_opt_in")))


def _has_own_row(arch: str, own: str, answered: str | None, built_for_arch: bool) -> bool:
    """Whether `arch` is judged elsewhere: the GPU present (`answered`) answered for itself, or a
    build for that arch has its own row."""
    return arch == answered or (arch != own and built_for_arch)


def _arch_launch(launch: Launch, builds: JsonObject, arch: str, own: str,
                 k: KernelResources) -> tuple[Launch, str]:
    """The launch (threads, dynamic smem, opt-in) to judge `arch` by, and its note: another arch
    is judged with this build's registers, and, where the extension says what a build for that
    arch launches (its own tile, e.g. the L4's where this build has the H100's), by that build."""
    if arch == own:
        return launch, ""
    note = f"with the {k.arch} build's {k.registers} registers"
    other = builds.get(arch)
    if not isinstance(other, dict) or not other.get("threads_per_block"):
        return launch, note
    theirs = (int(other["threads_per_block"]), int(other.get("dynamic_smem_bytes") or 0),
              bool(other.get("smem_opt_in")))
    if theirs != launch:
        note = f"the {arch} build's own tile, {other.get('label', '?')}; {note}"
    return theirs, note


def _runtime(gpu: JsonObject, arch: str, device: JsonObject, threads: int, dynamic: int,
             opt_in: bool) -> TargetOccupancy:
    """The CUDA runtime's blocks per SM; the limiter is the calculator's when both agree."""
    blocks, regs = _count(device.get("blocks_per_sm")), _count(device.get("num_regs"))
    static = _count(device.get("static_smem_bytes"))
    warps = -(-threads // 32)
    limits: GpuLimits | None = limits_for(arch)
    slots = as_number(gpu.get("max_warps_per_sm")) or (limits.max_warps_per_sm if limits else None)
    name = _gpu_name(str(gpu.get("name", arch)))
    limiter, note = "?", f"{arch} is not in the limits table: the runtime's count is shown alone"
    if limits is not None:
        occ = occupancy(limits, threads, regs, dynamic, static, opt_in)
        if occ.blocks_per_sm == blocks:
            limiter, note = occ.limiter, occ.why_not
        else:
            note = (f"the limits table gives {occ.blocks_per_sm} blocks/SM on {name} where the CUDA "
                    f"runtime gives {blocks}: cockpit/hardware/limits.py disagrees with this GPU")
    return TargetOccupancy(gpu=name, arch=arch, source="CUDA runtime", blocks_per_sm=blocks,
                           warps_per_sm=blocks * warps, fraction=blocks * warps / slots if slots else None,
                           limiter=limiter, registers=regs, note=note)


def _judge(label: str, targets: list[TargetOccupancy], policy: ResourcePolicy) -> list[ResourceFinding]:
    out = []
    for t in targets:
        where, fraction = f"{t['gpu']} ({t['arch']})", t["fraction"]
        if t["blocks_per_sm"] == 0:
            why = t["note"] or "the CUDA runtime gives it 0 blocks per SM"
            out.append(ResourceFinding("fail", f"{label} cannot launch on {where}: {why}"))
        elif fraction is not None and fraction < policy.occupancy_floor:
            out.append(ResourceFinding("warn", f"{label} keeps {t['warps_per_sm']} warps/SM on {where} "
                               f"({fraction:.0%}, {t['limiter']}), under the "
                               f"{policy.occupancy_floor:.1%} floor"))
    return out


def resources_summary(report: KernelReport) -> str:
    """`8 kernels: ≤255 regs, no spills, ≤96 KB smem/block; fewest warps/SM: ...`."""
    rows = report.rows
    if not rows:
        return "no kernel resource usage reported"
    regs = max(r["registers"] for r in rows)
    spills = sum(r["spill_stores"] + r["spill_loads"] for r in rows)
    text = (f"{len(rows)} kernels: ≤{regs} regs, "
            + ("no spills" if not spills else f"{spills} bytes spilled"))
    if not report.launch_known:
        return f"{text}; shared memory per block and occupancy unknown: {report.why_unknown}"
    smem = max(r["smem_per_block"] or 0 for r in rows)
    parts = [f"{t['warps_per_sm']} {where}"
             + (f" ({t['fraction']:.0%}, {t['limiter']})" if t["fraction"] is not None else "")
             for where, t in _fewest_warps(rows).items()]
    return f"{text}, ≤{smem / 1024:g} KB smem/block; fewest warps/SM: {', '.join(parts)}"


def _fewest_warps(rows: Sequence[KernelRowJson]) -> dict[str, TargetOccupancy]:
    """Each GPU's target with the fewest warps per SM over every kernel ("on this H100" when the
    CUDA runtime answered for the GPU present)."""
    lowest: dict[str, TargetOccupancy] = {}
    for r in rows:
        for t in r["occupancy"]:
            where = f"on {'this ' if t['source'] == 'CUDA runtime' else ''}{t['gpu']}"
            if where not in lowest or t["warps_per_sm"] < lowest[where]["warps_per_sm"]:
                lowest[where] = t
    return lowest
