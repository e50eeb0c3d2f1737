"""Work that escapes the bench's timer, named from the profiler's activity records (issue 46): the
planted candidates of bench/device/planted/escapes.py audited on an H200 (2026-11-29,
bench/device/record_escapes.py; tests/fixtures/gpu/records/): a softmax on the caller's stream, the
same on a stream nobody waits for, on a stream the caller waits for, and from a thread the call
does not join. The attribution and the lines are plain Python over those records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cockpit.probes.kernel_records import GpuRecord, escape_line, escape_note, escapes

HERE = Path(__file__).parent / "fixtures" / "gpu" / "records"


def audited(name: str) -> tuple[Any, float]:
    doc = json.loads((HERE / f"{name}.json").read_text())
    records = [GpuRecord(**a) for a in doc["records"]]
    return escapes(records, doc["caller"], doc["stream"]), doc["timer_us"]


def test_an_honest_softmax_is_two_kernels_a_call_on_its_callers_stream_and_the_timer_saw_them() -> None:
    found, timer_us = audited("honest")
    assert found.calls == 8 and found.kernels_per_call() == 2  # the softmax and the copy into the output
    assert found.other_streams == () and found.other_threads == 0 and found.unjoined == 0
    assert 0 < found.busy_us_per_call() <= timer_us
    assert escape_line(found, timer_us) is None and escape_note(found) is None


def test_work_on_a_stream_nobody_waits_for_is_refused_naming_the_stream() -> None:
    found, timer_us = audited("side")
    line = escape_line(found, timer_us)
    assert timer_us < 1 and found.busy_us_per_call() > 10  # the events saw nothing of 18 µs of work
    assert line is not None and line.startswith("leaves work the timer does not see: on another stream (")
    assert "its caller's stream does not wait for" in line


def test_a_side_stream_the_caller_waits_for_is_named_and_timed_whole() -> None:
    found, timer_us = audited("joined")
    assert escape_line(found, timer_us) is None
    assert found.other_streams and escape_note(found) == (
        f"also runs work on stream {found.other_streams[0]}; the timer waits for it (timed whole)")


def test_a_thread_the_call_does_not_join_is_refused_even_when_the_timer_happened_to_see_its_work() -> None:
    found, timer_us = audited("thread")
    assert found.other_threads > 0 and found.unjoined > 0
    assert timer_us > found.busy_us_per_call() * 0.97  # this time the thread launched before the end event
    line = escape_line(found, timer_us)
    assert line is not None and line.startswith("launches work from another thread that its call does not wait for")


def act(name: str, gpu: bool, lane: int, link: int, start: int, dur: int) -> GpuRecord:
    return GpuRecord(name, gpu, lane, link, start, dur)


def test_the_busy_time_is_the_union_of_the_calls_work_overlaps_counted_once() -> None:
    records = [act("cockpit.call.0", False, 1, 100, 0, 100), act("cudaLaunchKernel", False, 1, 7, 10, 5),
               act("cudaLaunchKernel", False, 1, 8, 20, 5), act("cudaStreamWaitEvent", False, 1, 9, 30, 5),
               act("k1", True, 5, 7, 200, 50), act("k2", True, 6, 8, 220, 50),
               act("cockpit.call.0", True, 5, 100, 200, 70)]
    found = escapes(records, caller_tid=1, caller_stream=5)
    assert found.kernels == 2 and found.busy_ns == 70 and found.other_streams == (6,)
    assert found.unjoined_streams == 0  # the call made its stream wait for stream 6
    assert escape_line(found, timer_us_per_call=0.07) is None  # the timer saw the 70 ns
    line = escape_line(found, timer_us_per_call=0.01)
    assert line is not None and "on another stream (6)" in line


def test_work_on_another_stream_its_call_never_waits_for_is_refused_even_when_the_timer_saw_it() -> None:
    records = [act("cockpit.call.0", False, 1, 100, 0, 100), act("cudaLaunchKernel", False, 1, 8, 20, 5),
               act("k2", True, 6, 8, 220, 50)]
    found = escapes(records, caller_tid=1, caller_stream=5)
    assert found.unjoined_streams == 1
    line = escape_line(found, timer_us_per_call=1.0, config="N=64")
    assert line is not None and line.startswith("leaves work the timer does not see at N=64: on another stream (6)")


@pytest.mark.parametrize("timer_us", [0.0, 5.0])
def test_no_call_recorded_refuses_nothing(timer_us: float) -> None:
    found = escapes([act("k", True, 5, 1, 0, 10)], caller_tid=1, caller_stream=5)
    assert found.calls == 0 and found.kernels == 0 and escape_line(found, timer_us) is None


def test_the_probe_has_cupti_torn_down_after_each_profiler_session_before_the_workload_loads(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Left on after the audit's first session, CUPTI's callbacks made every later launch of the
    bench slower on the host (SDPA 19.8 -> 51.5 us a call on an H200, bench/device/cupti_after.py):
    the eager times and the grid's wall time were the audit's, not the kernel's. Kineto tears it
    down when TEARDOWN_CUPTI is 1 as a session ends; the probe sets it, whatever the shell said."""
    from cockpit.probes import workload_probe

    monkeypatch.setenv("TEARDOWN_CUPTI", "0")
    seen = tmp_path / "seen.txt"
    (tmp_path / "wl.py").write_text(
        "import os, pathlib\n"
        f"pathlib.Path({str(seen)!r}).write_text(os.environ.get('TEARDOWN_CUPTI', 'unset'))\n"
        "from cockpit.workload.spec import Workload, Reference\n"
        "WORKLOAD = Workload(name='w', candidates={'ours': abs}, references=(Reference('o', abs, oracle=True),),\n"
        "                    make_inputs=lambda seed, n: (1,), test_grid=({'n': 1},), bench_grid=())\n")
    workload_probe.main(["describe", "--workspace", str(tmp_path), "--workload", "wl.py"])
    assert seen.read_text() == "1"
