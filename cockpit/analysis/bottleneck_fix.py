"""The ONE fix to try first for a launch's bottleneck (bottleneck.py's verdict), first match wins:
 1. small grid or launch overhead: fuse launches (a tiny kernel), else launch more blocks
 2. shared-memory bank conflicts >= 10 % of wavefronts while shared memory is on the critical
    path (L1 leads a memory verdict, or warps stall on short_scoreboard / mio_throttle): pad
 3. memory: DRAM -> coalesce (< half of each sector used), vectorize (lg_throttle), else move
    fewer bytes; L1 / L2 -> larger tiles
 4. compute: by the hottest pipe: tensor -> overlap the non-MMA work; FMA/ALU with idle tensor
    cores -> use tensor cores; XU -> cheaper transcendentals; LSU -> vectorize
 5. occupancy: by the limiter: registers, shared memory, block size; achieved << theoretical ->
    even out the blocks
 6. latency / balanced: the fix for the dominant warp stall
"""

from __future__ import annotations

from cockpit.analysis.launch_reading import (
    Bottleneck,
    NcuThresholds,
    bank_conflict_ratio,
    fmt,
    hottest_pipe,
    memory_unit,
    occupancy_limiters,
    occupancy_limits,
)
from cockpit.analysis.ncu import KernelLaunch
from cockpit.analysis.ncu_metrics import (
    BYTES_PER_SECTOR,
    PIPES,
    REGISTERS,
    SHARED_MEM,
    STALL_FIXES,
    THEORETICAL,
)


def recommend(kind: Bottleneck, launch: KernelLaunch, t: NcuThresholds, duration: float | None,
               stalls: tuple[tuple[str, float], ...], matrix_math: bool | None = None) -> str:
    if kind in ("small-grid", "launch-overhead"):
        if kind == "launch-overhead" or (duration is not None and duration < t.launch_floor_ns):
            return ("fuse launches: merge this kernel into its producer or consumer (or batch the calls / "
                    "capture them in a CUDA graph) so the launch cost is paid once for more work")
        return ("launch more blocks: split the work finer (smaller tiles, split-K or split the sequence) "
                "so the grid fills every SM at least once")
    ratio = padding_first(kind, launch, t, stalls)
    if ratio is not None:
        return (f"pad shared memory against bank conflicts ({ratio:.0%} of shared wavefronts conflict): "
                "one extra element per row, or an XOR swizzle of the column index")
    if kind == "memory-bound":
        return _memory_fix(launch, memory_unit(launch), stalls)
    if kind == "compute-bound":
        return _compute_fix(launch, matrix_math)
    if kind == "occupancy":
        return _occupancy_fix(launch, t)
    if stalls:
        return STALL_FIXES.get(stalls[0][0], STALL_FIXES["misc"])
    return "profile with --section WarpStateStats to see why warps stall, then fix the top reason"


def padding_first(kind: Bottleneck, launch: KernelLaunch, t: NcuThresholds,
                   stalls: tuple[tuple[str, float], ...]) -> float | None:
    """The bank-conflict ratio when conflicts are common and shared memory is on the critical path."""
    ratio, unit = bank_conflict_ratio(launch), memory_unit(launch)
    on_path = (kind == "memory-bound" and unit is not None and unit[0] == "L1") or (
        bool(stalls) and stalls[0][0] in ("short_scoreboard", "mio_throttle"))
    return ratio if on_path and ratio is not None and ratio >= t.bank_conflicts else None


