"""The bottleneck verdicts on the eight real H200 recordings (ncu 2025.3.1, clocks at base), and
the branches no recording reaches, each on a real row with the named metric(s) changed."""

from __future__ import annotations

import pytest

from cockpit.analysis.bottleneck import (
    NcuThresholds,
    bank_conflict_ratio,
    hottest_pipe,
    memory_unit,
    occupancy_limiters,
    occupancy_limits,
    top_stalls,
    verdict,
)
from tests.test_ncu_parse import edited, launch

SOL = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"


# What each recording says ------------------------------------------------------------------------


def test_a_512_mb_copy_is_memory_bound_on_dram() -> None:
    """copy.csv: memory SOL 86.95 % is exactly DRAM's 86.95 %; L2 (lts__throughput 92.88 %) is
    named as near its peak too. Sectors are fully used (32 of 32 bytes), so the fix is fewer bytes."""
    k = launch("copy")
    v = verdict(k)
    assert (v.bottleneck, v.confidence) == ("memory-bound", "high")
    assert memory_unit(k) == ("DRAM", 86.95)
    assert v.headline == "memory 87.0 % vs compute 8.4 % of peak, DRAM leads at 87.0 %"
    assert "L2 is near its peak too (92.9 %)" in v.notes
    assert v.recommendation.startswith("move fewer bytes")
    assert k.value("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio") == 32
    assert top_stalls(k)[0] == ("long_scoreboard", 142.51)
    assert occupancy_limiters(k) == ()  # 100 % theoretical: nothing to name
    assert str(v.evidence["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"]) == "86.95 %"


def test_an_add_over_32_elements_is_a_small_grid_that_should_be_fused() -> None:
    """tiny.csv: one block of 128 threads, 0.00 waves on 132 SMs, 2.7 µs. Its achieved occupancy
    (4.35 % of a theoretical 100 %) follows from the grid and is not reported on its own."""
    k = launch("tiny")
    v = verdict(k)
    assert (v.bottleneck, v.confidence) == ("small-grid", "high")
    assert v.headline.startswith("1 block(s) make 0.00 waves on 132 SMs")
    assert v.recommendation.startswith("fuse launches")
    assert "launch overhead matters too: the kernel runs 2.7 µs, under ~10.0 µs" in v.notes
    assert not any("occupancy" in note for note in v.notes)


def test_our_d64_kernel_leans_on_l1_and_is_register_limited() -> None:
    """ours-d64: memory 62.10 % (set by L1: l1tex 62.10 % elapsed) vs compute 45.22 %: between 60
    and 80 % with a 16.9-point lead, so memory-leaning at medium confidence. Registers (127/thread)
    allow 2 blocks/SM against 4 for shared memory, 8 for warps, 32 for blocks: 25 % theoretical,
    24.34 % achieved. Bank conflicts are 0.02 % of shared wavefronts: no padding."""
    k = launch("ours-d64")
    v = verdict(k)
    assert (v.bottleneck, v.confidence) == ("memory-bound", "medium")
    assert "leaning, not at the roof" in v.confidence_reason
    assert memory_unit(k) == ("L1", 64.01)
    assert occupancy_limits(k) == {"registers": 2, "shared memory": 4, "warps": 8, "blocks": 32}
    assert occupancy_limiters(k) == ("registers",)
    assert any(n.startswith("theoretical occupancy 25.0 % of max warps, limited by registers") for n in v.notes)
    assert not any(n.startswith("achieved occupancy") for n in v.notes)
    assert top_stalls(k) == (("wait", 1.75), ("short_scoreboard", 1.38), ("not_selected", 1.06))
    assert bank_conflict_ratio(k) == pytest.approx(25_945 / 135_030_105)
    assert v.recommendation.startswith("larger tiles")


def test_our_d128_kernel_is_limited_by_registers_and_shared_memory_together() -> None:
    k = launch("ours-d128")
    v = verdict(k)
    assert v.bottleneck == "memory-bound" and memory_unit(k) == ("L1", 62.25)
    assert occupancy_limiters(k) == ("registers", "shared memory")  # 1 block/SM each
    assert [r for r, _ in top_stalls(k)] == ["wait", "short_scoreboard", "mio_throttle"]
    assert v.recommendation.startswith("larger tiles")


