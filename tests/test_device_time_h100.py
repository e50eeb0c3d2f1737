"""Issue 32's visit to two H100s (2026-11-25, tests/fixtures/gpu/device-time, recorded by
bench/device/visit_issue32.sh): the probe's own results with every NVML sample it took (every
20 ms) and the gates' verdicts. Device time puts every attention config in the headline; two
benches back to back agree; the probe kept only blocks its rule calls clean; a per-shape cache is
refused and a crash at one shape is one line with the rows before it kept."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from cockpit.analysis.block_validity import BlockRules, around, block_fault, reference_clock
from cockpit.analysis.keep import rows_geomean
from cockpit.gates.bench.measured import read_measured
from cockpit.gates.bench.validity_rules import probe_validity

HERE = Path(__file__).parent / "fixtures" / "gpu" / "device-time"


def load(name: str) -> Any:
    return json.loads(gzip.decompress((HERE / name).read_bytes()))


def test_every_attention_config_is_in_the_headline_and_two_runs_back_to_back_agree() -> None:
    first, second = load("attention-1.gate.json.gz"), load("attention-2.gate.json.gz")
    a = rows_geomean(first["result"]["rows"], "speedup_vs_sdpa")
    b = rows_geomean(second["result"]["rows"], "speedup_vs_sdpa")
    assert a is not None and b is not None
    assert a[1] == b[1] == 56  # before device time, 24 of the 56 were left out as launch-bound
    assert abs(a[0] / b[0] - 1) < 0.01  # 0.7051x then 0.7037x: 0.2 % apart
    assert first["summary"].startswith("0.71x [0.70, 0.71] vs SDPA (HIGH) over 56 configs")


def test_the_small_shapes_are_timed_on_the_device_and_their_eager_cost_is_a_note() -> None:
    row = next(r for r in load("attention-1.gate.json.gz")["result"]["rows"]
               if r["config"] == "B4 H16 S32 D64 fp16 full")
    sdpa = row["impl"]["sdpa"]
    assert sdpa["median_ms"] * 1e3 == pytest.approx(6.94, abs=0.01)  # on the device
    assert sdpa["eager_ms"] > 2 * sdpa["median_ms"] and sdpa["host_bound"] is True  # what eager pays
    assert row["speedup_vs_sdpa"] == pytest.approx(1.133, abs=0.001)  # ours against SDPA's kernel
    assert "SDPA host-bound in eager use at 23 configs" in load("attention-1.gate.json.gz")["summary"]


def test_every_block_the_probe_kept_is_clean_by_its_own_rule_on_its_own_samples() -> None:
    data = load("attention-1.probe.json.gz")
    samples = data["gpu_samples"]
    assert len(samples) == 7703 and data["block_check"]["clock_fraction"] == 0.85
    reference = reference_clock(samples, data["gpu"]["max_sm_clock"])
    blocks = [b for row in data["rows"] for b in row["blocks"]]
    assert len(blocks) > 1000
    assert all(block_fault(around(samples, b["t0"], b["t1"]), reference, BlockRules()) is None for b in blocks)
    # the card sat at its power cap for a quarter of the run and never slowed a block
    assert sum(c.get("remeasured", 0) for r in data["rows"] for c in r["impl"].values()) == 0
    verdict = probe_validity(read_measured(data))
    assert verdict.valid and verdict.verdict == "comparable"


def test_a_per_shape_cache_is_refused_and_a_crash_at_one_shape_is_one_line() -> None:
    cached = load("cached.gate.json.gz")
    assert cached["status"] == "fail"
    assert cached["summary"].startswith("ours: 0.000356 ms at M=16384 N=4096 is about 450x faster than "
                                        "512 MB can move at 3.35 TB/s: a cached or skipped result?")
    crash = load("crash.gate.json.gz")
    assert crash["status"] == "fail"
    assert crash["summary"].startswith("ours crashed at M=4096 N=8192: AcceleratorError: CUDA error: an "
                                       "illegal memory access was encountered")
    assert [r["config"] for r in crash["result"]["rows"]] == ["M=4096 N=1024", "M=4096 N=4096"]
    probe = load("crash.probe.json.gz")
    assert probe["crash"] == {"config": "M=4096 N=8192", "impl": "ours",
                              "error": "AcceleratorError: CUDA error: an illegal memory access was encountered"}


def test_triton_kernels_no_one_here_tuned_keep_every_config_within_a_percent() -> None:
    for name, baseline in (("liger.gate.json.gz", "torch.softmax"), ("layernorm.gate.json.gz", "torch.layer_norm")):
        rows = load(name)["result"]["rows"]
        assert [r["N"] for r in rows] == [1024, 2048, 4096, 8192]
        assert rows_geomean(rows, f"speedup_vs_{baseline}") is not None
        for row in rows:
            for cell in row["impl"].values():
                lo, hi = cell["ci_ms"]
                assert max(hi / cell["median_ms"] - 1, 1 - lo / cell["median_ms"]) <= 0.0097


def test_a_card_that_falls_off_the_bus_mid_run_is_named_in_the_verdict() -> None:
    data = load("crash.probe.json.gz")
    last = data["gpu_samples"][-1]
    data["gpu_samples"].append({"t": last["t"] + 0.02, "util": None, "sm_clock": None,
                                "max_sm_clock": last["max_sm_clock"], "throttle": None, "temp": None,
                                "power_w": None, "pids": [], "lost": True})  # as GpuWatch writes it
    data["finished"] = last["t"] + 0.05
    verdict = probe_validity(read_measured(data))
    assert not verdict.valid
    assert any("fell off the bus" in r for r in verdict.reasons)
