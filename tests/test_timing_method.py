"""How the bench times a kernel: batches for short calls, per-call events for long ones, a stop
rule on noise and intervals from order statistics. Samples built in these tests are synthetic and
say so; the recorded ones are read from the H100 bench recordings already in tests/fixtures/gpu."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from cockpit.analysis.timing_method import (
    LAUNCH_BOUND_MS,
    MAX_INPUT_SETS,
    beyond_noise,
    enough,
    median_interval,
    noise,
    plan_config,
    ratio_interval,
)

MB = 1_000_000
H100_L2 = 50 * MB
FREE_80GB = 79 * 1024**3
RECORDED_H100 = [Path(__file__).parent / "fixtures/gpu/h100/gate-bench.json",
                 Path(__file__).parent / "fixtures/gpu/comparable/gate-bench.json"]


def test_a_10us_kernel_is_timed_in_batches_over_enough_sets_to_beat_a_50mb_l2() -> None:
    # B4 H16 S32 D64 fp16: q, k, v of 4·16·32·64 halves each, 786 KB a set
    plan = plan_config(0.010, H100_L2, 786_432, FREE_80GB)
    assert plan.method == "batch"
    assert plan.rotation_bytes > 2 * H100_L2
    assert plan.input_sets == 128
    assert plan.calls_per_batch * 0.010 >= 1.0  # a batch spans ≥ 1 ms of GPU time
    assert plan.l2_note is None
    assert plan.why.startswith("batch: 10.0 µs < 50 µs, 100 calls per batch")


def test_a_2ms_kernel_is_timed_per_call_with_the_flush_doing_the_cold_l2() -> None:
    plan = plan_config(2.0, H100_L2, 64 * MB, FREE_80GB)
    assert (plan.method, plan.calls_per_batch, plan.input_sets) == ("per-call", 1, 1)
    assert plan.why.startswith("per-call")


def test_the_rotation_counts_what_a_set_reads_and_memory_what_it_holds() -> None:
    """A softmax at M=4096 N=512 fp16 reads 4 MB a set and writes 4 MB into one pool for every
    set: 2x L2 of reads needs 26 sets, not the 13 that counting the output as rotated gave (its
    inputs then came back after 1x L2). What a set holds meanwhile, its output buffer too, is what
    free memory is divided by."""
    plan = plan_config(0.006, H100_L2, 4 * MB, FREE_80GB, held_per_set=8 * MB)
    assert plan.input_sets == 26 and plan.rotation_bytes == 26 * 4 * MB > 2 * H100_L2
    tight = plan_config(0.006, H100_L2, 4 * MB, free_bytes=160 * MB, held_per_set=8 * MB)
    assert tight.input_sets == 10 and tight.l2_note is not None and "free memory" in tight.l2_note


def test_the_batch_size_is_bounded_for_calls_faster_than_their_launch() -> None:
    assert plan_config(0.0002, H100_L2, 4 * MB, FREE_80GB).calls_per_batch == 2000


def test_a_rotation_that_cannot_exceed_l2_says_so() -> None:
    tight = plan_config(0.02, H100_L2, 30 * MB, free_bytes=100 * MB)  # one set fits in half of it
    assert (tight.input_sets, tight.rotation_bytes) == (1, 30 * MB)
    assert tight.l2_note is not None and "free memory" in tight.l2_note
    assert "100 MB" in tight.l2_note  # 2x L2
    tiny = plan_config(0.007, H100_L2, 24_576, FREE_80GB)  # S1: 24 KB a set would need 4070 sets
    assert tiny.input_sets == MAX_INPUT_SETS
    assert tiny.l2_note is not None and "1024-set cap" in tiny.l2_note


def test_recorded_h100_benches_split_into_two_modes_only_below_the_per_call_threshold() -> None:
    """The recordings timed every cell per call with a flush: the cells whose p80 ran 1.5x past
    their p20 are all ones the plan now batches, and every cell it keeps per call was tight."""
    wide = tight = 0
    for path in RECORDED_H100:
        for row in json.loads(path.read_text())["result"]["rows"]:
            for cell in row["impl"].values():
                spread = cell["p80_ms"] / cell["p20_ms"]
                method = plan_config(cell["median_ms"], H100_L2, MB, FREE_80GB).method
                if spread > 1.5:
                    wide += 1
                    assert method == "batch", (row["config"], cell)
                if method == "per-call":
                    tight += 1
                    assert spread < 1.25, (row["config"], cell)
    assert wide >= 20 and tight >= 150


def _bimodal_per_call_us(n: int, seed: int = 1) -> list[float]:
    """Synthetic: per-call times of one ~10 µs kernel, 70 % at 15.5 µs, 30 % at 25–34 µs (the two
    modes seen on an H100), in ms."""
    rng = random.Random(seed)
    return [(15.5 + rng.gauss(0, 0.2) if rng.random() < 0.7 else rng.uniform(25, 34)) / 1e3
            for _ in range(n)]


def _batch_means_us(n: int, seed: int = 2) -> list[float]:
    """Synthetic: batch means of the same kernel, 10.0 µs with 0.2 % jitter, in ms."""
    rng = random.Random(seed)
    return [10.0 * (1 + rng.gauss(0, 0.002)) / 1e3 for _ in range(n)]


def test_bimodal_per_call_samples_are_noisy_and_batch_means_are_tight() -> None:
    per_call, batches = _bimodal_per_call_us(1000), _batch_means_us(30)
    assert noise(per_call) > 0.2
    assert noise(batches) < 0.005
    assert noise([0.01]) == float("inf")


def test_the_median_interval_is_wide_on_two_modes_and_tight_on_batch_means() -> None:
    m, lo, hi = median_interval(_bimodal_per_call_us(200))
    assert lo <= m <= hi
    b, b_lo, b_hi = median_interval(_batch_means_us(30))
    assert b_lo <= b <= b_hi
    assert (b_hi - b_lo) / b < 0.005
    assert (hi - lo) / m > (b_hi - b_lo) / b


def test_the_median_interval_uses_binomial_order_statistics() -> None:
    ten = [float(x) for x in range(1, 11)]
    assert median_interval(ten) == (5.5, 2.0, 9.0)  # x(2)..x(9): 97.9 % coverage at n = 10
    assert median_interval(ten, confidence=0.5)[1:] == (4.0, 7.0)
    five = [3.0, 1.0, 2.0, 5.0, 4.0]
    assert median_interval(five) == (3.0, 1.0, 5.0)  # too few for 95 %: the full range
    assert median_interval([7.0]) == (7.0, 7.0, 7.0)
    with pytest.raises(ValueError):
        median_interval([])


def test_a_speedup_interval_is_the_conservative_ratio_of_the_two() -> None:
    s = ratio_interval((0.012, 0.011, 0.013), (0.010, 0.0095, 0.0105))
    assert s.value == pytest.approx(1.2)
    assert (s.lo, s.hi) == pytest.approx((0.011 / 0.0105, 0.013 / 0.0095))


def test_stop_at_the_noise_target_not_before_min_samples() -> None:
    batches = _batch_means_us(30)
    assert enough(batches[:5], elapsed_s=0.01) == (False, "5 of 10 samples")
    stop, why = enough(batches, elapsed_s=0.05)
    assert stop and why.startswith("noise 0.") and why.endswith("≤ 0.50 %")


def test_spread_that_never_settles_stops_once_the_median_is_pinned() -> None:
    per_call = _bimodal_per_call_us(500)
    assert noise(per_call) > 0.005  # stdrel alone would run it to the cap
    stop, why = enough(per_call, elapsed_s=1.0)
    assert stop and why.startswith("median ±") and "500 samples" in why


def test_a_median_still_wide_at_the_cap_gets_the_extra_time_then_stops() -> None:
    wide = [1.0, 1.3] * 8  # the median sits between two modes: its interval is ±13 %
    assert enough(wide, elapsed_s=1.0) == (False, "noise 13.47 % > 0.50 %")
    stop, why = enough(wide, elapsed_s=2.1, extra_s=1.5)
    assert not stop and why.startswith("median ±") and "at the cap: more samples" in why
    stop, why = enough(wide, elapsed_s=3.6, extra_s=1.5)
    assert stop and why.startswith("time cap 3.5 s reached")
    stop, why = enough(wide, elapsed_s=2.0)  # no extra time given: the cap is the cap
    assert stop and why.startswith("time cap 2.0 s reached at noise") and "16 samples" in why


def test_a_change_counts_only_when_the_intervals_do_not_overlap() -> None:
    before = (1.05, 1.03, 1.07)
    assert not beyond_noise(before, (1.06, 1.04, 1.08))  # overlap: noise
    assert not beyond_noise(before, (1.01, 0.99, 1.03))  # touching at 1.03: still noise
    assert beyond_noise(before, (1.00, 0.98, 1.02))  # slower beyond the noise
    assert beyond_noise(before, (1.10, 1.08, 1.12))  # faster beyond the noise
    # 4 % down yet wide intervals: a fixed 3 % threshold would have called it a regression
    assert not beyond_noise((1.05, 1.00, 1.10), (1.01, 0.95, 1.06))


def test_the_plan_threshold_is_50us() -> None:
    assert LAUNCH_BOUND_MS == 0.05
    assert plan_config(0.0499, H100_L2, MB, FREE_80GB).method == "batch"
    assert plan_config(0.05, H100_L2, MB, FREE_80GB).method == "per-call"


def test_an_interval_never_claims_more_than_the_noise_target() -> None:
    """Synthetic: a median pinned to 0.01 % by many samples still reads ±0.5 %, the resolution the
    bench claims (two H100 runs of one binary moved a per-call config by 0.45 %)."""
    from cockpit.analysis.timing_method import NOISE_TARGET, Interval, with_resolution

    narrow = with_resolution(Interval(1.0, 0.9999, 1.0001))
    assert narrow.lo == pytest.approx(1 - NOISE_TARGET) and narrow.hi == pytest.approx(1 + NOISE_TARGET)
    wide = with_resolution(Interval(1.0, 0.9, 1.2))
    assert (wide.lo, wide.hi) == (0.9, 1.2)
