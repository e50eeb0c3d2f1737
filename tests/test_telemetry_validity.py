"""The bench gate's first question: were the conditions on the measured GPU clean while the
benchmark ran? (Whether ours and the baseline ran at comparable clocks: test_block_clocks.)"""

from __future__ import annotations

from cockpit.telemetry.sample import GpuProcess, GpuSample, GpuStatic, Snapshot
from cockpit.telemetry.validity import ValidityRules, judge_window

T0 = 1_795_000_000.0
UUID0 = "GPU-a0000000-0000-0000-0000-000000000000"
UUID1 = "GPU-a1000000-0000-0000-0000-000000000000"
GPUS = (GpuStatic(0, "NVIDIA H200", UUID0, max_sm_clock_mhz=1980),
        GpuStatic(1, "NVIDIA H200", UUID1, max_sm_clock_mhz=1980))
OURS = 5000  # the bench gate's child
STRICT = ValidityRules(mode="strict")


def tick(t: float, util: int = 100, clock: int = 1980, mask: int = 0,
         procs: tuple[GpuProcess, ...] = (), index: int = 0) -> Snapshot:
    return Snapshot(t, (GpuSample(index, t, util_gpu=util, sm_clock_mhz=clock, throttle_mask=mask,
                                  processes=procs),), GPUS)


BENCH = GpuProcess(5001, "python3", 20_480, (OURS, 4000, 1))


def test_a_clean_window_at_full_clocks_with_only_our_processes_is_valid_in_both_modes() -> None:
    ticks = [tick(T0 + i, procs=(BENCH,)) for i in range(10)]
    for rules in (ValidityRules(), STRICT):
        v = judge_window(ticks, T0, T0 + 9, own_pids={OURS}, rules=rules)
        assert v.valid and v.checked and v.reasons == () and v.notes == ()
        assert v.evidence.to_json()["samples"] == 10 and v.evidence.to_json()["gpus"] == [{"gpu": 0, "uuid": UUID0}]
    assert judge_window(ticks, T0, T0 + 9, {OURS}, STRICT).evidence.to_json()["clocks"] == [
        {"gpu": 0, "busy_samples": 10, "max_sm_clock_mhz": 1980, "min_busy_sm_clock_mhz": 1980,
         "max_busy_sm_clock_mhz": 1980, "threshold_mhz": 1782, "samples_below": 0,
         "samples_below_explained": 0}]


def test_the_power_cap_is_shown_not_suspect_and_strict_mode_still_flags_it() -> None:
    ticks = [tick(T0 + i, clock=1500 if 3 <= i < 7 else 1980, mask=0x4 if 3 <= i < 7 else 0)
             for i in range(10)]
    v = judge_window(ticks, T0, T0 + 9, own_pids=set())
    assert v.valid and v.reasons == ()
    assert v.notes == ("GPU 0 (GPU-a0000000): power cap active for 4.0 s of the 9.0 s window "
                       "(44.4%; 4 of 10 samples) (the card's normal loaded state: shown, not suspect)",)
    assert v.evidence.to_json()["throttle"] == [{"gpu": 0, "reason": "power cap", "seconds": 4.0, "fraction": 0.4444,
                                       "samples": 4, "tolerated": False}]
    strict = judge_window(ticks, T0, T0 + 9, own_pids=set(), rules=STRICT)
    assert strict.reasons == (
        "GPU 0 (GPU-a0000000): power cap active for 4.0 s of the 9.0 s window (44.4%; 4 of 10 samples)",
        "GPU 0 (GPU-a0000000): SM clock fell to 1500 MHz while busy (< 90% of its 1980 MHz max) in 4 of "
        "10 busy samples")
    tolerant = judge_window(ticks, T0, T0 + 9, set(), ValidityRules("strict", tolerate=frozenset({"power cap"})))
    assert tolerant.valid and tolerant.notes[0].endswith("(tolerated)")


def test_a_thermal_slowdown_longer_than_its_share_makes_it_suspect_a_brief_one_is_shown() -> None:
    long = [tick(T0 + i, mask=0x20 if i < 3 else 0) for i in range(100)]
    v = judge_window(long, T0, T0 + 99, own_pids=set())
    assert v.reasons == ("GPU 0 (GPU-a0000000): SW thermal slowdown active for 3.0 s of the 99.0 s window "
                         "(3.0%; 3 of 100 samples): over the 2% a slowdown may take",)
    brief = [tick(T0 + i, mask=0x20 if i < 1 else 0) for i in range(100)]
    v = judge_window(brief, T0, T0 + 99, own_pids=set())
    assert v.valid and v.notes == ("GPU 0 (GPU-a0000000): SW thermal slowdown active for 1.0 s of the "
                                   "99.0 s window (1.0%; 1 of 100 samples) (brief: under 2%)",)
    # a box that runs warm by design can tolerate it
    rules = ValidityRules(tolerate=frozenset({"SW thermal slowdown"}))
    assert judge_window(long, T0, T0 + 99, set(), rules).valid


def test_idle_is_not_a_clock_event() -> None:
    ticks = [tick(T0 + i, util=3, mask=0x1) for i in range(5)]
    v = judge_window(ticks, T0, T0 + 4, own_pids=set(), rules=STRICT)
    assert v.valid and v.evidence.to_json()["throttle"] == [] and v.notes == ()


