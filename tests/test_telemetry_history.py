"""Ring buffers of the last N samples per GPU (sparklines) and the phase summary (journal)."""

from __future__ import annotations

import json
import math
from itertools import pairwise
from pathlib import Path

import pytest

from cockpit.telemetry.history import History
from cockpit.telemetry.recording import read_recording
from cockpit.telemetry.sample import GpuSample, Snapshot

T0 = 1_795_000_000.0
RECORDINGS = Path(__file__).parent / "fixtures" / "telemetry"


def snap(t: float, *samples: GpuSample) -> Snapshot:
    return Snapshot(t, samples)


def sample(t: float, index: int = 0, util: int | None = 50, power: float | None = 300.0,
           temp: int | None = 50, clock: int | None = 1980, mask: int | None = 0) -> GpuSample:
    return GpuSample(index, t, util_gpu=util, memory_used_mib=1024, power_w=power, temp_c=temp,
                     sm_clock_mhz=clock, throttle_mask=mask)


def test_the_default_ring_holds_fifteen_minutes_at_one_hertz() -> None:
    history = History()
    for i in range(1000):
        history.append(snap(T0 + i, sample(T0 + i, util=i % 100)))
    ring = history.gpu(0)
    assert ring is not None and ring.capacity == 900 and len(ring) == 900
    t = history.values(0, "t")
    assert t[0] == T0 + 100 and t[-1] == T0 + 999 and all(b - a == 1 for a, b in pairwise(t))


def test_values_after_wrap_around_come_oldest_first() -> None:
    history = History(capacity=5)
    for i in range(7):
        history.append(snap(T0 + i, sample(T0 + i, util=i)))
    assert history.values(0, "util_gpu").tolist() == [2, 3, 4, 5, 6]
    assert history.values(0, "util_gpu", last_n=3).tolist() == [4, 5, 6]
    assert history.values(0, "util_gpu", last_n=50).tolist() == [2, 3, 4, 5, 6]
    assert history.values(0, "util_gpu", last_n=0).tolist() == []


def test_before_the_ring_fills_it_returns_only_what_it_holds() -> None:
    history = History(capacity=10)
    for i in range(3):
        history.append(snap(T0 + i, sample(T0 + i, util=i)))
    assert history.values(0, "util_gpu", last_n=60).tolist() == [0, 1, 2]
    assert history.values(7, "util_gpu").tolist() == []


def test_missing_readings_are_gaps_not_zeros() -> None:
    history = History()
    history.append(snap(T0, sample(T0, power=None, mask=None)))
    assert math.isnan(history.values(0, "power_w")[0])
    assert history.values(0, "throttle_mask").tolist() == [-1]


def test_values_is_a_copy_the_caller_may_keep() -> None:
    history = History(capacity=3)
    history.append(snap(T0, sample(T0, util=1)))
    kept = history.values(0, "util_gpu")
    history.append(snap(T0 + 1, sample(T0 + 1, util=2)))
    assert kept.tolist() == [1]


def test_each_gpu_gets_its_own_ring_and_a_snapshot_without_nvml_adds_nothing() -> None:
    history = History()
    history.append(snap(T0, sample(T0, 0), sample(T0, 1)))
    history.append(Snapshot(T0 + 1, available=False, reason="no NVML"))
    assert history.indices == (0, 1) and len(history.gpu(1) or ()) == 1


def test_a_phase_summary_gives_means_maxima_and_seconds_throttled_by_reason() -> None:
    history = History()
    # 10 s idle, then 20 s of load whose last 8 s are power capped, then idle again.
    for i in range(40):
        t = T0 + i
        if 10 <= i < 30:
            history.append(snap(t, sample(t, util=100, power=690.0 if i >= 22 else 600.0, temp=60 + i // 10,
                                          clock=1755 if i >= 22 else 1980, mask=0x4 if i >= 22 else 0)))
        else:
            history.append(snap(t, sample(t, util=0, power=80.0, temp=35, clock=345, mask=0x1)))
    summary = history.phase_summary(T0 + 10, T0 + 29)
    assert summary["t0"] == T0 + 10 and summary["t1"] == T0 + 29
    gpu = summary["gpus"][0]
    assert gpu["samples"] == 20 and gpu["util_mean"] == 100.0 and gpu["util_max"] == 100.0
    assert gpu["power_max_w"] == 690.0 and gpu["power_mean_w"] == pytest.approx((12 * 600 + 8 * 690) / 20, abs=0.1)
    assert gpu["temp_max_c"] == 62 and gpu["sm_clock_min_mhz"] == 1755 and gpu["memory_max_mib"] == 1024
    assert gpu["throttled_s"] == {"power cap": 7.0}  # 22..29: the last sample's state ends at t1


def test_a_phase_summary_counts_the_reason_that_held_when_the_phase_started() -> None:
    history = History()
    history.append(snap(T0, sample(T0, mask=0x4)))
    history.append(snap(T0 + 2, sample(T0 + 2, mask=0)))
    gpu = history.phase_summary(T0 + 0.5, T0 + 2)["gpus"][0]
    assert gpu["samples"] == 1 and gpu["throttled_s"] == {"power cap": 1.5}


def test_an_empty_phase_summarizes_to_nones_that_journal_as_null() -> None:
    history = History()
    history.append(snap(T0, sample(T0)))
    gpu = history.phase_summary(T0 + 100, T0 + 200)["gpus"][0]
    assert gpu["samples"] == 0 and gpu["util_mean"] is None and gpu["throttled_s"] == {}


def test_a_phase_ending_between_samples_counts_the_last_state_up_to_its_end() -> None:
    history = History()
    for i in range(3):
        history.append(snap(T0 + 2 * i, sample(T0 + 2 * i, mask=0x4)))
    assert history.phase_summary(T0, T0 + 3)["gpus"][0]["throttled_s"] == {"power cap": 3.0}


@pytest.mark.parametrize("capacity", [900, 30])
def test_phase_summaries_of_the_recorded_h200_match_the_numbers_of_the_numpy_rings(capacity: int) -> None:
    # The idle then the loaded H200 recording, fed as the TUI feeds them; each phase's expected
    # summary was computed by the numpy ring buffers this module replaced (see the fixture's
    # "about"); at 30 slots the ring has wrapped and dropped the idle minute.
    expected = json.loads((RECORDINGS / "phase-summaries-h200.json").read_text())
    history = History(capacity=capacity)
    for name in ("idle", "loaded"):
        for snapshot in read_recording(RECORDINGS / f"{name}-h200.jsonl").snapshots:
            history.append(snapshot)
    cases = [c for c in expected["cases"] if c["capacity"] == capacity]
    assert len(cases) == 14
    for case in cases:
        got = history.phase_summary(case["t0"], case["t1"])
        # The reference predates the GPU's UUID in the summary (the identity work added it).
        got["gpus"] = [{k: v for k, v in g.items() if k != "uuid"} for g in got["gpus"]]
        assert got == case["summary"], (case["t0"], case["t1"])
