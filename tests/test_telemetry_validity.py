"""The bench gate's question: was the GPU clean while the benchmark ran?"""

from __future__ import annotations

from cockpit.telemetry.sample import GpuProcess, GpuSample, GpuStatic, Snapshot
from cockpit.telemetry.validity import judge_window

T0 = 1_795_000_000.0
GPUS = (GpuStatic(0, "NVIDIA H200", max_sm_clock_mhz=1980), GpuStatic(1, "NVIDIA H200", max_sm_clock_mhz=1980))
OURS = 5000  # the bench gate's child


def tick(t: float, util: int = 100, clock: int = 1980, mask: int = 0,
         procs: tuple[GpuProcess, ...] = (), index: int = 0) -> Snapshot:
    return Snapshot(t, (GpuSample(index, t, util_gpu=util, sm_clock_mhz=clock, throttle_mask=mask,
                                  processes=procs),), GPUS)


BENCH = GpuProcess(5001, "python3", 20_480, (OURS, 4000, 1))


def test_a_clean_window_at_full_clocks_with_only_our_processes_is_valid() -> None:
    ticks = [tick(T0 + i, procs=(BENCH,)) for i in range(10)]
    v = judge_window(ticks, T0, T0 + 9, own_pids={OURS})
    assert v.valid and v.checked and v.reasons == ()
    assert v.evidence["samples"] == 10
    assert v.evidence["clocks"] == [{"gpu": 0, "busy_samples": 10, "max_sm_clock_mhz": 1980,
                                     "min_busy_sm_clock_mhz": 1980, "max_busy_sm_clock_mhz": 1980,
                                     "threshold_mhz": 1782, "samples_below": 0,
                                     "samples_below_explained": 0}]


def test_power_capping_during_the_run_makes_it_suspect_with_the_seconds() -> None:
    ticks = [tick(T0 + i, mask=0x4 if 3 <= i < 7 else 0) for i in range(10)]
    v = judge_window(ticks, T0, T0 + 9, own_pids=set())
    assert not v.valid
    assert v.reasons == ("GPU 0: power cap active for 4.0 s of the 9.0 s window (4 of 10 samples)",)
    assert v.evidence["throttle"] == [{"gpu": 0, "reason": "power cap", "seconds": 4.0, "samples": 4,
                                       "tolerated": False}]


def test_idle_is_not_a_throttle_reason() -> None:
    ticks = [tick(T0 + i, util=0, clock=345, mask=0x1) for i in range(5)]
    v = judge_window(ticks, T0, T0 + 4, own_pids=set())
    assert v.valid and v.evidence["throttle"] == []


def test_clocks_below_ninety_percent_of_max_while_busy_make_it_suspect() -> None:
    ticks = [tick(T0 + i, clock=1410 if i == 4 else 1900) for i in range(10)]
    ticks.append(tick(T0 + 10, util=0, clock=345))  # idle after the run: low clocks don't count
    v = judge_window(ticks, T0, T0 + 10, own_pids=set())
    assert v.reasons == ("GPU 0: SM clock fell to 1410 MHz while busy (< 90% of its 1980 MHz max) "
                         "in 1 of 10 busy samples",)
    assert v.evidence["clocks"][0]["min_busy_sm_clock_mhz"] == 1410
    assert judge_window(ticks, T0, T0 + 10, set(), sm_clock_fraction=0.7).valid


def test_a_foreign_process_on_the_gpu_makes_it_suspect_but_our_children_do_not() -> None:
    other = GpuProcess(777, "train.py", 30_000, (1,))
    ticks = [tick(T0 + i, procs=(BENCH, other) if i >= 5 else (BENCH,)) for i in range(10)]
    v = judge_window(ticks, T0, T0 + 9, own_pids={OURS})
    assert v.reasons == ("GPU 0: pid 777 (train.py) is not ours and used 30000 MiB in 5 of 10 samples",)
    assert v.evidence["foreign"] == [{"gpu": 0, "pid": 777, "name": "train.py", "used_mib": 30_000,
                                      "samples": 5}]
    assert judge_window(ticks, T0, T0 + 4, own_pids={OURS}).valid


def test_only_the_samples_inside_the_window_count() -> None:
    ticks = [tick(T0 + i, mask=0x4 if i < 5 else 0) for i in range(20)]
    assert judge_window(ticks, T0 + 10, T0 + 19, own_pids=set()).valid


def test_a_run_shorter_than_a_tick_is_judged_from_the_samples_around_it() -> None:
    ticks = [tick(T0, mask=0x4), tick(T0 + 1, mask=0x4)]
    v = judge_window(ticks, T0 + 0.2, T0 + 0.5, own_pids=set())
    assert not v.valid and v.evidence["samples"] == 2
    assert v.evidence["throttle"] == [{"gpu": 0, "reason": "power cap", "seconds": 0.3, "samples": 2,
                                       "tolerated": False}]


def test_a_gpu_not_watched_does_not_count() -> None:
    ticks = [tick(T0 + i, index=1, procs=(GpuProcess(9, "other", 100, ()),)) for i in range(3)]
    assert not judge_window(ticks, T0, T0 + 2, own_pids=set()).valid
    assert judge_window(ticks, T0, T0 + 2, own_pids=set(), gpus={0}).checked is False


def test_a_gpu_lost_during_the_run_makes_it_suspect() -> None:
    ticks = [tick(T0), Snapshot(T0 + 1, (GpuSample(0, T0 + 1, lost=True),), GPUS)]
    v = judge_window(ticks, T0, T0 + 1, own_pids=set())
    assert "GPU 0 fell off the bus (NVML: GPU is lost)" in v.reasons and v.evidence["lost"] == [0]


def test_without_telemetry_the_window_is_not_checked_rather_than_failed() -> None:
    v = judge_window([Snapshot(T0, available=False, reason="no NVML")], T0, T0 + 5, own_pids=set())
    assert v.valid and not v.checked and v.evidence["samples"] == 0
