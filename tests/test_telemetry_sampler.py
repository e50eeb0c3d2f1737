"""The sampler: cheap fields every tick, ECC/energy/PCIe every `slow_every_s`, its own cost measured,
processes named with their parents. A fake clock; nothing sleeps."""

from __future__ import annotations

from collections.abc import Collection

from cockpit.clock import FakeClock
from cockpit.telemetry.fake import FakeGpu, FakePynvml
from cockpit.telemetry.nvml import Nvml
from cockpit.telemetry.sampler import Sampler

SLOW_CALLS = ("nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetTotalEccErrors")


class Processes:
    def __init__(self, table: dict[int, tuple[str, tuple[int, ...]]]) -> None:
        self.table = table
        self.looked_up: list[int] = []
        self.kept: set[int] = set()

    def prepare(self) -> None:
        pass

    def describe(self, pid: int) -> tuple[str | None, tuple[int, ...]]:
        self.looked_up.append(pid)
        return self.table.get(pid, (None, ()))

    def keep_only(self, pids: Collection[int]) -> None:
        self.kept = set(pids)


def make(gpus: list[FakeGpu] | None = None, **kwargs: object) -> tuple[Sampler, FakePynvml, FakeClock]:
    lib = FakePynvml(gpus)
    clock = FakeClock(1_795_000_000.0)
    return Sampler(Nvml(lib), clock, processes=Processes({}), **kwargs), lib, clock  # type: ignore[arg-type]


def test_a_tick_reads_the_cheap_fields_of_every_gpu() -> None:
    sampler, _, clock = make([FakeGpu(util_gpu=97, util_mem=41, memory_used_mib=80_000, temp_c=61,
                                      power_w=655.5, sm_clock_mhz=1755, throttle_mask=0x4, pstate=0),
                              FakeGpu()])
    snap = sampler.tick()
    s = snap.samples[0]
    assert snap.available and snap.t == clock.now() and [x.index for x in snap.samples] == [0, 1]
    assert (s.util_gpu, s.util_mem, s.memory_used_mib, s.temp_c, s.power_w, s.power_limit_w) == (
        97, 41, 80_000, 61, 655.5, 700.0)
    assert (s.sm_clock_mhz, s.mem_clock_mhz, s.pstate, s.throttle_reasons) == (1755, 3201, 0, ("power cap",))
    assert snap.samples[1].throttle_reasons == ("idle",)


def test_the_slow_lane_runs_on_the_first_tick_then_every_five_seconds() -> None:
    sampler, lib, clock = make()
    slow_ticks = []
    for second in range(12):
        snap = sampler.tick()
        if snap.slow:
            slow_ticks.append(second)
        clock.advance(1)
    assert slow_ticks == [0, 5, 10]
    assert lib.calls["nvmlDeviceGetTotalEnergyConsumption"] == 3
    assert lib.calls["nvmlDeviceGetTemperature"] == 12


def test_between_slow_reads_samples_carry_the_last_slow_values_and_when_they_were_read() -> None:
    gpu = FakeGpu(energy_j=1000.0, ecc=(3, 0))
    sampler, _, clock = make([gpu])
    t0 = clock.now()
    sampler.tick()
    gpu.energy_j = 1600.0
    clock.advance(2)
    s = sampler.tick().samples[0]
    assert (s.energy_j, s.ecc_corrected, s.ecc_uncorrected, s.slow_t) == (1000.0, 3, 0, t0)
    clock.advance(3)
    s = sampler.tick().samples[0]
    assert (s.energy_j, s.slow_t) == (1600.0, t0 + 5)


def test_pcie_is_read_only_when_enabled_because_it_blocks_for_20_ms() -> None:
    sampler, lib, _ = make()
    s = sampler.tick().samples[0]
    assert (s.pcie_rx_kbs, s.pcie_tx_kbs) == (None, None) and lib.calls["nvmlDeviceGetPcieThroughput"] == 0
    sampler, lib, clock = make(pcie=True)
    assert (sampler.tick().samples[0].pcie_rx_kbs, lib.calls["nvmlDeviceGetPcieThroughput"]) == (1000, 2)
    clock.advance(1)
    sampler.tick()
    assert lib.calls["nvmlDeviceGetPcieThroughput"] == 2  # not on the fast lane


