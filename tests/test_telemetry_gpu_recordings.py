"""Real NVML recordings from a lent H200 (tests/fixtures/telemetry/capture.sh, 2026-11-21,
driver 580.159.04): ~20 s idle, then ~40 s during which load.py ran bf16 8192³ matrix products
(665 TFLOP/s) from t≈6.9 s to t≈36.9 s. What the cockpit reads from them is what the card did."""

from __future__ import annotations

import statistics
from itertools import pairwise
from pathlib import Path

from cockpit.clock import FakeClock
from cockpit.telemetry.history import History
from cockpit.telemetry.recording import ReplaySampler, read_recording
from cockpit.telemetry.validity import ValidityRules, judge_window

HERE = Path(__file__).parent / "fixtures" / "telemetry"
IDLE = read_recording(HERE / "idle-h200.jsonl")
LOADED = read_recording(HERE / "loaded-h200.jsonl")
# From load.py's own output (capture.log): the pid, its parent shell, and the loop's start and end.
LOAD_PID, LOAD_PARENT = 445, 401
LOAD_T0, LOAD_T1 = 1795303191.641, 1795303221.648


def series(field: str) -> list[float]:
    return [getattr(s.samples[0], field) for s in LOADED.snapshots]


def test_both_recordings_are_whole_small_and_from_one_h200() -> None:
    for rec, ticks in ((IDLE, 21), (LOADED, 41)):
        assert rec.problems == () and len(rec.snapshots) == ticks
        assert rec.path.stat().st_size < 200_000
        (gpu,) = rec.gpus
        assert (gpu.name, gpu.compute_capability, gpu.driver_version, gpu.cuda_driver_version) == (
            "NVIDIA H200", (9, 0), "580.159.04", "13.0")
        assert (gpu.max_sm_clock_mhz, gpu.max_mem_clock_mhz, gpu.power_limit_w, gpu.slowdown_temp_c) == (
            1980, 3201, 700.0, 89)
        assert gpu.persistence_mode is True and gpu.mig_mode is False and gpu.memory_total_mib == 143771
    assert round(IDLE.duration_s) == 20 and round(LOADED.duration_s) == 40


def test_the_idle_card_sits_at_idle_clocks_and_80_watts() -> None:
    samples = [s.samples[0] for s in IDLE.snapshots]
    assert {s.util_gpu for s in samples} == {0} and {s.sm_clock_mhz for s in samples} == {345}
    assert all(80 < s.power_w < 81 for s in samples)
    assert {s.throttle_reasons for s in samples} == {("idle",)}
    assert all(s.processes == () and s.ecc_uncorrected == 0 for s in samples)


def test_a_watch_of_the_idle_card_cannot_vouch_for_a_bench_that_ran_elsewhere() -> None:
    # What the bench gate's watch saw on a 2-GPU box when it watched NVML's GPU 0 while the bench
    # ran on GPU 1: an idle card. Clean, but it says nothing about the run.
    v = judge_window(IDLE.snapshots, IDLE.snapshots[0].t, IDLE.snapshots[-1].t, own_pids=set())
    assert not v.valid and v.checked
    assert v.reasons == ("GPU 0 (GPU-bb9154e7) was idle in all 21 samples: the watch cannot vouch for a "
                         "run it never saw (did the run use another GPU?)",)


def test_the_loaded_card_is_busy_and_its_power_rises_from_idle_to_the_cap() -> None:
    util, power = series("util_gpu"), series("power_w")
    assert max(util) > 50 and sum(u >= 99 for u in util) == 30
    assert power[0] < 81 and max(power) > 690 and power[7] < power[8]  # 80 W -> 167 W -> 696 W
    assert statistics.mean(power[:6]) < 100 < 600 < statistics.mean(power[10:30])
    temps = series("temp_c")
    assert temps[0] == 39 and max(temps) == 63


def test_under_load_the_power_cap_holds_the_sm_clock_near_1_5_ghz() -> None:
    busy = [s.samples[0] for s in LOADED.snapshots if (s.samples[0].util_gpu or 0) > 50]
    assert {s.throttle_reasons for s in busy} == {("power cap",)}
    assert min(s.sm_clock_mhz or 0 for s in busy) == 1455 and max(s.sm_clock_mhz or 0 for s in busy) == 1530
    after = LOADED.snapshots[38].samples[0]  # the load has stopped: no reason at all, full clock, once
    assert (after.util_gpu, after.throttle_mask, after.sm_clock_mhz) == (0, 0, 1980)


def test_the_load_process_is_seen_with_its_parents() -> None:
    procs = {p for s in LOADED.snapshots for p in s.samples[0].processes}
    (proc,) = procs
    assert (proc.pid, proc.name, proc.used_mib, proc.ancestors[0]) == (LOAD_PID, "python3", 1002, LOAD_PARENT)


