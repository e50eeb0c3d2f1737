"""A time the card cannot reach is refused, never printed as a speedup: a per-shape cache read on an
H100 as 0.0008 ms for 512 MB (702,407 GB/s, "20,967 % of the HBM peak"); real kernels' times pass."""

from __future__ import annotations

import json
from pathlib import Path

from cockpit.analysis.speed_of_light import impossible
from cockpit.gates.bench.gate import refusals
from cockpit.gates.bench.measured import read_measured
from cockpit.hardware.peaks import peak_for

H100 = "NVIDIA H100 80GB HBM3"
HALF_GIB = float(2**29)
FIXTURES = Path(__file__).parent / "fixtures" / "gpu"


def copy_row(config: str, nbytes: float, cached_ms: float, ours_ms: float) -> dict[str, object]:
    """A copy on the H100 as the issue measured it: a per-shape cache and an honest kernel."""
    return {"config": config, "bytes": nbytes, "flops": None, "dtype": "fp32",
            "impl": {"cached": {"median_ms": cached_ms}, "ours": {"median_ms": ours_ms},
                     "torch": {"median_ms": 0.0}}}


def test_a_per_shape_cache_is_refused_in_one_line_that_says_why() -> None:
    # 702,407 GB/s over 512 MiB is 0.000764 ms; the HBM3 peak needs 0.160 ms
    hit = impossible("cached", "N=134217728", 0.000764, peak_for(H100), HALF_GIB, None, "fp32")
    assert hit is not None
    assert hit.line("cached") == ("cached: 0.000764 ms at N=134217728 is about 210x faster than 512 MB can "
                                  "move at 3.35 TB/s: a cached or skipped result?")


def test_the_bench_refuses_only_the_candidates_that_beat_the_card() -> None:
    data = {"device": H100, "candidates": ["cached", "ours"],
            "rows": [copy_row("N=134217728", HALF_GIB, 0.000764, 0.171),
                     copy_row("N=33554432", HALF_GIB / 4, 0.0002, 0.043)]}
    refused = refusals(read_measured(data))
    assert [(r.impl, r.config) for r in refused] == [("cached", "N=134217728"), ("cached", "N=33554432")]
    # ours at 0.171 ms moves 3.1 TB/s (93 % of the peak): a real kernel; a reference is never judged
    assert all(r.impl == "cached" for r in refused)


def test_a_kernel_at_the_peak_or_served_by_l2_passes_and_an_unknown_card_refuses_nothing() -> None:
    floor_ms = HALF_GIB / 3.35e12 * 1e3
    assert impossible("ours", "c", floor_ms, peak_for(H100), HALF_GIB, None, "fp32") is None
    assert impossible("ours", "c", floor_ms / 1.9, peak_for(H100), HALF_GIB, None, "fp32") is None  # L2
    assert impossible("ours", "c", floor_ms / 2.1, peak_for(H100), HALF_GIB, None, "fp32") is not None
    assert impossible("ours", "c", 1e-6, peak_for("Some Future GPU"), HALF_GIB, None, "fp32") is None


def test_the_recorded_h100_attention_bench_refuses_nothing() -> None:
    """Real times on a real H100 (tests/fixtures/gpu/h100): ours reaches ~300-600 TFLOP/s of fp16's 989."""
    result = json.loads((FIXTURES / "h100" / "gate-bench.json").read_text())["result"]
    assert result["device"] == H100 and any(r.get("flops") for r in result["rows"])
    assert refusals(read_measured({"device": result["device"], "rows": result["rows"]})) == []
    best = max(r["flops"] / (r["impl"]["ours"]["median_ms"] * 1e-3) / 1e12 for r in result["rows"])
    assert 100 < best < 989.4  # the refusal sits far above what a real kernel reaches


def test_a_bench_whose_candidate_beats_the_memory_system_fails_and_decides_nothing(tmp_path: Path) -> None:
    """Through the gate, as a harness that timed a per-shape cache hands it back: one line, never a keep."""
    from tests.test_structured_result import gate, printer

    doc = {"cockpit_result": 1, "gate": "bench", "workload": "copy", "device": H100, "baseline": "torch",
           "rows": [{"config": "N=134217728 fp32", "ours_ms": 0.000764, "ref_ms": {"torch": 0.171},
                     "bytes": HALF_GIB, "dtype": "fp32"}]}
    report = gate(tmp_path, "bench", printer(doc))
    assert report["status"] == "fail" and report["exit"] == 1
    assert str(report["summary"]).startswith("ours: 0.000764 ms at N=134217728 fp32 is about 210x faster "
                                             "than 512 MB can move at 3.35 TB/s: a cached or skipped result?")
    result = report["result"]
    assert isinstance(result, dict) and result["keep"]["action"] == "revert"
    assert "cached or skipped" in result["keep"]["summary"]


def test_a_call_that_put_no_work_on_the_gpu_reads_0_ms_and_is_refused_too() -> None:
    # device time: a cached result's events enclose nothing, and read 0
    hit = impossible("ours", "M=16384 N=8192", 0.0, peak_for(H100), 2.0 * 16384 * 8192 * 4, None, None)
    assert hit is not None
    assert hit.line("cached") == ("cached: 0 ms at M=16384 N=8192, where 1 GB can move at 3.35 TB/s takes "
                                  "0.3205 ms: a cached or skipped result?")
