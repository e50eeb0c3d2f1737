"""The NVML boundary never raises: n/a for unsupported fields, a visible lost GPU, each other error
reported once. Driven through a fake pynvml module (cockpit.telemetry.fake)."""

from __future__ import annotations

import subprocess
import sys

from cockpit.clock import FakeClock
from cockpit.telemetry.fake import FakeGpu, FakePynvml
from cockpit.telemetry.nvml import Nvml
from cockpit.telemetry.sampler import Sampler


def sampler_on(lib: FakePynvml) -> tuple[Sampler, FakeClock]:
    clock = FakeClock(1_795_000_000.0)
    return Sampler(Nvml(lib), clock, processes=NoProcesses()), clock


class NoProcesses:
    def prepare(self) -> None:
        pass

    def describe(self, pid: int) -> tuple[str | None, tuple[int, ...]]:
        return f"proc{pid}", (1,)

    def keep_only(self, pids: object) -> None:
        pass


def test_a_machine_without_the_nvidia_driver_reads_as_unavailable_with_a_one_line_reason(no_gpu: None) -> None:
    snap = Sampler(Nvml(), FakeClock()).tick()  # the real pynvml, its library not found
    assert snap.available is False
    assert snap.reason == "NVML library not found (no NVIDIA driver on this machine)"
    assert snap.samples == () and "\n" not in snap.reason


def test_a_driver_that_is_not_loaded_says_so_and_nvml_is_not_retried_every_tick() -> None:
    lib = FakePynvml(init_error=9)
    sampler, _ = sampler_on(lib)
    assert sampler.tick().reason == "NVIDIA driver not loaded (nvidia-smi fails too; load it or reboot)"
    sampler.tick()
    assert lib.calls["nvmlInit"] == 1


def test_a_machine_whose_nvml_sees_no_gpu_is_unavailable() -> None:
    snap = sampler_on(FakePynvml(gpus=[]))[0].tick()
    assert not snap.available and snap.reason == "NVML sees no GPU on this machine (check nvidia-smi)"


def test_not_supported_fields_read_as_none_and_are_not_asked_again() -> None:
    gpu = FakeGpu(unsupported={"nvmlDeviceGetMigMode", "nvmlDeviceGetPowerUsage",
                               "nvmlDeviceGetTotalEccErrors"})
    lib = FakePynvml([gpu])
    sampler, clock = sampler_on(lib)
    snap = sampler.tick()
    sample = snap.samples[0]
    assert sample.power_w is None and sample.ecc_corrected is None and sample.ecc_uncorrected is None
    assert snap.gpus[0].mig_mode is None
    assert sample.temp_c == 30 and sample.power_limit_w == 700.0
    assert snap.problems == ()
    for _ in range(5):
        clock.advance(10)
        sampler.tick()
    assert lib.calls["nvmlDeviceGetPowerUsage"] == 1
    assert lib.calls["nvmlDeviceGetTotalEccErrors"] == 2  # corrected and uncorrected, once each


def test_a_gpu_that_falls_off_the_bus_becomes_a_lost_row_and_is_not_asked_again() -> None:
    gpus = [FakeGpu(), FakeGpu(name="NVIDIA H200 #1")]
    lib = FakePynvml(gpus)
    sampler, clock = sampler_on(lib)
    assert [s.lost for s in sampler.tick().samples] == [False, False]
    gpus[1].lost = True
    clock.advance(1)
    snap = sampler.tick()
    assert [s.lost for s in snap.samples] == [False, True]
    assert snap.samples[1].temp_c is None and snap.samples[0].temp_c == 30
    assert snap.problems == ()
    calls = lib.calls["nvmlDeviceGetTemperature"]
    clock.advance(1)
    snap = sampler.tick()
    assert snap.samples[1].lost and lib.calls["nvmlDeviceGetTemperature"] == calls + 1  # GPU 0 only


def test_a_gpu_already_lost_when_nvml_opens_shows_as_lost() -> None:
    snap = sampler_on(FakePynvml([FakeGpu(lost=True), FakeGpu()]))[0].tick()
    assert snap.gpus[0].lost and snap.samples[0].lost and not snap.samples[1].lost
    assert snap.gpus[1].name == "NVIDIA H200"


def test_another_nvml_error_is_reported_once_not_every_tick() -> None:
    gpu = FakeGpu(errors={"nvmlDeviceGetClockInfo": 10})  # NVML_ERROR_TIMEOUT
    sampler, clock = sampler_on(FakePynvml([gpu]))
    first = sampler.tick()
    assert first.samples[0].sm_clock_mhz is None and first.samples[0].mem_clock_mhz is None
    assert [p.describe() for p in first.problems] == [
        "GPU 0: reading SM clock failed: Timeout (NVML error 10) (shown as n/a)",
        "GPU 0: reading memory clock failed: Timeout (NVML error 10) (shown as n/a)",
    ]
    for _ in range(3):
        clock.advance(1)
        assert sampler.tick().problems == ()
    gpu.errors["nvmlDeviceGetClockInfo"] = 999  # a different error is news
    clock.advance(1)
    assert [p.error for p in sampler.tick().problems] == ["Unknown Error (NVML error 999)"] * 2


def test_a_transient_error_recovers_on_the_next_tick() -> None:
    gpu = FakeGpu(errors={"nvmlDeviceGetTemperature": 10})
    sampler, clock = sampler_on(FakePynvml([gpu]))
    assert sampler.tick().samples[0].temp_c is None
    del gpu.errors["nvmlDeviceGetTemperature"]
    clock.advance(1)
    assert sampler.tick().samples[0].temp_c == 30


def test_the_static_facts_are_read_once_max_clocks_included() -> None:
    lib = FakePynvml()
    sampler, clock = sampler_on(lib)
    snap = sampler.tick()
    for _ in range(3):
        clock.advance(1)
        sampler.tick()
    static = snap.gpus[0]
    assert (static.name, static.compute_capability, static.driver_version, static.cuda_driver_version) == (
        "NVIDIA H200", (9, 0), "580.159.03", "13.0")
    assert (static.max_sm_clock_mhz, static.max_mem_clock_mhz, static.memory_total_mib) == (1980, 3201, 143771)
    assert (static.power_limit_w, static.slowdown_temp_c, static.persistence_mode) == (700.0, 90, True)
    assert lib.calls["nvmlDeviceGetMaxClockInfo"] == 2
    assert lib.calls["nvmlDeviceGetName"] == 1


def test_an_old_driver_without_clock_event_reasons_falls_back_to_throttle_reasons() -> None:
    class OldDriver(FakePynvml):
        def nvmlDeviceGetCurrentClocksEventReasons(self, h: int) -> int:
            raise self.NVMLError(13)  # NVML_ERROR_FUNCTION_NOT_FOUND

        def nvmlDeviceGetCurrentClocksThrottleReasons(self, h: int) -> int:
            return 0x4

    lib = OldDriver()
    sampler, clock = sampler_on(lib)
    for _ in range(2):
        snap = sampler.tick()
        assert snap.samples[0].throttle_reasons == ("power cap",) and snap.problems == ()
        clock.advance(1)


def test_importing_the_telemetry_core_loads_neither_pynvml_nor_numpy() -> None:
    code = ("import cockpit.telemetry.sample, cockpit.telemetry.nvml, cockpit.telemetry.sampler, "
            "cockpit.telemetry.validity, cockpit.telemetry.recording, cockpit.cli.telemetry, sys; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pynvml', 'numpy', 'psutil'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
