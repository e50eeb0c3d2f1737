"""Per-SM and per-block limits of the GPU architectures we build for.

Sources: NVIDIA's CUDA C++ Programming Guide, "Compute Capabilities" (technical specifications
per compute capability: resident warps and blocks per SM, registers, shared memory per SM and
per block, 1 KB of shared memory reserved per block since Ampere), and the allocation rules of
CUDA 13.0's `cuda_occupancy.h` (registers given to a warp in units of 256, an SM's register file
split over its 4 sub-partitions, shared memory allocated in units of 128 bytes, the maximum
resident blocks per SM per minor version). `tests/test_occupancy.py` checks the calculator built
on this table against that header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KB = 1024


@dataclass(frozen=True)
class GpuLimits:
    arch: str
    """`sm_89`: the SASS target (an `a`/`f` suffix names the same limits)."""
    gpus: str
    """The cards an engineer knows this arch by, most common first."""
    max_warps_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm: int
    """Bytes of shared memory per SM at the largest carveout (the default preference)."""
    smem_per_block_optin: int
    """The most a block may use after cudaFuncSetAttribute(MaxDynamicSharedMemorySize)."""
    smem_per_block_default: int = 48 * KB
    """Without that opt-in (static + dynamic)."""
    smem_reserved_per_block: int = 1 * KB
    smem_alloc_unit: int = 128
    regs_per_sm: int = 64 * KB
    regs_per_block: int = 64 * KB
    max_regs_per_thread: int = 255
    reg_alloc_unit: int = 256
    """Registers are given to a warp in chunks of this many (per warp, not per thread)."""
    sub_partitions: int = 4
    """The register file is split over the SM's schedulers; a warp lives in one of them."""
    max_threads_per_block: int = 1024
    warp_size: int = 32

    @property
    def gpu(self) -> str:
        """The best-known card of this arch: `L4`."""
        return self.gpus.split(",")[0].strip()

    @property
    def label(self) -> str:
        return f"{self.gpu} ({self.arch})"


_TABLE = (
    GpuLimits("sm_80", "A100, A30", 64, 32, 164 * KB, 163 * KB),
    GpuLimits("sm_86", "A10, A40, RTX A6000, RTX 3090", 48, 16, 100 * KB, 99 * KB),
    GpuLimits("sm_87", "Jetson AGX Orin", 48, 16, 164 * KB, 163 * KB),
    GpuLimits("sm_89", "L4, L40S, RTX 4090", 48, 24, 100 * KB, 99 * KB),
    GpuLimits("sm_90", "H100, H200, GH200", 64, 32, 228 * KB, 227 * KB),
    GpuLimits("sm_100", "B200, GB200", 64, 32, 228 * KB, 227 * KB),
    GpuLimits("sm_120", "RTX PRO 6000 Blackwell, RTX 5090", 48, 24, 100 * KB, 99 * KB),
)
LIMITS: dict[str, GpuLimits] = {limits.arch: limits for limits in _TABLE}

_ARCH = re.compile(r"^(?:sm_|compute_)?(\d+)\.?(\d)?[a-z]?$")


def arch_of(text: str) -> str | None:
    """`sm_90a`, `9.0a`, `9.0`, `90` or `compute_90` as `sm_90`; None if it names no arch."""
    m = _ARCH.match(text.strip().lower())
    if not m:
        return None
    major, minor = m.group(1), m.group(2)
    return f"sm_{major}{minor}" if minor is not None else f"sm_{major}"


def limits_for(arch: str) -> GpuLimits | None:
    """The limits of this arch (any spelling `arch_of` reads), None when the table lacks it."""
    name = arch_of(arch)
    return LIMITS.get(name) if name else None