def test_our_kernel_moves_far_more_shared_memory_than_flash_for_the_same_work() -> None:
    """The data behind "larger tiles": at D=64 ours issues 1.78x FLASH's shared-memory wavefronts and
    takes 1.11x its time."""
    ld = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    ours, flash = launch("ours-d64"), launch("flash-d64")
    assert (ours.value(ld) or 0) / (flash.value(ld) or 1) == pytest.approx(1.78, abs=0.01)
    assert (ours.duration_ns or 0) / (flash.duration_ns or 1) == pytest.approx(1.11, abs=0.01)


@pytest.mark.parametrize(("name", "compute", "memory"), [("flash-d64", 51.31, 41.89),
                                                          ("flash-d128", 54.93, 53.50)])
def test_flash_runs_below_60_percent_with_two_warps_per_scheduler(name: str, compute: float,
                                                                  memory: float) -> None:
    """SDPA FLASH: both SOLs under 60 % over 7.76 waves; 255 registers and 48–64 KiB shared memory
    each allow 2 blocks of 4 warps (12.5 % theoretical, ~12.25 % achieved); top stall `wait`."""
    k = launch(name)
    v = verdict(k)
    assert (k.value(SOL), k.value(MEM), k.value("launch__waves_per_multiprocessor")) == (compute, memory, 7.76)
    assert (v.bottleneck, v.confidence) == ("occupancy", "medium")
    assert occupancy_limiters(k) == ("registers", "shared memory")
    assert top_stalls(k)[0][0] == "wait"
    assert v.recommendation.startswith("reduce registers (now 255/thread) and shared memory")
    assert "to fit 3 blocks/SM" in v.recommendation


def test_cudnn_d64_is_occupancy_limited_and_its_warps_do_not_stay_resident() -> None:
    """cuDNN D=64: both SOLs under 60 %; 1 block/SM (registers and shared memory), 18.75 %
    theoretical, and achieved 14.07 % is 75 % of that (< 80 %): both findings are reported. Its
    shared-memory stores conflict (42 % of wavefronts), but it stalls on barriers, not shared
    memory, so padding is a note, not the fix."""
    k = launch("cudnn-d64")
    v = verdict(k)
    assert v.bottleneck == "occupancy"
    assert "theoretical occupancy 18.8 %" in v.headline
    assert any(n.startswith("achieved occupancy 14.1 % is 75% of theoretical 18.8 %") for n in v.notes)
    assert bank_conflict_ratio(k) == pytest.approx(0.42, abs=0.005)
    assert "shared-memory bank conflicts: 42% of shared-memory wavefronts" in v.notes
    assert top_stalls(k)[0][0] in ("barrier", "wait")  # 0.75 each
    assert not v.recommendation.startswith("pad")


def test_cudnn_d128_leans_compute_on_the_tensor_pipe() -> None:
    """cuDNN D=128: compute 73.18 % (all of it the tensor pipe, 73.18 %) vs memory 47.59 %:
    compute-leaning at medium confidence; top stall `barrier`."""
    k = launch("cudnn-d128")
    v = verdict(k)
    assert (v.bottleneck, v.confidence) == ("compute-bound", "medium")
    assert hottest_pipe(k) == ("tensor", 73.18)
    assert v.recommendation.startswith("keep the tensor pipe fed")
    assert top_stalls(k)[0] == ("barrier", 1.37)
    assert any(n.startswith("achieved occupancy 14.1 %") for n in v.notes)


def test_flash_against_cudnn() -> None:
    """cuDNN's persistent grid is exactly one wave (132 blocks on 132 SMs) where FLASH launches 7.76
    waves; cuDNN takes 63 % (D=64) and 51 % (D=128) of FLASH's time, at higher compute SOL."""
    for d, share in (("d64", 0.63), ("d128", 0.51)):
        flash, cudnn = launch(f"flash-{d}"), launch(f"cudnn-{d}")
        assert cudnn.value("launch__waves_per_multiprocessor") == 1 and cudnn.grid == (132, 1, 1)
        assert (cudnn.duration_ns or 0) / (flash.duration_ns or 1) == pytest.approx(share, abs=0.01)
        assert (cudnn.value(SOL) or 0) >= (flash.value(SOL) or 0) - 0.2


