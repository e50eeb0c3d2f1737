"""One reader for every bench result: a schema-2 result names its workload, baseline and labels;
a result from before the schema (every recorded journal in this repository) reads as the
attention kernel against SDPA, with the numbers it always had; and whatever else a journal holds
is read as far as it goes, never raised on."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from cockpit.analysis.stats import geomean
from cockpit.before_workloads import WORKLOAD as ATTENTION
from cockpit.config import Config
from cockpit.gates.bench.gate import judge_bench
from cockpit.gates.bench.measured import read_measured
from cockpit.gates.bench.result import read_bench_result
from cockpit.gates.gate import result_json

ROOT = Path(__file__).parent.parent
RECORDED = sorted([*(ROOT / "examples" / "sessions").glob("*/journal.jsonl"),
                   *(ROOT / "tests" / "fixtures" / "sessions").glob("*/sessions/*/journal.jsonl")])
GATE_RECORDINGS = sorted((ROOT / "tests" / "fixtures" / "gpu").glob("*/gate-bench*.json"))


def softmax_result(scale: float = 1.0, valid: bool = True) -> dict[str, Any]:
    """A row softmax's bench as the generic gate writes it: ours against torch.softmax (the
    baseline) and torch.compile; `scale` makes ours that much faster."""
    rows = []
    for n, (ours, eager, compiled) in {1024: (0.020, 0.025, 0.018), 4096: (0.060, 0.080, 0.055),
                                      16384: (0.250, 0.300, 0.240)}.items():
        ours /= scale
        size = 2 * 4096 * n * 2

        def cell(ms: float, size: int = size) -> dict[str, Any]:
            return {"median_ms": ms, "p20_ms": ms * 0.98, "p80_ms": ms * 1.02, "samples": 200,
                    "tflops": None, "gbps": size / (ms * 1e-3) / 1e9, "pct_peak": 40.0}

        rows.append({"config": f"M=4096 N={n} fp16", "shape": {"M": 4096, "N": n, "dtype": "fp16"},
                     "flops": None, "bytes": size,
                     "impl": {"ours": cell(ours), "torch.softmax": cell(eager),
                              "torch.compile": cell(compiled)},
                     "speedup_vs_torch.softmax": eager / ours, "speedup_vs_torch.compile": compiled / ours,
                     "blocks": []})
    vs = {ref: geomean([r[f"speedup_vs_{ref}"] for r in rows]) for ref in ("torch.softmax", "torch.compile")}
    return {"schema": 2, "workload": "row-softmax", "source": "workloads/softmax/softmax.py",
            "ours": "ours", "candidates": ["ours"], "baseline": "torch.softmax",
            "labels": {"ours": "ours", "torch.softmax": "torch.softmax", "torch.compile": "torch.compile"},
            "rows": rows, "device": "NVIDIA H100 80GB HBM3", "geomean_speedup": vs["torch.softmax"],
            "configs": 3, "vs": vs, "level": "MEDIUM" if vs["torch.softmax"] >= 1 else "HIGH",
            "next_step": "faster than PyTorch: check correctness on every config",
            "tool": "ncu", "profile_first": False,
            "validity": {"valid": valid, "reasons": [] if valid else ["power cap"], "notes": []},
            "keep": {"action": "baseline", "summary": "first valid measurement of these configs"},
            "record": "sessions/x/results/bench-1.json"}


def recorded_bench_results() -> list[tuple[str, dict[str, Any]]]:
    """Every bench gate's result in the recorded journals that measured a speedup before results
    had a schema (a run that died first left `{}`: no result, see the garbage below)."""
    found = []
    for journal in RECORDED:
        for line in journal.read_text().splitlines():
            event = json.loads(line)
            result = event.get("result")
            if (event.get("type") == "gate_finished" and event.get("gate") == "bench"
                    and "geomean_speedup" in result and "schema" not in result):
                found.append((journal.parent.name, result))
    return found


def test_a_schema_2_result_names_its_workload_baseline_and_references() -> None:
    bench = read_bench_result(softmax_result())
    assert bench is not None
    assert (bench.schema, bench.workload, bench.source) == (2, "row-softmax", "workloads/softmax/softmax.py")
    assert (bench.ours, bench.candidates, bench.baseline) == ("ours", ("ours",), "torch.softmax")
    assert bench.baseline_label == "torch.softmax" and bench.vs_label("torch.compile") == "vs torch.compile"
    assert bench.references == ("torch.softmax", "torch.compile")
    assert bench.speedup == pytest.approx(2 ** (1 / 3)) and bench.configs == 3
    assert list(bench.vs) == ["torch.softmax", "torch.compile"]
    # ours beats eager torch but not the compiled kernel: that is the reference to chase
    assert bench.hardest == ("torch.compile", pytest.approx(0.9252, abs=1e-4))
    assert bench.valid and bench.level == "MEDIUM" and bench.device == "NVIDIA H100 80GB HBM3"
    first = bench.rows[0]
    assert first.config == "M=4096 N=1024 fp16" and first.flops is None and first.bytes == 2 * 4096 * 1024 * 2
    assert first.impl["ours"].tflops is None and first.impl["ours"].gbps == pytest.approx(838.9, abs=0.1)
    assert first.speedups == {"torch.softmax": pytest.approx(1.25), "torch.compile": pytest.approx(0.9)}
    assert bench.ours_ms == (("M=4096 N=1024 fp16", 0.020), ("M=4096 N=4096 fp16", 0.060),
                             ("M=4096 N=16384 fp16", 0.250))


def test_a_bench_judged_now_is_written_in_the_generic_schema_alone() -> None:
    # A probe that names no `compared` list and times a reference it calls "flash": that reference
    # is shown as the probe names it, ours is compared with the baseline alone, and nothing of the
    # first workload's (its labels, its fallback reference, its geomean_vs_flash) is written.
    rows = softmax_result()["rows"]
    for row in rows:
        row["impl"]["flash"] = row["impl"]["torch.compile"]
        row["speedup_vs_flash"] = row["speedup_vs_torch.compile"]
    data = {"workload": "row-softmax", "baseline": "torch.softmax", "candidates": ["ours"],
            "labels": {"ours": "ours", "torch.softmax": "torch.softmax"}, "rows": rows,
            "device": "NVIDIA H100 80GB HBM3"}
    verdict = judge_bench(read_measured(data), None, None, Config().thresholds)
    written = json.dumps(result_json(verdict))
    assert not any(word in written for word in ("geomean_vs_flash", "FLASH", "SDPA", "cuDNN", ATTENTION))
    assert verdict.summary == "1.26x vs torch.softmax (ahead of the baseline) over 3 configs; SUSPECT: no validity verdict"
    assert result_json(verdict)["labels"] == {"ours": "ours", "torch.softmax": "torch.softmax",
                                              "torch.compile": "torch.compile", "flash": "flash"}


def test_a_narrow_table_keeps_the_baseline_and_the_references_ours_does_worst_against() -> None:
    result = softmax_result()
    for row in result["rows"]:
        for ref, ms in (("triton", 0.5), ("cub", 0.01)):
            row["impl"][ref] = {"median_ms": ms}
            row[f"speedup_vs_{ref}"] = ms / row["impl"]["ours"]["median_ms"]
    result["vs"] = {**result["vs"], "triton": 9.0, "cub": 0.3}
    result["labels"] = {**result["labels"], "triton": "Triton", "cub": "CUB"}
    bench = read_bench_result(result)
    assert bench is not None
    assert bench.hardest == ("cub", 0.3)
    assert bench.compared(3) == ("torch.softmax", "torch.compile", "cub")  # not the 9x one
    assert bench.compared(1) == ("torch.softmax",)
    assert bench.shown(3) == ("torch.softmax", "torch.compile", "cub")


@pytest.mark.parametrize("session, result", recorded_bench_results(),
                         ids=[s[:13] for s, _ in recorded_bench_results()])
def test_every_recorded_bench_reads_as_the_attention_kernel_against_sdpa(session: str,
                                                                        result: dict[str, Any]) -> None:
    assert "schema" not in result
    bench = read_bench_result(result)
    assert bench is not None
    assert (bench.schema, bench.workload, bench.baseline, bench.ours) == (1, ATTENTION, "sdpa", "ours")
    assert (bench.baseline_label, bench.vs_label("flash")) == ("SDPA", "vs FLASH")
    assert bench.label("cudnn") == "cuDNN" and bench.label("efficient") == "EFFICIENT"
    assert bench.speedup == result["geomean_speedup"]
    assert bench.vs["sdpa"] == result["geomean_speedup"]
    flash = result.get("geomean_vs_flash") or geomean([r["speedup_vs_flash"] for r in result["rows"]])
    assert bench.vs["flash"] == pytest.approx(flash, rel=1e-12)
    assert list(bench.vs) == ["sdpa", "flash"]
    assert bench.references == ("sdpa", "flash", "cudnn", "efficient")
    assert len(bench.rows) == len(result["rows"]) == bench.configs
    assert bench.valid is (result["validity"]["valid"] is True)
    assert bench.level == result["level"] and bench.device == result["device"]
    assert bench.rows[0].median_ms("sdpa") == result["rows"][0]["impl"]["sdpa"]["median_ms"]


def test_the_recorded_gate_results_read_too() -> None:
    recordings = [json.loads(p.read_text()) for p in GATE_RECORDINGS]
    results = [r["result"] for r in recordings if "result" in r]
    assert len(results) >= 4
    for result in results:
        bench = read_bench_result(result)
        assert bench is not None and bench.workload == ATTENTION
        assert bench.speedup == result["geomean_speedup"]



def test_an_old_error_result_with_rows_but_no_speedup_still_reads() -> None:
    bench = read_bench_result({"rows": [{"config": "B1", "impl": {"ours": {"median_ms": 1.0}}}],
                               "validity": {"valid": False}})
    assert bench is not None and bench.speedup is None and bench.vs == {} and bench.configs is None
    assert bench.hardest is None and not bench.valid and bench.ours_ms == (("B1", 1.0),)


@pytest.mark.parametrize("garbage", [
    None, 3, "rows", [], {}, {"gpu": "x"},                   # not a bench result: it died first
    {"schema": 3, "rows": []}, {"schema": "2", "rows": []},  # a schema this cockpit does not know
    {"schema": True, "rows": []},
    {"schema": 2, "rows": [], "workload": "w"},              # schema 2 without its baseline
    {"schema": 2, "rows": [], "baseline": "b"},
    {"schema": 2, "rows": [], "workload": 7, "baseline": "b"},
])
def test_what_is_not_a_readable_bench_result_is_none(garbage: Any) -> None:
    assert read_bench_result(garbage) is None


def test_garbage_inside_a_result_is_left_out_never_raised_on() -> None:
    result = softmax_result()
    result["rows"] = [
        "not a row", None, {"impl": {}},                       # skipped: no config
        {"config": 5, "impl": {}},
        {"config": "M=1 N=1 fp16", "impl": {"ours": {"median_ms": math.nan}, "torch.softmax": [],
                                             "torch.compile": {"median_ms": True}, 7: {"median_ms": 1.0}},
         "speedup_vs_torch.softmax": "fast", "speedup_vs_": 2.0, "speedup_vs_torch.compile": -1.0},
        {"config": "M=2 N=2 fp16", "impl": {"ours": {"median_ms": 2.0, "samples": "many", "gbps": math.inf},
                                             "torch.softmax": {"median_ms": 3.0}},
         "speedup_vs_torch.softmax": 1.5, "flops": "lots"},
    ]
    result.update(geomean_speedup=math.inf, vs={"torch.softmax": "x", "torch.compile": 0.8, 3: 1.0},
                  labels=["not", "a", "dict"], candidates="ours", configs=True, level=4, device={},
                  validity=[True], keep="yes")
    bench = read_bench_result(result)
    assert bench is not None
    assert [r.config for r in bench.rows] == ["M=1 N=1 fp16", "M=2 N=2 fp16"]
    assert bench.rows[0].impl == {} and bench.rows[0].speedups == {}
    assert bench.rows[1].impl["ours"].samples is None and bench.rows[1].impl["ours"].gbps is None
    assert bench.rows[1].flops is None and bench.rows[1].speedups == {"torch.softmax": 1.5}
    assert bench.speedup is None and bench.vs == {"torch.compile": 0.8}  # no usable baseline figure
    assert bench.candidates == ("ours",) and bench.labels == {} and bench.baseline_label == "torch.softmax"
    assert bench.configs is None and bench.level is None and bench.device is None
    assert bench.validity is None and not bench.valid and bench.keep is None
    assert bench.references == ("torch.softmax", "torch.compile")


def test_the_headline_speedup_leads_the_bench_pane_in_words_of_urgency_and_says_when_it_does_not_count() -> None:
    """The H200's recorded attention bench: 0.65x vs SDPA, SUSPECT (power cap): the number leads the
    pane, marked not valid, and HIGH is said as what it asks (not a grade of speed)."""
    import json
    from pathlib import Path

    from rich.console import Console
    from rich.text import Text

    from cockpit.gates.catalog import read_result
    from cockpit.ui.widgets.gate_results import headline_line, render_result

    def headline(raw: dict[str, object]) -> Text | None:
        read = read_bench_result(raw)
        lead = read.headline() if read is not None else None
        return headline_line(lead) if lead is not None else None

    result = json.loads((Path(__file__).parent / "fixtures" / "gpu" / "gates" / "gate-bench.json").read_text())["result"]
    lead = headline(result)
    assert lead is not None
    assert lead.plain.startswith(" 0.65x  vs SDPA  NOT VALID: a number to re-measure, not a result · behind the "
                                 "baseline: one fix at a time · 56 configs")
    assert "yellow" in str(lead.spans[0].style)
    valid = {**result, "validity": {**result["validity"], "valid": True}}
    assert "red" in str(headline(valid).spans[0].style)  # counts, and under 1.0  # type: ignore[union-attr]
    console = Console(width=100, record=True, color_system=None)
    console.print(render_result("bench", read_result("bench", result)))
    assert console.export_text().lstrip().startswith("0.65x  vs SDPA")