def _memory_fix(launch: KernelLaunch, unit: tuple[str, float] | None,
                stalls: tuple[tuple[str, float], ...]) -> str:
    if unit is not None and unit[0] == "DRAM":
        used = launch.value(BYTES_PER_SECTOR)
        if used is not None and 0 < used < 16:
            return (f"coalesce global loads: only {used:.0f} of 32 bytes of each fetched sector are used; "
                    "make consecutive threads read consecutive addresses")
        if stalls and stalls[0][0] == "lg_throttle":
            return STALL_FIXES["lg_throttle"]
        return (f"move fewer bytes: DRAM runs at {unit[1]:.0f} % of peak with whole sectors used, so "
                "only less traffic helps: fuse this kernel with its producer or consumer, or store a "
                "narrower type")
    if unit is not None and unit[0] == "L2":
        return ("larger tiles, visited in an order that reuses them while they sit in L2 (block "
                "swizzling): more math per byte crossing L2")
    return ("larger tiles: let each byte brought into shared memory / L1 feed more math (bigger tiles per "
            "block, fragments kept in registers across the loop) to cut L1 wavefronts")


def _compute_fix(launch: KernelLaunch, matrix_math: bool | None = None) -> str:
    pipe = hottest_pipe(launch)
    tensor = launch.value(PIPES[0][1])
    name = pipe[0] if pipe else ""
    if name in ("FMA", "ALU") and (tensor is None or tensor < 5):
        if matrix_math:
            return "use tensor cores (mma.sync / wgmma / WMMA) for the matrix math now on the FMA/ALU pipes"
        return (f"fewer instructions per element on the {name} pipe: the kernel does no matrix product "
                "for tensor cores" + ("" if matrix_math is False else " that the cockpit knows of (no "
                "FLOP and byte counts)") + ", so fold the scale and shift into one FMA, keep index math "
                "out of the loop, load 16 bytes per thread per access, and reduce in registers before "
                "shuffling")
    if name == "tensor":
        return ("keep the tensor pipe fed: overlap the non-MMA work (softmax, epilogue) with the next "
                "MMAs (ping-pong warp groups, async wgmma) instead of running them in turn")
    if name == "XU":
        return ("cheaper transcendentals: exp2f with log2(e) folded into the scale, a reciprocal "
                "multiply instead of each division")
    if name == "LSU":
        return STALL_FIXES["lg_throttle"]
    return "cut instructions on the hottest pipe (ncu's Compute Workload Analysis names it)"


def _resources_now(launch: KernelLaunch) -> tuple[str, str]:
    """' (now 128/thread)' and ' (now 48 KiB/block)': the registers and shared memory the launch
    uses, each empty when ncu did not say."""
    regs, smem = launch.value(REGISTERS), launch.value(SHARED_MEM)
    return (f" (now {fmt(regs)}/thread)" if regs else "",
            f" (now {smem / 1024:.0f} KiB/block)" if smem else "")


def _occupancy_fix(launch: KernelLaunch, t: NcuThresholds) -> str:
    theo = launch.value(THEORETICAL)
    if theo is None or theo >= t.occupancy_pct:
        return ("even out the blocks: launch more, smaller blocks so the last wave is full and no SM "
                "waits on a long block")
    limiters = occupancy_limiters(launch, t)
    limits = occupancy_limits(launch)
    blocks = int(limits[limiters[0]]) if limiters else 0
    threads = launch.block[0] * launch.block[1] * launch.block[2]
    regs_s, smem_s = _resources_now(launch)
    if "registers" in limiters and "shared memory" in limiters:
        return (f"reduce registers{regs_s} and shared memory{smem_s} together to fit {blocks + 1} blocks/SM: "
                "either alone leaves occupancy where it is")
    if "registers" in limiters:
        return (f"reduce registers{regs_s} to fit {blocks + 1} blocks/SM: __launch_bounds__({threads}, "
                f"{blocks + 1}) or fewer live values per thread")
    if "shared memory" in limiters:
        return (f"reduce shared memory{smem_s} to fit {blocks + 1} blocks/SM: fewer pipeline stages "
                "or smaller tiles")
    if "warps" in limiters:
        return f"pick a block size whose warps divide the SM's warp slots evenly ({threads} threads now)"
    return f"use bigger blocks: the per-SM block limit caps occupancy at {threads} threads per block"
