"""`cockpit gpu` and `cockpit telemetry record`: what the engineer sees, with and without NVML."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from cockpit.cli.telemetry import gpu_command, record, record_command, show_gpus
from cockpit.clock import FakeClock
from cockpit.errors import CockpitError
from cockpit.telemetry.fake import FakeGpu, FakePynvml
from cockpit.telemetry.nvml import Nvml
from cockpit.telemetry.recording import read_recording
from cockpit.telemetry.sampler import Sampler

NO_DRIVER = "NVML library not found (no NVIDIA driver on this machine)"


class Procs:
    def prepare(self) -> None:
        pass

    def describe(self, pid: int) -> tuple[str | None, tuple[int, ...]]:
        return "python3", (1,)

    def keep_only(self, pids: object) -> None:
        pass


def fake_sampler(clock: FakeClock | None = None, gpus: list[FakeGpu] | None = None) -> Sampler:
    gpus = gpus or [FakeGpu(util_gpu=97, memory_used_mib=81_234, temp_c=64, power_w=689.6, sm_clock_mhz=1755,
                            throttle_mask=0x4, processes=[(4242, 80_000)]),
                    FakeGpu(lost=True)]
    return Sampler(Nvml(FakePynvml(gpus)), clock or FakeClock(), processes=Procs())


def test_without_nvml_cockpit_gpu_exits_2_with_one_line_on_stderr(capsys: pytest.CaptureFixture[str],
                                                                  no_gpu: None) -> None:
    assert gpu_command(as_json=False, watch_s=None) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"cockpit: no GPU telemetry: {NO_DRIVER}\n"


def test_without_nvml_cockpit_gpu_json_prints_available_false(capsys: pytest.CaptureFixture[str],
                                                               no_gpu: None) -> None:
    assert gpu_command(as_json=True, watch_s=None) == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == {"available": False, "reason": NO_DRIVER}
    assert len(out.splitlines()) == 1 and err.count("\n") == 1


def test_the_snapshot_table_shows_one_block_per_gpu() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert show_gpus(fake_sampler(), False, None, out, err, lambda s: None) == 0
    assert out.getvalue() == (
        "GPU 0  NVIDIA H200  (sm_90, driver 580.159.03, CUDA 13.0)\n"
        "  util   97 %   mem util 0 %   mem 81,234 / 143,771 MiB\n"
        "  temp   64 °C (slowdown 90 °C)   power 690 / 700 W\n"
        "  clocks SM 1755 / 1980 MHz   mem 3201 / 3201 MHz   P0\n"
        "  clock events  power cap\n"
        "  procs  4242 python3 80,000 MiB\n"
        "\n"
        "GPU 1  unknown GPU  LOST: fell off the bus (reset the GPU or reboot the machine)\n\n"
    )
    assert err.getvalue() == ""


def test_the_json_snapshot_merges_static_facts_and_the_sample_per_gpu() -> None:
    out = io.StringIO()
    assert show_gpus(fake_sampler(), True, None, out, io.StringIO(), lambda s: None) == 0
    obj = json.loads(out.getvalue())
    assert obj["available"] is True and len(obj["gpus"]) == 2
    g = obj["gpus"][0]
    assert (g["name"], g["util_gpu"], g["power_w"], g["max_sm_clock_mhz"]) == ("NVIDIA H200", 97, 689.6, 1980)
    assert g["throttle_reasons"] == ["power cap"] and g["compute_capability"] == [9, 0]
    assert g["processes"] == [{"pid": 4242, "name": "python3", "used_mib": 80_000, "ancestors": [1]}]
    assert obj["gpus"][1]["lost"] is True


def test_watch_repeats_until_ctrl_c_then_exits_0() -> None:
    clock = FakeClock()
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        clock.advance(s)
        if len(sleeps) == 3:
            raise KeyboardInterrupt

    out = io.StringIO()
    assert show_gpus(fake_sampler(clock), True, 2.0, out, io.StringIO(), sleep) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert sleeps == [2.0, 2.0, 2.0] and [o["t"] - lines[0]["t"] for o in lines] == [0.0, 2.0, 4.0]


def test_a_bad_watch_interval_is_a_usage_error() -> None:
    with pytest.raises(CockpitError, match="--watch needs a positive number of seconds"):
        gpu_command(as_json=False, watch_s=0)


def test_nvml_problems_go_to_stderr_once() -> None:
    err = io.StringIO()
    sampler = fake_sampler(gpus=[FakeGpu(errors={"nvmlDeviceGetTemperature": 10})])
    show_gpus(sampler, False, None, io.StringIO(), err, lambda s: None)
    assert err.getvalue() == "cockpit: GPU 0: reading temperature failed: Timeout (NVML error 10) (shown as n/a)\n"


def test_record_writes_a_tick_per_interval_for_the_given_seconds(tmp_path: Path) -> None:
    clock = FakeClock()
    mono = [100.0]

    def sleep(s: float) -> None:
        mono[0] += s
        clock.advance(s)

    out, stdout = tmp_path / "rec.jsonl", io.StringIO()
    assert record(fake_sampler(clock), out, 5, 1.0, lambda: mono[0], sleep, stdout) == 0
    rec = read_recording(out)
    assert [s.t - rec.snapshots[0].t for s in rec.snapshots] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert stdout.getvalue() == f"recorded 6 ticks of 2 GPU(s) over 5.0 s to {out}\n"


def test_ctrl_c_while_recording_keeps_what_was_recorded(tmp_path: Path) -> None:
    calls = [0]

    def sleep(s: float) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise KeyboardInterrupt

    out = tmp_path / "rec.jsonl"
    assert record(fake_sampler(), out, 60, 1.0, lambda: 0.0, sleep, io.StringIO()) == 0
    assert len(read_recording(out).snapshots) == 3


def test_recording_without_nvml_is_an_environment_error_and_leaves_no_file(tmp_path: Path, no_gpu: None) -> None:
    out = tmp_path / "rec.jsonl"
    with pytest.raises(CockpitError, match=re.escape(f"no GPU telemetry to record: {NO_DRIVER}")):
        record_command(5, out)
    assert not out.exists()
    with pytest.raises(CockpitError, match="--seconds and the interval must be positive"):
        record_command(0, out)