def test_the_power_capped_load_is_comparable_with_the_cap_shown() -> None:
    v = judge_window(LOADED.snapshots, LOAD_T0, LOAD_T1, own_pids={LOAD_PID})
    assert v.valid and v.checked and v.reasons == ()
    assert v.notes == ("GPU 0 (GPU-bb9154e7): power cap active for 29.8 s of the 30.0 s window (99.2%; "
                       "30 of 30 samples) (the card's normal loaded state: shown, not suspect)",)
    assert v.evidence.to_json()["clocks"] == [{"gpu": 0, "busy_samples": 30, "max_sm_clock_mhz": 1980,
                                     "min_busy_sm_clock_mhz": 1455, "max_busy_sm_clock_mhz": 1530}]
    assert v.evidence.to_json()["foreign"] == []
    # The gate owns the load's parent shell: the load, its child, is ours too.
    assert judge_window(LOADED.snapshots, LOAD_T0, LOAD_T1, own_pids={LOAD_PARENT}).evidence.to_json()["foreign"] == []


def test_strict_mode_finds_the_same_window_suspect_for_the_cap_and_its_clocks() -> None:
    v = judge_window(LOADED.snapshots, LOAD_T0, LOAD_T1, own_pids={LOAD_PID}, rules=ValidityRules("strict"))
    assert not v.valid
    assert v.reasons == (
        "GPU 0 (GPU-bb9154e7): power cap active for 29.8 s of the 30.0 s window (99.2%; 30 of 30 samples)",
        "GPU 0 (GPU-bb9154e7): SM clock fell to 1455 MHz while busy (< 90% of its 1980 MHz max) in 30 of "
        "30 busy samples",
    )
    assert v.evidence.to_json()["clocks"][0]["threshold_mhz"] == 1782
    # tolerating the cap in strict mode: the clock drop is the cap's doing, explained, not hidden
    tolerant = judge_window(LOADED.snapshots, LOAD_T0, LOAD_T1, own_pids={LOAD_PID},
                            rules=ValidityRules("strict", tolerate=frozenset({"power cap"})))
    assert tolerant.valid and tolerant.notes[0].endswith("(tolerated)")
    assert (tolerant.evidence.to_json()["clocks"][0]["samples_below"],
            tolerant.evidence.to_json()["clocks"][0]["samples_below_explained"]) == (0, 30)
    other = judge_window(LOADED.snapshots, LOAD_T0, LOAD_T1, own_pids={LOAD_PID},
                         rules=ValidityRules("strict", tolerate=frozenset({"sync boost"})))
    assert not other.valid and len(other.reasons) == 2


def test_seen_from_another_session_the_load_is_a_foreign_process_and_the_window_suspect() -> None:
    v = judge_window(LOADED.snapshots, LOAD_T0, LOAD_T1, own_pids={99999})
    assert not v.valid
    assert v.reasons == ("GPU 0 (GPU-bb9154e7): pid 445 (python3) is not ours and used 1002 MiB in 30 of "
                         "30 samples",)
    assert v.evidence.to_json()["foreign"] == [{"gpu": 0, "pid": LOAD_PID, "name": "python3", "used_mib": 1002,
                                      "samples": 30}]


def test_the_phase_summary_of_the_load_agrees_with_the_verdict() -> None:
    history = History()
    for snap in LOADED.snapshots:
        history.append(snap)
    (gpu,) = history.phase_summary(LOAD_T0, LOAD_T1)["gpus"]
    assert gpu["uuid"] == "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20"
    assert gpu["util_mean"] == 99.9 and gpu["power_max_w"] == 695.6 and gpu["temp_max_c"] == 63.0
    assert gpu["sm_clock_min_mhz"] == 1455.0 and gpu["throttled_s"] == {"idle": 0.2, "power cap": 29.8}


def test_the_recorded_tick_costs_show_the_fast_lane_cheap_and_pcie_blocking() -> None:
    # tick_us is the sampler's own figure, at 1 Hz, PCIe on: fast ticks ~0.3 ms (cold, after a
    # 1 s sleep), slow ticks ~45-55 ms (two 21 ms PCIe reads + ~3 ms energy).
    for rec in (IDLE, LOADED):
        ticks = rec.snapshots[1:]
        fast = [s.tick_us for s in ticks if not s.slow]
        slow = [s.tick_us for s in ticks if s.slow]
        assert statistics.median(fast) < 1_000 and min(slow) > 40_000
        # Recorded before the slow lane ran on a fixed grid: ticks 0.1 s past whole seconds made
        # its "5 s since the last read" rule fire every 6 s after the first 5 (see the sampler test).
        slow_t = [s.t for s in rec.snapshots if s.slow]
        assert all(5.0 <= b - a <= 6.1 for a, b in pairwise(slow_t))


def test_the_panel_can_be_driven_from_the_loaded_recording() -> None:
    clock = FakeClock(1_800_000_000.0)
    replay, history = ReplaySampler(LOADED, clock), History(capacity=60)
    for _ in range(45):  # past the end: it loops
        history.append(replay.tick())
        clock.advance(1)
    t = history.values(0, "t")
    assert len(t) == 45 and all(b - a == 1.0 for a, b in pairwise(t))
    util = history.values(0, "util_gpu", last_n=41)
    assert util[7] >= 99 and util[0] == 0
