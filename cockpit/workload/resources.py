"""What a knob rule can ask of the target GPU: does a block of this size fit, and how many stay
resident. A workload's `rule(knobs, limits[, group])` gets the target's limits as a mapping; these
functions read it back, so a rule states only what its kernel launches:

    from cockpit.workload.resources import fits

    def rule(knobs, limits, group):
        threads = knobs["warps"] * 32
        smem = (knobs["block_m"] + 2 * knobs["block_n"]) * group["D"] * 2
        return fits(limits, threads=threads, smem=smem, registers=live_registers(knobs, group),
                    min_blocks=knobs["min_blocks"])

Checked in order, the first that fails is the answer: threads per block; dynamic shared memory per
block against the GPU's opt-in limit; the registers a thread needs at the least (a lower bound you
count: accumulators and fragments the kernel keeps live) against what `__launch_bounds__(threads,
min_blocks)` leaves it; resident warps per SM (CUDA's occupancy calculator, cockpit.hardware) under
`limits["occupancy_floor"]` (`[tune] occupancy_floor`). What ptxas really gives is judged after the
build (a configuration that spills is rejected then).

Runs in the gates' child Python: standard library and cockpit.hardware only, no torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from cockpit.hardware.limits import GpuLimits
from cockpit.hardware.occupancy import occupancy

DEFAULT_FLOOR = 0.125


def gpu_limits(limits: Mapping[str, Any]) -> GpuLimits | None:
    """The mapping a rule is given, as the limits table's record; None when it names no GPU (the
    workload is described without one: only the rule's own conditions apply)."""
    names = {f.name for f in fields(GpuLimits)}
    try:
        return GpuLimits(**{k: v for k, v in limits.items() if k in names})
    except TypeError:
        return None


def register_cap(limits: GpuLimits, threads: int, min_blocks: int = 1) -> int:
    """What `__launch_bounds__(threads, min_blocks)` lets ptxas give a thread."""
    per_thread = limits.regs_per_sm // max(1, threads * max(1, min_blocks))
    return min(limits.max_regs_per_thread, per_thread // 8 * 8)


def fits(limits: Mapping[str, Any], *, threads: int, smem: int, registers: int = 0,
         min_blocks: int = 1) -> str | None:
    """Why this launch cannot run (or runs under the occupancy floor) on the target GPU, in one line;
    None when it may, or when `limits` names no GPU."""
    gpu = gpu_limits(limits)
    if gpu is None:
        return None
    if not 0 < threads <= gpu.max_threads_per_block:
        return f"{threads} threads per block (the GPU allows 1..{gpu.max_threads_per_block})"
    if smem > gpu.smem_per_block_optin:
        return (f"{smem / 1024:g} KB of shared memory per block; {gpu.label} allows "
                f"{gpu.smem_per_block_optin / 1024:g} KB")
    cap = register_cap(gpu, threads, min_blocks)
    if registers > cap:
        return (f"needs at least {registers} registers per thread; {threads} threads x {min_blocks} "
                f"blocks/SM leave {cap}")
    occ = occupancy(gpu, threads, max(registers, 1), smem)
    if occ.blocks_per_sm == 0:
        return occ.why_not
    floor = float(limits.get("occupancy_floor", DEFAULT_FLOOR))
    if occ.fraction < floor:
        return (f"{occ.warps_per_sm} warps per SM ({occ.fraction:.0%}, {occ.limiter}) is under the "
                f"{floor:.1%} floor")
    return None
