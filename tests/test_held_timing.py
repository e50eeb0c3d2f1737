"""The bench's timing loops on a simulated GPU timeline, watched through the H200's recorded NVML
samples (tests/fixtures/gpu/gates-blocks: real SW thermal and HW slowdown episodes). A block the
card slowed is dropped and timed again after its recovery wait; one that never gets clean leaves
its cell marked unclean; a batch the spin did not cover is kept out of the device time."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import pytest
import torch

from cockpit.analysis.block_validity import BlockRules
from cockpit.probes import batch_timing, block_watch, call_timing
from cockpit.probes.block_watch import BlockJudge

H200 = Path(__file__).parent / "fixtures" / "gpu" / "gates-blocks" / "probe-bench.json.gz"


class Gpu:
    """A GPU timeline in ms: calls advance it; the wall clock is `start` + its time."""

    def __init__(self, start: float) -> None:
        self.now_ms = 0.0
        self.start = start
        self.spin_covers = True
        self.event_ms = 0.0  # the front end's own time per event record (1.28 µs on the H200)

    @property
    def wall(self) -> float:
        return self.start + self.now_ms / 1e3


class Watch:
    """The recorded samples the watch would have taken by now."""

    def __init__(self, gpu: Gpu, samples: list[dict[str, Any]]) -> None:
        self.gpu_ = gpu
        self.recorded = samples
        self.error = None
        self.gpu = {"max_sm_clock": 1980}

    @property
    def samples(self) -> list[dict[str, Any]]:
        return [s for s in self.recorded if s["t"] <= self.gpu_.wall]


class Spin:
    def __init__(self, gpu: Gpu) -> None:
        self.gpu = gpu
        self.works = True

    def start(self, ms: float) -> Any:
        self.gpu.now_ms += ms
        return self

    def query(self) -> bool:
        return not self.gpu.spin_covers


@pytest.fixture
def h200(monkeypatch: pytest.MonkeyPatch) -> tuple[Gpu, Watch, float]:
    data = json.loads(gzip.decompress(H200.read_bytes()))
    gpu = Gpu(float(data["started"]))

    class Event:
        def __init__(self, enable_timing: bool = False) -> None:
            self.t = 0.0

        def record(self) -> None:
            gpu.now_ms += gpu.event_ms
            self.t = gpu.now_ms

        def elapsed_time(self, other: Event) -> float:
            return other.t - self.t

        def synchronize(self) -> None:
            pass

        def query(self) -> bool:  # this GPU runs each call as the host makes it: always done
            return True

    monkeypatch.setattr(torch.cuda, "Event", Event, raising=False)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)

    def sleep(seconds: float) -> None:  # a recovery wait passes on the card's timeline
        gpu.now_ms += seconds * 1e3

    monkeypatch.setattr(block_watch.time, "sleep", sleep)
    return gpu, Watch(gpu, data["gpu_samples"]), float(data["started"])


def calls(gpu: Gpu, ms: dict[str, float]) -> dict[str, Any]:
    def one(name: str) -> Any:
        def run(k: int) -> None:
            gpu.now_ms += ms[name]
        return run
    return {name: one(name) for name in ms}


def anchor(gpu: Gpu) -> Any:
    event = torch.cuda.Event(enable_timing=True)
    event.record()
    return event


def test_a_batched_config_in_a_thermal_episode_is_timed_again_once_the_card_recovers(h200) -> None:  # type: ignore[no-untyped-def]
    gpu, watch, _ = h200
    gpu.now_ms = 76_600.0  # 76.6 s into the recorded run: SW thermal slowdown until ~77.2 s
    judge = BlockJudge(watch, BlockRules())  # type: ignore[arg-type]
    judge.new_config()
    ms = {"ours": 0.010, "torch.softmax": 0.012}
    cells, spans = batch_timing.batch_cells(calls(gpu, ms), ms, {"ours": 100, "torch.softmax": 84}, 8, 5.0, 0,
                                            max_s=0.2, hold=Spin(gpu), judge=judge, anchor=anchor(gpu),
                                            anchor_t=gpu.wall)  # type: ignore[arg-type]
    assert cells["ours"]["median_ms"] == pytest.approx(0.010)
    assert cells["ours"]["remeasured"] >= 1 and "SW thermal slowdown" in cells["ours"]["remeasured_why"]
    assert all(c["clean"] for c in cells.values())
    assert cells["ours"]["eager_ms"] == pytest.approx(0.010) and cells["ours"]["host_bound"] is False
    # every kept block starts after the episode's last SW thermal sample (77.07 s) it could see
    assert spans and all(start.t / 1e3 > 77.07 for _, start, _, _ in spans)


def test_a_config_whose_blocks_never_get_clean_says_so_and_keeps_its_times(h200) -> None:  # type: ignore[no-untyped-def]
    gpu, watch, started = h200
    hot = next(s for s in watch.recorded if s["throttle"] & 0x20)
    watch.recorded = [{**hot, "t": started + k * 0.1} for k in range(2000)]  # that sample, all along
    gpu.now_ms = 1_000.0
    judge = BlockJudge(watch, BlockRules(budget=3))  # type: ignore[arg-type]
    judge.new_config()
    ms = {"ours": 0.5, "ref": 0.6}
    flush = type("Flush", (), {"zero_": lambda self: None})()
    cells, spans = call_timing.per_call_cells(calls(gpu, ms), flush, ms, 20, 2, 5.0, 0, 1, hold=Spin(gpu),
                                              judge=judge, anchor=anchor(gpu), anchor_t=gpu.wall)  # type: ignore[arg-type]
    assert any(not c["clean"] for c in cells.values())
    unclean = next(c for c in cells.values() if not c["clean"])
    assert unclean["unclean_why"].startswith("SW thermal slowdown in")
    assert unclean["median_ms"] == pytest.approx(0.5) or unclean["median_ms"] == pytest.approx(0.6)
    assert {impl for impl, *_ in spans} == {"ours", "ref"}  # its times are kept, with their block
    # the next config starts with the streak counted: one re-measure each from the third on
    judge.new_config()
    judge.gave_up = True
    judge.new_config()
    assert judge.streak == 2 and judge.spent() is False
    judge.attempts = 1
    assert judge.spent() is True


def test_a_batch_the_spin_did_not_cover_is_kept_out_and_the_batch_halved(h200) -> None:  # type: ignore[no-untyped-def]
    gpu, _, _ = h200
    gpu.now_ms = 10_000.0  # quiet: no slowdown 10 s in
    gpu.spin_covers = False
    ms = {"ours": 0.010}
    cells, _ = batch_timing.batch_cells(calls(gpu, ms), ms, {"ours": 100}, 8, 5.0, 0, max_s=0.05,
                                        hold=Spin(gpu), anchor=anchor(gpu), anchor_t=gpu.wall)  # type: ignore[arg-type]
    ours = cells["ours"]
    assert ours["held"] is False  # not one batch covered by the time cap: said, not hidden
    assert ours["expired_holds"] >= 3 and ours["calls_per_batch"] < 100  # halved after three
    assert ours["median_ms"] == pytest.approx(0.010)


def test_a_noisy_heavy_kernel_gets_more_blocks_until_its_median_is_pinned_to_a_percent(h200) -> None:  # type: ignore[no-untyped-def]
    gpu, _, _ = h200
    gpu.now_ms = 10_000.0
    spread = [0.50, 0.53, 0.47, 0.55, 0.45]  # ±10 % call to call, as cuDNN at its power cap read
    count = [0]

    def noisy(k: int) -> None:
        count[0] += 1
        gpu.now_ms += spread[count[0] % len(spread)]

    def steady(k: int) -> None:
        gpu.now_ms += 0.6

    flush = type("Flush", (), {"zero_": lambda self: None})()
    ms = {"cudnn": 0.5, "ours": 0.6}
    cells, _ = call_timing.per_call_cells({"cudnn": noisy, "ours": steady}, flush, ms, 30, 2, 5.0, 0, 1,
                                          hold=Spin(gpu), anchor=anchor(gpu), anchor_t=gpu.wall)  # type: ignore[arg-type]
    assert cells["ours"]["samples"] == 30  # steady: the planned blocks pinned it
    assert cells["cudnn"]["samples"] > 30
    lo, hi = cells["cudnn"]["ci_ms"]
    assert max(hi / cells["cudnn"]["median_ms"] - 1, 1 - lo / cells["cudnn"]["median_ms"]) <= 0.01


def test_a_group_queued_while_the_gpu_is_still_busy_needs_no_spin_and_one_it_caught_up_with_is_redone() -> None:
    from cockpit.probes.device_hold import Cover

    class Done:
        def __init__(self, pending: bool) -> None:
            self.pending = pending

        def query(self) -> bool:
            return not self.pending

    spins: list[float] = []

    class Spin_:
        works = True

        def __init__(self, runs_out: bool) -> None:
            self.runs_out = runs_out

        def start(self, ms: float) -> Done:
            spins.append(ms)
            return Done(not self.runs_out)

    cover = Cover(Spin_(runs_out=False), hold_ms=2.0)  # type: ignore[arg-type]
    cover.before(Done(pending=True))  # the settle calls still running
    assert cover.after() is True and spins == []
    cover.before(Done(pending=False))  # the GPU caught up: a spin first
    assert cover.after() is True and len(spins) == 1
    late = Cover(Spin_(runs_out=True), hold_ms=2.0)  # type: ignore[arg-type]
    late.before(None)
    assert late.after() is False and late.expired == 1 and late.hold_ms >= 4.0  # doubled
    late.before(Done(pending=False))
    assert late.after() is False and late.expired == 2
    slow_host = Cover(Spin_(runs_out=False), hold_ms=2.0)  # type: ignore[arg-type]
    busy = Done(pending=True)
    slow_host.before(busy)
    busy.pending = False  # the GPU finished the work ahead while the host was still queueing
    assert slow_host.after() is False and slow_host.spin_always
    before = len(spins)
    slow_host.before(Done(pending=True))  # busy again, but this host is slower: a spin all the same
    assert slow_host.after() is True and len(spins) == before + 1


def test_the_events_own_cost_is_taken_out_so_a_kernel_launched_twice_reads_half(h200) -> None:  # type: ignore[no-untyped-def]
    from cockpit.probes.timing_pieces import event_cost_ms

    gpu, _, _ = h200
    gpu.now_ms = 10_000.0
    gpu.event_ms = 0.00128  # measured: an empty event pair reads 1.28 µs on the H200
    assert event_cost_ms(Spin(gpu)) == pytest.approx(0.00128)
    assert event_cost_ms(None) == 0.0  # no spin kernel: the pairs would read the host's gaps
    gpu.spin_covers = False  # the GPU reached the pairs while the host was still queueing them
    assert event_cost_ms(Spin(gpu)) == 0.0
    gpu.spin_covers = True
    flush = type("Flush", (), {"zero_": lambda self: None})()
    kernel = 0.0562  # softmax at M=4096 N=4096 fp32 on the H200

    def once(k: int) -> None:
        gpu.now_ms += kernel

    def twice(k: int) -> None:
        gpu.now_ms += 2 * kernel

    ms = {"ours": 2 * kernel, "torch.softmax": kernel}
    runs = {"ours": twice, "torch.softmax": once}
    raw, _ = call_timing.per_call_cells(runs, flush, ms, 30, 2, 5.0, 0, 1, hold=Spin(gpu))  # type: ignore[arg-type]
    assert raw["torch.softmax"]["median_ms"] / raw["ours"]["median_ms"] == pytest.approx(0.5057, abs=1e-4)
    cells, _ = call_timing.per_call_cells(runs, flush, ms, 30, 2, 5.0, 0, 1, hold=Spin(gpu),  # type: ignore[arg-type]
                                          event_ms=event_cost_ms(Spin(gpu)))
    assert cells["torch.softmax"]["median_ms"] / cells["ours"]["median_ms"] == pytest.approx(0.5)
    assert cells["ours"]["event_ms"] == pytest.approx(0.00128)
    assert cells["ours"]["eager_ms"] == pytest.approx(2 * kernel)
    batched, _ = batch_timing.batch_cells(runs, ms, {"ours": 9, "torch.softmax": 18}, 8, 5.0, 0, max_s=0.2,
                                          hold=Spin(gpu), event_ms=0.00128)  # type: ignore[arg-type]
    assert batched["ours"]["median_ms"] == pytest.approx(2 * kernel)
    assert batched["torch.softmax"]["median_ms"] == pytest.approx(kernel)


def test_a_quiet_batched_config_stops_at_two_turns_and_a_wide_one_gets_extra_time(h200, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    gpu, _, _ = h200
    gpu.now_ms = 10_000.0
    monkeypatch.setattr(batch_timing.time, "perf_counter", lambda: gpu.now_ms / 1e3)  # the host keeps the GPU's time
    rng = random.Random(7)

    def wide(k: int) -> None:  # ±50 % call to call: a batch of 17 calls still spreads ±7 %
        gpu.now_ms += rng.uniform(0.030, 0.090)

    def steady(k: int) -> None:
        gpu.now_ms += 0.061

    ms = {"ours": 0.061, "sdpa": 0.060}
    cells, _ = batch_timing.batch_cells({"ours": steady, "sdpa": wide}, ms, {"ours": 17, "sdpa": 17}, 4, 5.0, 0,
                                        max_s=0.3, hold=Spin(gpu))  # type: ignore[arg-type]
    assert cells["ours"]["samples"] == 2 * batch_timing.BATCHES_PER_TURN and cells["ours"]["stop"].startswith("noise")
    capped = cells["sdpa"]
    assert capped["stop"].startswith("time cap 0.3 s reached") and capped["samples"] > cells["ours"]["samples"]
    lo, hi = capped["ci_ms"]
    assert hi / capped["median_ms"] - 1 > 0.01  # the cap left it wider than ±1 %
    more, _ = batch_timing.batch_cells({"sdpa": wide}, ms, {"sdpa": 17}, 4, 5.0, 0, max_s=0.3, extra_s=3.0,
                                       hold=Spin(gpu))  # type: ignore[arg-type]
    lo, hi = more["sdpa"]["ci_ms"]
    assert more["sdpa"]["samples"] > capped["samples"]
    assert max(hi / more["sdpa"]["median_ms"] - 1, 1 - lo / more["sdpa"]["median_ms"]) <= 0.01