def test_a_watch_that_never_saw_the_gpu_busy_cannot_vouch_for_the_run() -> None:
    ticks = [tick(T0 + i, util=0, clock=345, mask=0x1) for i in range(5)]
    v = judge_window(ticks, T0, T0 + 4, own_pids=set())
    assert not v.valid and v.checked
    assert v.reasons == ("GPU 0 (GPU-a0000000) was idle in all 5 samples: the watch cannot vouch for a run "
                         "it never saw (did the run use another GPU?)",)


def test_strict_mode_flags_busy_clocks_below_ninety_percent_of_max_comparable_mode_does_not() -> None:
    ticks = [tick(T0 + i, clock=1410 if i == 4 else 1900) for i in range(10)]
    ticks.append(tick(T0 + 10, util=0, clock=345))  # idle after the run: low clocks don't count
    v = judge_window(ticks, T0, T0 + 10, own_pids=set(), rules=STRICT)
    assert v.reasons == ("GPU 0 (GPU-a0000000): SM clock fell to 1410 MHz while busy (< 90% of its "
                         "1980 MHz max) in 1 of 10 busy samples",)
    assert v.evidence.to_json()["clocks"][0]["min_busy_sm_clock_mhz"] == 1410
    assert judge_window(ticks, T0, T0 + 10, set(), ValidityRules("strict", sm_clock_fraction=0.7)).valid
    assert judge_window(ticks, T0, T0 + 10, set()).valid


def test_a_foreign_process_on_the_gpu_makes_it_suspect_but_our_children_do_not() -> None:
    other = GpuProcess(777, "train.py", 30_000, (1,))
    ticks = [tick(T0 + i, procs=(BENCH, other) if i >= 5 else (BENCH,)) for i in range(10)]
    v = judge_window(ticks, T0, T0 + 9, own_pids={OURS})
    assert v.reasons == ("GPU 0 (GPU-a0000000): pid 777 (train.py) is not ours and used 30000 MiB in "
                         "5 of 10 samples",)
    assert v.evidence.to_json()["foreign"] == [{"gpu": 0, "pid": 777, "name": "train.py", "used_mib": 30_000,
                                      "samples": 5}]
    assert judge_window(ticks, T0, T0 + 4, own_pids={OURS}).valid


def test_the_measured_gpu_is_chosen_by_uuid_and_a_load_on_another_gpu_does_not_count() -> None:
    other = GpuProcess(777, "train.py", 30_000, (1,))
    ticks = [Snapshot(T0 + i, (GpuSample(0, T0 + i, util_gpu=100, sm_clock_mhz=1980, throttle_mask=0),
                               GpuSample(1, T0 + i, util_gpu=100, sm_clock_mhz=1980, throttle_mask=0,
                                         processes=(other,))), GPUS) for i in range(5)]
    assert judge_window(ticks, T0, T0 + 4, set(), gpus={UUID0}).valid
    on_1 = judge_window(ticks, T0, T0 + 4, set(), gpus={UUID1.upper()})  # any case
    assert not on_1.valid and on_1.reasons[0].startswith("GPU 1 (GPU-a1000000): pid 777 (train.py)")
    # a UUID no snapshot has: nothing was watched, so nothing is vouched for
    assert judge_window(ticks, T0, T0 + 4, set(), gpus={"GPU-ffffffff"}).checked is False


def test_only_the_samples_inside_the_window_count() -> None:
    ticks = [tick(T0 + i, mask=0x20 if i < 5 else 0) for i in range(20)]
    assert judge_window(ticks, T0 + 10, T0 + 19, own_pids=set()).valid


def test_a_run_shorter_than_a_tick_is_judged_from_the_samples_around_it() -> None:
    ticks = [tick(T0, mask=0x40), tick(T0 + 1, mask=0x40)]
    v = judge_window(ticks, T0 + 0.2, T0 + 0.5, own_pids=set())
    assert not v.valid and v.evidence.to_json()["samples"] == 2
    assert v.evidence.to_json()["throttle"] == [{"gpu": 0, "reason": "HW thermal slowdown", "seconds": 0.3,
                                       "fraction": 1.0, "samples": 2, "tolerated": False}]


def test_a_gpu_lost_during_the_run_makes_it_suspect() -> None:
    ticks = [tick(T0), Snapshot(T0 + 1, (GpuSample(0, T0 + 1, lost=True),), GPUS)]
    v = judge_window(ticks, T0, T0 + 1, own_pids=set())
    assert "GPU 0 (GPU-a0000000) fell off the bus (NVML: GPU is lost)" in v.reasons
    assert v.evidence.to_json()["lost"] == [0]
    gone = judge_window([Snapshot(T0, (GpuSample(0, T0, lost=True),), GPUS)], T0, T0 + 1, set())
    assert gone.reasons == ("GPU 0 (GPU-a0000000) fell off the bus (NVML: GPU is lost)",)


def test_without_telemetry_the_window_is_not_checked_rather_than_failed() -> None:
    v = judge_window([Snapshot(T0, available=False, reason="no NVML")], T0, T0 + 5, own_pids=set())
    assert v.valid and not v.checked and v.evidence.to_json()["samples"] == 0
