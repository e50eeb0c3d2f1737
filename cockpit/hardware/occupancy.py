"""Theoretical occupancy: how many blocks of a kernel fit on one SM, and what stops more.

The rules of CUDA's occupancy calculator (`cuda_occupancy.h`, what
cudaOccupancyMaxActiveBlocksPerMultiprocessor computes) for the default carveout:
- warps: the SM's warp slots over the block's warps;
- registers: each warp gets `regs x 32` rounded up to 256; the register file is split over the
  4 sub-partitions and a warp lives in one, so a block fits per sub-partition, not per SM;
- shared memory: static + dynamic + the 1 KB the driver reserves per block, rounded up to
  128 bytes; above the 48 KB default a block needs the per-function opt-in, and never more than
  the opt-in limit;
- blocks: the SM's resident-block limit.
The barrier limit of Hopper and later is left out: with the one barrier __syncthreads uses it
never allows fewer blocks than the resident-block limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.hardware.limits import GpuLimits

LIMITERS = ("warps", "registers", "shared memory", "blocks")
_UNLIMITED = 2**31 - 1


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    fraction: float
    """Resident warps over the SM's warp slots."""
    limiters: tuple[str, ...]
    """Every limit that allows exactly `blocks_per_sm` (ties name several)."""
    smem_per_block: int
    """Bytes allocated per block: static + dynamic + reserved, rounded to the allocation unit."""
    why_not: str = ""
    """When no block fits: what does not, in one line."""

    @property
    def limiter(self) -> str:
        return " + ".join(self.limiters) if self.limiters else "n/a"


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def occupancy(limits: GpuLimits, threads_per_block: int, registers: int, dynamic_smem: int,
              static_smem: int = 0, opt_in: bool = True) -> Occupancy:
    """Blocks and warps per SM for a launch of `threads_per_block` threads using `registers`
    per thread and `dynamic_smem` + `static_smem` bytes of shared memory per block. `opt_in`:
    the launcher raises the function's dynamic shared-memory limit to what it launches with."""
    warps = -(-threads_per_block // limits.warp_size)
    smem_used = static_smem + limits.smem_reserved_per_block + dynamic_smem
    smem = _round_up(smem_used, limits.smem_alloc_unit)
    if threads_per_block > limits.max_threads_per_block or threads_per_block <= 0:
        return _none(smem, "warps", f"{threads_per_block} threads per block; "
                     f"{limits.arch} allows 1..{limits.max_threads_per_block}")
    by_warps = limits.max_warps_per_sm // warps

    regs_per_warp = _round_up(registers * limits.warp_size, limits.reg_alloc_unit)
    # The hardware checks a block as if its warps filled every sub-partition evenly.
    regs_checked = regs_per_warp * _round_up(warps, limits.sub_partitions)
    if registers > limits.max_regs_per_thread or regs_checked > limits.regs_per_block:
        return _none(smem, "registers", f"{registers} registers x {threads_per_block} threads is over "
                     f"{limits.arch}'s {limits.regs_per_block} per block")
    by_regs = _blocks_by_registers(limits, regs_per_warp, warps)

    max_dynamic = dynamic_smem if opt_in else limits.smem_per_block_default - static_smem
    if dynamic_smem > max_dynamic:
        return _none(smem, "shared memory", f"{dynamic_smem / 1024:g} KB of dynamic shared memory without "
                     f"the opt-in: the default allows {max_dynamic / 1024:g} KB")
    per_block = _smem_per_block(limits, static_smem + dynamic_smem, opt_in)
    if smem > per_block:
        return _none(smem, "shared memory", f"{(smem_used - limits.smem_reserved_per_block) / 1024:g} KB "
                     f"of shared memory per block; {limits.label} allows "
                     f"{(per_block - limits.smem_reserved_per_block) / 1024:g} KB")
    by_smem = _blocks_by_smem(limits, smem)

    by = dict(zip(LIMITERS, (by_warps, by_regs, by_smem, limits.max_blocks_per_sm), strict=True))
    blocks = min(by.values())
    return Occupancy(blocks, blocks * warps, blocks * warps / limits.max_warps_per_sm,
                     tuple(name for name, n in by.items() if n == blocks), smem)


def _blocks_by_registers(limits: GpuLimits, regs_per_warp: int, warps: int) -> int:
    """Blocks per SM the register file allows: registers are split between the sub-partitions,
    each holding whole warps' allocations; a kernel with no registers is not limited by them."""
    if not regs_per_warp:
        return _UNLIMITED
    warps_per_partition = limits.regs_per_sm // limits.sub_partitions // regs_per_warp
    return warps_per_partition * limits.sub_partitions // warps


def _smem_per_block(limits: GpuLimits, requested: int, opt_in: bool) -> int:
    """The shared memory one block may have, the driver's reserve included: the opt-in maximum
    when the launcher opted in and the block needs more than the default."""
    needs_opt_in = requested > limits.smem_per_block_default
    return (limits.smem_per_block_optin if opt_in and needs_opt_in
            else limits.smem_per_block_default) + limits.smem_reserved_per_block


def _blocks_by_smem(limits: GpuLimits, smem: int) -> int:
    """Blocks per SM its shared memory holds; a block using none is not limited by it."""
    return limits.smem_per_sm // smem if smem else _UNLIMITED


def _none(smem: int, limiter: str, why: str) -> Occupancy:
    return Occupancy(0, 0, 0.0, (limiter,), smem, why)
