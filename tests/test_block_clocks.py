"""The bench gate's second question: did ours and the baseline run at comparable clocks? Each
implementation's clock is read from the NVML samples inside its timed blocks.

Probe results here are built in the probe's own JSON shape, one config per second with a block
of ours then a block of SDPA, sampled every 50 ms as the probe samples."""

from __future__ import annotations

from typing import Any

from cockpit.before_workloads import bench_probe
from cockpit.config import Thresholds
from cockpit.gates.bench.validity import BenchValidity
from cockpit.gates.bench.validity_rules import judge_probe_window
from cockpit.telemetry.block_clocks import Block, compare_clocks, samples_in_blocks
from cockpit.telemetry.sample import GpuSample

T0 = 1_795_000_000.0
UUID = "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20"
CAP = 0x4


def words(verdict: dict) -> str:
    """The verdict as the bench summary says it, read back as the journal holds it."""
    read = BenchValidity.from_json(verdict)
    assert read is not None
    return read.words()


def run(ours: tuple[int, int], sdpa: tuple[int, int], configs: int = 8,
        big_from: int | None = None, big: tuple[tuple[int, int], tuple[int, int]] | None = None
        ) -> dict[str, Any]:
    """A bench of `configs` configs: ours' blocks at (SM MHz, clock-event mask) `ours`, SDPA's at
    `sdpa`; from config `big_from` on, `big` gives (ours, sdpa) instead. Written as the attention
    probe wrote it before workloads, read as the bench gate reads its file."""
    rows, samples = [], []
    for c in range(configs):
        start = T0 + c
        o, s = big if big is not None and big_from is not None and c >= big_from else (ours, sdpa)
        blocks = [{"impl": "ours", "t0": start, "t1": start + 0.45, "calls": 100},
                  {"impl": "sdpa", "t0": start + 0.5, "t1": start + 0.95, "calls": 100}]
        rows.append({"config": f"B4 H16 S{1024 * (c + 1)} D64 fp16 full", "impl": {}, "blocks": blocks})
        for i in range(20):
            t = start + i * 0.05 + 0.01
            clock, mask = o if i < 10 else s
            samples.append({"t": t, "util": 100, "sm_clock": clock, "max_sm_clock": 1980, "throttle": mask,
                            "temp": 60, "power_w": 650.0, "pids": [[4242, 2000]]})
    return bench_probe({"started": T0, "finished": T0 + configs, "pid": 4242, "rows": rows,
                        "gpu_samples": samples,
                        "gpu": {"uuid": UUID, "nvml_index": 1, "nvml_uuid": UUID, "name": "NVIDIA H100 80GB HBM3"}})


def test_ours_and_sdpa_at_the_same_clock_are_comparable_and_the_clocks_are_shown() -> None:
    v = judge_probe_window(run((1980, 0), (1980, 0)))
    assert v["valid"] and v["verdict"] == "comparable"
    assert v["clocks"] == {"ours": {"samples": 72, "median_mhz": 1980.0, "power_cap_fraction": 0.0},
                           "sdpa": {"samples": 72, "median_mhz": 1980.0, "power_cap_fraction": 0.0}}
    assert v["gpu"] == {"index": 1, "uuid": UUID, "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": None}
    assert ("ours ran at +0.0% of SDPA's SM clock (1980 vs 1980 MHz, median over 8 configs): comparable "
            "(within 5%)") in v["notes"]
    assert v["config_clocks"]["B4 H16 S1024 D64 fp16 full"] == {"ours": 1980.0, "sdpa": 1980.0}
    assert words(v) == "comparable (SM clock ours 1980, SDPA 1980 MHz)"