@pytest.mark.parametrize("name", ["ours-d64", "ours-d128", "flash-d64", "flash-d128", "cudnn-d64",
                                  "cudnn-d128", "copy", "tiny", "ours-d64-stdout.csv"])
def test_every_verdict_names_its_evidence_and_one_fix(name: str) -> None:
    v = verdict(launch(name))
    assert v.headline and not v.headline.startswith(v.bottleneck) and "\n" not in v.headline
    assert SOL in v.evidence and MEM in v.evidence and "gpu__time_duration.sum" in v.evidence
    assert v.recommendation and "\n" not in v.recommendation
    assert v.confidence in ("high", "medium", "low") and v.confidence_reason


def test_the_stdout_recording_without_warp_states_says_what_is_missing() -> None:
    v = verdict(launch("ours-d64-stdout.csv"))
    assert v.bottleneck == "memory-bound"
    assert "no warp-stall metrics in this report (add --section WarpStateStats)" in v.notes


# Branches no recording reaches: a real row with the named metric(s) changed -----------------------


def test_compute_at_the_roof_is_compute_bound_with_high_confidence() -> None:
    """cudnn-d128 with sm__throughput raised from 73.18 to 85 (no recording reaches 80 %)."""
    v = verdict(edited("cudnn-d128", set_={SOL: "85"}))
    assert (v.bottleneck, v.confidence) == ("compute-bound", "high")
    assert v.recommendation.startswith("keep the tensor pipe fed")


def test_fma_bound_matrix_math_without_tensor_cores_is_told_to_use_them_and_a_norm_never_is() -> None:
    """copy.csv (tensor pipe 0 %) with sm__throughput and the FMA pipe both set to 90 %: a matrix
    product (by its FLOPs per byte) is told to use tensor cores; a layer norm (1.75 FLOP/B: the
    held-out Triton tutorial was told to on an H100) or a kernel of unknown counts never is."""
    fma_bound = edited("copy", set_={SOL: "90", MEM: "20",
                                     "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed": "90"})
    v = verdict(fma_bound, matrix_math=True)
    assert v.bottleneck == "compute-bound"
    assert v.recommendation.startswith("use tensor cores")
    norm = verdict(fma_bound, matrix_math=False)
    assert norm.recommendation.startswith("fewer instructions per element on the FMA pipe: the kernel does "
                                          "no matrix product for tensor cores, so fold")
    assert "tensor cores (mma" not in verdict(fma_bound).recommendation


