"""The ncu metrics a bottleneck verdict reads, by what they measure, and the fix each warp stall
reason points to."""

from __future__ import annotations

import re

COMPUTE = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_UNITS = (("DRAM", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
                ("L1", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
                ("L2", "lts__throughput.avg.pct_of_peak_sustained_elapsed"))
PIPES = (("tensor", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
         ("FMA", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed"),
         ("ALU", "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_elapsed"),
         ("XU", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_elapsed"),
         ("LSU", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed"))
WAVES = "launch__waves_per_multiprocessor"
THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"
ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
LIMITS = (("registers", "launch__occupancy_limit_registers"),
          ("shared memory", "launch__occupancy_limit_shared_mem"),
          ("warps", "launch__occupancy_limit_warps"),
          ("blocks", "launch__occupancy_limit_blocks"))
DURATION = "gpu__time_duration.sum"
CONFLICTS = ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
WAVEFRONTS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
              "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
BYTES_PER_SECTOR = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
REGISTERS, SHARED_MEM = "launch__registers_per_thread", "launch__shared_mem_per_block"
STALL_METRIC = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
_STALL = re.compile(r"^smsp__average_warps_issue_stalled_(.+)_per_issue_active(?:_v2)?\.ratio$")

STALL_FIXES = {
    "long_scoreboard": "prefetch the next tile while computing this one (cp.async double-buffering) "
                       "and coalesce the global loads warps wait on",
    "short_scoreboard": "cut shared-memory round trips: load fragments once with ldmatrix.x4 / 128-bit "
                        "accesses and reuse them across more MMAs",
    "mio_throttle": "issue fewer, wider shared-memory instructions (ldmatrix.x4, 128-bit) so the MIO "
                    "queue stops filling",
    "lg_throttle": "vectorize global accesses to 128 bits (float4/uint4): fewer instructions for the "
                   "same bytes",
    "barrier": "fewer __syncthreads: double-buffer shared tiles so one barrier per tile suffices",
    "membar": "fewer memory fences: batch __threadfence calls or narrow their scope",
    "wait": "more independent work between dependent instructions (unroll, interleave two tiles) "
            "so each result is not needed by the very next instruction",
    "math_pipe_throttle": "spread the math over more pipes: move matrix math to tensor cores, "
                          "transcendentals off the saturated pipe",
    "tex_throttle": "fewer texture/read-only-path loads per instruction: vectorize them",
    "drain": "fewer stores at the end of the kernel: write results once, coalesced and vectorized",
    "dispatch_stall": "simplify the instruction mix the dispatcher stalls on (register bank "
                      "conflicts, divergent predicates): check the SASS of the hot loop",
    "no_instruction": "smaller hot loop code (less unrolling) so it stays in the instruction cache",
    "imc_miss": "keep kernel parameters and constants few and uniform across the warp",
    "branch_resolving": "make branches warp-uniform so fewer branch targets need resolving",
    "not_selected": "issue slots are already contended: cut instructions rather than add warps",
    "sleeping": "shorten __nanosleep / backoff waits",
    "gmma": "overlap the wgmma wait with softmax or epilogue work of another warp group",
    "misc": "inspect ncu's Source page for the stalling instructions",
}