def test_a_baseline_slower_at_its_own_power_cap_is_shown_not_suspect() -> None:
    # An H100 under cuDNN sits at its 700 W cap around 1245 MHz; a lighter kernel keeps its boost.
    v = judge_probe_window(run((1980, 0), (1245, CAP)))
    assert v["valid"]
    [sdpa] = [c for c in v["comparisons"] if c["baseline"] == "sdpa"]
    assert sdpa["material"] and sdpa["explained_by_cap"] and sdpa["difference"] == 0.5904
    assert sdpa["line"] == ("ours ran at +59.0% of SDPA's SM clock (1980 vs 1245 MHz, median over 8 configs): "
                            "SDPA sat at its power cap in 100% of its samples there, each at its own capped "
                            "clock (shown, not suspect)")
    assert v["clocks"]["sdpa"]["power_cap_fraction"] == 1.0


def test_clocks_apart_with_no_power_cap_to_explain_them_make_the_bench_suspect() -> None:
    # SDPA's blocks ran 10 % slower with no clock event at all (clocks locked by someone, a
    # neighbour's load NVML cannot show): ours and SDPA were not measured under the same conditions.
    v = judge_probe_window(run((1980, 0), (1785, 0)))
    assert not v["valid"] and v["verdict"] == "suspect"
    assert v["reasons"] == ["ours ran at +10.9% of SDPA's SM clock (1980 vs 1785 MHz, median over 8 configs): "
                            "over 5%, and the power cap does not explain it"]
    assert words(v).startswith("SUSPECT: ours ran at +10.9% of SDPA's SM clock")
    # a looser threshold accepts it
    assert judge_probe_window(run((1980, 0), (1785, 0)), Thresholds(clock_difference=0.15))["valid"]


def test_the_comparison_is_per_config_so_a_mix_of_big_capped_configs_does_not_skew_it() -> None:
    # From config 3 on both are capped at 1500 MHz; ours would look slower over the whole run if
    # it spent longer there, but config by config the two ran at the same clock.
    data = run((1980, 0), (1980, 0), configs=8, big_from=3, big=((1500, CAP), (1500, CAP)))
    inside = samples_in_blocks([Block(r["config"], b["impl"], b["t0"], b["t1"])
                                for r in data["rows"] for b in r["blocks"]],
                               [GpuSample(0, s["t"], util_gpu=100, sm_clock_mhz=s["sm_clock"],
                                          throttle_mask=s["throttle"]) for s in data["gpu_samples"]])
    c = compare_clocks(inside, "sdpa", 0.05)
    assert c.configs == 8 and c.difference == 0.0 and not c.material


def test_too_few_configs_with_samples_are_not_compared_and_say_so() -> None:
    v = judge_probe_window(run((1980, 0), (1500, 0), configs=2))
    assert v["valid"]
    assert "clocks vs SDPA not compared: 2 configs had samples of both (needs 3)" in v["notes"]


def test_strict_mode_lets_the_power_cap_explain_clocks_only_when_the_cap_is_tolerated() -> None:
    strict = judge_probe_window(run((1980, 0), (1245, CAP)), Thresholds(validity="strict"))
    assert not strict["valid"]
    assert any(r.endswith("the power cap does not explain it") for r in strict["reasons"])
    tolerant = judge_probe_window(run((1980, 0), (1245, CAP)),
                                  Thresholds(validity="strict", tolerated_clock_events=("power cap",)))
    assert not any("SM clock (" in r for r in tolerant["reasons"])


def test_the_watch_is_of_the_gpu_the_probe_named_by_uuid() -> None:
    data = run((1980, 0), (1980, 0))
    data["gpu"]["nvml_uuid"] = data["gpu"]["uuid"] = "GPU-00000000-0000-0000-0000-0000000000ff"
    v = judge_probe_window(data)
    assert v["valid"] and v["evidence"]["gpus"] == [{"gpu": 1, "uuid": "GPU-00000000-0000-0000-0000-0000000000ff"}]


def test_an_unwatched_run_is_suspect_and_says_why() -> None:
    data = run((1980, 0), (1980, 0))
    data["gpu_samples"] = []
    data["gpu_watch_error"] = "LookupError: NVML does not know the GPU torch runs on"
    v = judge_probe_window(data)
    assert not v["valid"] and v["verdict"] == "unwatched"
    assert v["reasons"] == ["the GPU was not watched (LookupError: NVML does not know the GPU torch runs on)"]