def test_a_clock_that_steps_back_triggers_the_slow_lane_rather_than_starving_it() -> None:
    sampler, _, clock = make()
    sampler.tick()
    clock.advance(-60)
    assert sampler.tick().slow


def test_each_tick_measures_its_own_cost() -> None:
    ticks = iter([10.0, 10.000042, 20.0, 20.0000075])
    lib = FakePynvml()
    sampler = Sampler(Nvml(lib), FakeClock(), processes=Processes({}), timer=lambda: next(ticks))
    assert round(sampler.tick().tick_us, 3) == 42.0
    snap = sampler.tick()
    assert round(snap.tick_us, 3) == 7.5 and round(sampler.last_tick_us, 3) == 7.5


def test_compute_processes_carry_name_memory_and_parents_and_are_looked_up_once() -> None:
    lib = FakePynvml([FakeGpu(processes=[(4242, 20_480)])])
    procs = Processes({4242: ("python3", (4200, 1))})
    clock = FakeClock()
    sampler = Sampler(Nvml(lib), clock, processes=procs)
    p = sampler.tick().samples[0].processes[0]
    assert (p.pid, p.name, p.used_mib, p.ancestors) == (4242, "python3", 20_480, (4200, 1))
    assert procs.kept == {4242}
    lib.gpus[0].processes = []
    clock.advance(1)
    assert sampler.tick().samples[0].processes == ()
    assert procs.kept == set()  # the pid left the GPU: forgotten, in case it is reused


def test_a_closed_sampler_shuts_nvml_down() -> None:
    sampler, lib, _ = make()
    sampler.tick()
    sampler.close()
    assert lib.calls["nvmlShutdown"] == 1


def test_the_local_process_table_names_this_process() -> None:
    import os

    from cockpit.telemetry.processes import LocalProcesses

    table = LocalProcesses()
    name, ancestors = table.describe(os.getpid())
    assert name and ancestors[0] == os.getppid()
    assert table.describe(2**22 + 12345) == (None, ())


def test_ticks_landing_a_little_late_still_get_the_slow_lane_every_five_seconds() -> None:
    sampler, _, clock = make()
    slow_at = []
    for i in range(21):
        clock.set(1_795_000_000.0 + (0 if i == 0 else i + 0.1))  # the timer fires 0.1 s late
        if sampler.tick().slow:
            slow_at.append(i)
    assert slow_at == [0, 5, 10, 15, 20]


def test_after_a_long_pause_the_slow_lane_runs_once_then_keeps_its_cadence() -> None:
    sampler, _, clock = make()
    sampler.tick()
    clock.advance(63)  # the panel was hidden: nothing ticked
    assert sampler.tick().slow
    clock.advance(1)
    assert not sampler.tick().slow
    clock.advance(1)
    assert sampler.tick().slow  # the grid point 65 s after the first tick


def test_while_the_gpus_idle_the_slow_lane_waits_longer_and_reads_at_once_when_they_get_busy() -> None:
    gpu = FakeGpu(util_gpu=0)
    sampler, _lib, clock = make([gpu], slow_every_s=10.0, idle_slow_every_s=30.0)
    slow_ticks = []
    for second in range(76):
        if second == 64:
            gpu.util_gpu = 88  # a bench starts
        if sampler.tick().slow:
            slow_ticks.append(second)
        clock.advance(1)
    # idle: the first tick, then every 30 s (not every 10 s); seen busy at 64 s: the next tick, then
    # every 10 s
    assert slow_ticks == [0, 30, 60, 65, 75]
    busy, _busy_lib, busy_clock = make([FakeGpu(util_gpu=0, processes=[(4242, 900)])], slow_every_s=10.0,
                                      idle_slow_every_s=30.0)
    ticks = []
    for second in range(21):  # a compute process on the card counts as busy, at 0 % utilisation
        if busy.tick().slow:
            ticks.append(second)
        busy_clock.advance(1)
    assert ticks == [0, 10, 20]