def test_bank_conflicts_on_an_l1_bound_kernel_are_padded_first() -> None:
    """ours-d64 (L1 leads the memory SOL) with shared-load bank conflicts raised from 16,639 to
    40,000,000 (30 % of its 135 M shared wavefronts)."""
    k = edited("ours-d64", set_={"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "40,000,000"})
    v = verdict(k)
    assert bank_conflict_ratio(k) == pytest.approx(0.296, abs=0.001)
    assert v.recommendation.startswith("pad shared memory against bank conflicts (30% of shared")
    assert not any("bank conflicts" in note for note in v.notes)  # the fix, not a side finding


def test_a_small_grid_that_runs_long_asks_for_more_blocks() -> None:
    """tiny.csv with gpu__time_duration.sum raised from 2,656 to 50,000 ns: still under a wave, but
    long enough that splitting the work finer pays, not fusing."""
    v = verdict(edited("tiny", set_={"gpu__time_duration.sum": "50,000"}))
    assert v.bottleneck == "small-grid"
    assert v.recommendation.startswith("launch more blocks")
    assert not any("launch overhead" in note for note in v.notes)


def test_latency_with_full_occupancy_follows_the_top_stall() -> None:
    """copy.csv with its memory SOL lowered from 86.95 to 40: 100 % theoretical, 85 % achieved, so
    not occupancy; warps wait on global memory (long_scoreboard 142.51)."""
    v = verdict(edited("copy", set_={MEM: "40"}))
    assert v.bottleneck == "latency" and v.confidence == "medium"
    assert "warps stall most on long_scoreboard (142.51 cycles/issue)" in v.headline
    assert v.recommendation.startswith("prefetch the next tile")


def test_warps_that_do_not_stay_resident_ask_for_even_blocks() -> None:
    """copy.csv with memory SOL 40 and achieved occupancy 40 % (of a theoretical 100 %)."""
    v = verdict(edited("copy", set_={MEM: "40", "sm__warps_active.avg.pct_of_peak_sustained_active": "40"}))
    assert v.bottleneck == "occupancy"
    assert v.headline.endswith("achieved occupancy 40.0 % is 40% of theoretical 100.0 %: warps are not "
                               "resident all the time (uneven blocks, a partial last wave, or warps that "
                               "exit early)")
    assert v.recommendation.startswith("even out the blocks")


def test_compute_and_memory_within_ten_points_is_balanced() -> None:
    """ours-d64 with sm__throughput raised from 45.22 to 58 (memory 62.10): the fix follows the top
    stall, `wait`."""
    v = verdict(edited("ours-d64", set_={SOL: "58"}))
    assert v.bottleneck == "balanced"
    assert v.recommendation.startswith("more independent work between dependent instructions")


def test_a_kernel_far_shorter_than_the_benchmarked_call_is_launch_overhead() -> None:
    """The real ours-d64 row (1.322 ms at base clocks) against a benchmark of 3.0 ms per call."""
    k = launch("ours-d64")
    v = verdict(k, bench_ms=3.0)
    assert (v.bottleneck, v.confidence) == ("launch-overhead", "high")
    assert "the kernel runs 1.322 ms of the 3.000 ms the benchmark measures per call" in v.headline
    assert v.recommendation.startswith("fuse launches")
    assert v.evidence["bench_ms"].value == 3.0
    assert verdict(k, bench_ms=1.5).bottleneck == "memory-bound"


def test_a_kernel_under_ten_microseconds_is_launch_overhead() -> None:
    """copy.csv with gpu__time_duration.sum set to 8,000 ns."""
    v = verdict(edited("copy", set_={"gpu__time_duration.sum": "8,000"}))
    assert (v.bottleneck, v.confidence) == ("launch-overhead", "medium")
    assert "8.0 µs" in v.headline


def test_a_single_resource_limiter_gets_its_own_fix() -> None:
    """ours-d64 in the latency zone (memory SOL set to 50): registers alone limit it to 2 blocks/SM.
    Then the same with the warp limit set to 1 block/SM."""
    v = verdict(edited("ours-d64", set_={MEM: "50"}))
    assert v.bottleneck == "occupancy"
    assert v.recommendation.startswith("reduce registers (now 127/thread) to fit 3 blocks/SM: "
                                       "__launch_bounds__(256, 3)")
    k = edited("ours-d64", set_={MEM: "50", "launch__occupancy_limit_warps": "1"})
    assert occupancy_limiters(k) == ("warps",)
    assert verdict(k).recommendation.startswith("pick a block size")


def test_without_speed_of_light_metrics_the_verdict_is_low_confidence() -> None:
    """flash-d64 with both compute-SOL columns dropped."""
    k = edited("flash-d64", drop=[SOL, "sm__inst_executed.avg.pct_of_peak_sustained_elapsed"])
    v = verdict(k)
    assert v.confidence == "low" and "no Speed Of Light metrics" in v.confidence_reason


def test_thresholds_are_configurable() -> None:
    k = launch("ours-d64")
    assert verdict(k, NcuThresholds(bound_pct=60)).confidence == "high"
    assert occupancy_limiters(k, NcuThresholds(occupancy_pct=20)) == ()
    assert not any("theoretical" in n for n in verdict(k, NcuThresholds(occupancy_pct=20)).notes)
    assert verdict(launch("cudnn-d64"), NcuThresholds(bank_conflicts=0.5)).notes == verdict(
        launch("cudnn-d64")).notes[:-1]
