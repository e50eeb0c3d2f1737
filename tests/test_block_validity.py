"""A timed block is judged by the clocks it ran at: the H200's recorded bench (real NVML samples,
tests/fixtures/gpu/gates-blocks) had SW thermal and HW slowdown episodes between stretches at its
power cap; a block in an episode is dirty, a block at the cap alone is clean."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cockpit.analysis.block_validity import (
    DIP,
    SLOWDOWN_BITS,
    BlockRules,
    around,
    block_fault,
    reference_clock,
    unclean_line,
)
from cockpit.hardware.clock_events import THROTTLE_WORDS

H200 = Path(__file__).parent / "fixtures" / "gpu" / "gates-blocks" / "probe-bench.json.gz"


def recorded() -> tuple[float, list[dict[str, float]]]:
    data = json.loads(gzip.decompress(H200.read_bytes()))
    return float(data["started"]), data["gpu_samples"]


def test_the_slowdown_bits_are_the_ones_the_cockpit_shows() -> None:
    words = dict(THROTTLE_WORDS)
    assert all(words[bit] == word for bit, word in SLOWDOWN_BITS)


def test_a_block_in_a_sw_thermal_episode_is_dirty_and_one_at_the_power_cap_is_clean() -> None:
    t0, samples = recorded()
    rules = BlockRules()
    ref = reference_clock(samples, 1980)
    assert ref is not None and 1900 <= ref <= 1980  # the run's busy clock: near max
    # 76.66-77.2 s into the run: SW thermal slowdown (0x20) in the samples
    assert block_fault(around(samples, t0 + 76.70, t0 + 76.75), ref, rules) == "SW thermal slowdown"
    # 82.39 s: HW thermal + HW slowdown (0x4c)
    assert block_fault(around(samples, t0 + 82.40, t0 + 82.42), ref, rules) == "HW slowdown"
    # 40 s in: the power cap alone, busy at its capped clock
    assert block_fault(around(samples, t0 + 40.0, t0 + 40.05), ref, rules) is None


def test_a_tolerated_slowdown_leaves_the_block_clean_unless_the_clock_dipped() -> None:
    t0, samples = recorded()
    rules = BlockRules(tolerated=frozenset({"SW thermal slowdown"}))
    near = around(samples, t0 + 76.70, t0 + 76.75)
    assert block_fault(near, 1980, rules) is None  # 1920-1965 MHz: within 85 % of 1980
    assert block_fault(near, 1980, BlockRules(tolerated=rules.tolerated, clock_fraction=0.99)) == DIP


def test_a_dip_the_power_cap_alone_explains_is_the_implementations_own_clock() -> None:
    _, samples = recorded()
    capped = [s for s in samples if s["throttle"] == 0x4 and s["sm_clock"] < 1700]
    assert capped, "the recording has capped samples under 1700 MHz"
    s = capped[0]
    assert block_fault(around(samples, s["t"] - 0.001, s["t"] + 0.001, reach_s=0.0), 1980, BlockRules()) is None
    unexplained = [{**s, "throttle": 0}]  # the same clock with no reason held: a dip
    assert block_fault(unexplained, 1980, BlockRules()) == DIP


def test_a_short_block_is_judged_by_its_neighbours_and_an_unwatched_one_by_nothing() -> None:
    t0, samples = recorded()
    near = around(samples, t0 + 76.700, t0 + 76.701)  # 1 ms: no sample inside, one each side
    assert len(near) == 2
    assert block_fault([], 1980, BlockRules()) is None


def test_the_recovery_waits_double_up_to_a_cap_and_the_reference_waits_for_enough_samples() -> None:
    rules = BlockRules()
    assert [rules.wait_s(k) for k in range(7)] == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 1.6])
    assert reference_clock([{"t": 0, "sm_clock": 1500, "throttle": 0}] * 5, 1980) == 1980
    assert unclean_line({"SW thermal slowdown": 7, DIP: 1}, 8) == "SW thermal slowdown in 7 of 8 tries"
