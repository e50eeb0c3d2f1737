"""Which configurations can run on a GPU, decided before anything is compiled.

In order, the first that fails names the rejection:
- tile divisibility: the kernel's own static_asserts (16 or 32 query rows per warp, tiles that
  split evenly over the threads' 16-byte copies, at most 1024 threads);
- shared memory: the dynamic shared memory per block as launched (Q + stages x (K + V)) against
  the GPU's opt-in limit per block;
- registers: an estimate of the registers a thread keeps live against what
  `__launch_bounds__(threads, min_blocks)` leaves it; the estimate counts only the MMA fragments
  and accumulators (Q fragments, S and O accumulators) plus a fixed allowance for addresses and
  row statistics, so it is a lower bound: a configuration over it certainly spills, one under it
  may still spill, which ptxas -v tells after compiling (`after_compile`);
- occupancy: resident warps per SM (cockpit.hardware.occupancy, with the estimated registers)
  under the floor.
"""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.gates.build_log import KernelResources
from cockpit.hardware.limits import GpuLimits
from cockpit.hardware.occupancy import occupancy
from cockpit.tune.space import KernelParams

LIMITS = ("tile divisibility", "shared memory", "registers", "occupancy", "spills")
"""Every reason a configuration is rejected, in the order they are checked ("spills" and a
second occupancy check come from ptxas, after compiling)."""

# Addresses, loop counters, row max/sum and the softmax's temporaries: what the measured
# defaults use beyond their fragments (126-128 and 253-255 registers for 96 and 192 of them).
REGISTER_ALLOWANCE = 24


@dataclass(frozen=True)
class Rejection:
    limit: str
    text: str


def register_estimate(params: KernelParams, head_dim: int) -> int:
    """Registers a thread keeps live at the least: per 16-row tile it owns, the Q fragments
    (D/16 x 4 held for the whole loop, or one k-step's 4 when read from shared memory), the S
    accumulators (BN/8 x 4) and the O accumulators (D/8 x 4)."""
    row_tiles = max(1, params.block_m // (16 * params.warps))
    q = head_dim // 16 * 4 if params.q_regs else 4
    per_tile = q + params.block_n // 8 * 4 + head_dim // 8 * 4
    return row_tiles * per_tile + REGISTER_ALLOWANCE


def register_cap(params: KernelParams, limits: GpuLimits) -> int:
    """What `__launch_bounds__(threads, min_blocks)` lets ptxas give a thread."""
    per_thread = limits.regs_per_sm // (params.threads * params.min_blocks)
    return min(limits.max_regs_per_thread, per_thread // 8 * 8)


def check(params: KernelParams, head_dim: int, limits: GpuLimits,
          occupancy_floor: float) -> Rejection | None:
    """The first limit this configuration breaks on `limits`' GPU, or None when it may run."""
    divisibility = _divisibility(params, head_dim)
    if divisibility:
        return Rejection("tile divisibility", divisibility)
    smem = params.smem_bytes(head_dim)
    if smem > limits.smem_per_block_optin:
        return Rejection("shared memory", f"{smem / 1024:g} KB of shared memory per block; "
                         f"{limits.label} allows {limits.smem_per_block_optin / 1024:g} KB")
    need, cap = register_estimate(params, head_dim), register_cap(params, limits)
    if need > cap:
        return Rejection("registers", f"needs at least {need} registers per thread; "
                         f"{params.threads} threads x {params.min_blocks} blocks/SM leave {cap}")
    return _occupancy(params, head_dim, limits, need, occupancy_floor)


def after_compile(params: KernelParams, head_dim: int, limits: GpuLimits,
                  occupancy_floor: float, kernels: list[KernelResources]) -> Rejection | None:
    """What ptxas -v said about the compiled kernels of this head dim: any spill rejects it,
    and the occupancy is judged again with the registers ptxas really gave."""
    spilling = [k for k in kernels if k.spill_stores or k.spill_loads]
    if spilling:
        worst = max(spilling, key=lambda k: k.spill_stores + k.spill_loads)
        return Rejection("spills", f"ptxas spills {worst.spill_stores} bytes per thread "
                         f"({worst.registers} registers)")
    if not kernels:
        return None
    return _occupancy(params, head_dim, limits, max(k.registers for k in kernels), occupancy_floor)


def _divisibility(params: KernelParams, head_dim: int) -> str:
    rows = params.block_m / params.warps
    if rows not in (16, 32):
        return (f"{params.block_m} query rows over {params.warps} warps is {rows:g} per warp; "
                "the kernel takes 16 or 32")
    if params.threads > 1024:
        return f"{params.threads} threads per block (at most 1024)"
    chunks = params.block_n * head_dim // 8
    if chunks % params.threads:
        return (f"a {params.block_n}-key tile is {chunks} 16-byte copies, which {params.threads} "
                "threads cannot split evenly")
    return ""


def _occupancy(params: KernelParams, head_dim: int, limits: GpuLimits, registers: int,
               floor: float) -> Rejection | None:
    occ = occupancy(limits, params.threads, registers, params.smem_bytes(head_dim))
    if occ.blocks_per_sm == 0:
        return Rejection("occupancy", occ.why_not)
    if occ.fraction < floor:
        return Rejection("occupancy", f"{occ.warps_per_sm} warps per SM ({occ.fraction:.0%}, "
                         f"{occ.limiter}) is under the {floor:.1%} floor")
    return None
