"""The bench headline is the kernel's: configs the probe found launch-bound (their time is the
launch, not the kernel) are reported apart and cannot move it, and the headline carries the
interval its configs' intervals give it. The rows are the H200 recording's, with the fast
configs marked and their speedups swung as the H100 saw them swing (2.5–3.4x)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from cockpit.config import Config
from cockpit.gates.bench import judge_bench

FIX = Path(__file__).parent / "fixtures" / "gpu" / "gates-blocks" / "gate-bench.json"


def _rows(swing: float) -> list[dict]:
    rows = copy.deepcopy(json.loads(FIX.read_text())["result"]["rows"])
    fastest = sorted(rows, key=lambda r: r["impl"]["ours"]["median_ms"])[:3]
    for row in rows:
        for key in [k for k in row if k.startswith("speedup_vs_") and not k.endswith("_ci")]:
            row[f"{key}_ci"] = [row[key] * 0.99, row[key] * 1.01]
        row["launch_bound"] = any(row is f for f in fastest)
        if row["launch_bound"]:
            for key in [k for k in row if k.startswith("speedup_vs_")]:
                row[key] = [v * swing for v in row[key]] if isinstance(row[key], list) else row[key] * swing
    return rows


def _judge(rows: list[dict]):  # type: ignore[no-untyped-def]
    validity = json.loads(FIX.read_text())["result"]["validity"]
    return judge_bench({"rows": rows, "device": "NVIDIA H200"}, validity, {}, Config().thresholds, "b.json")


def test_three_launch_bound_configs_swinging_3x_do_not_move_the_headline() -> None:
    calm, swung = _judge(_rows(1.0)), _judge(_rows(3.4))
    assert calm.result["geomean_speedup"] == swung.result["geomean_speedup"]
    assert calm.result["configs"] == len(calm.result["rows"]) - 3
    assert len(calm.result["launch_bound"]) == 3 and "3 launch-bound apart" in calm.summary


def test_the_headline_carries_its_interval() -> None:
    verdict = _judge(_rows(1.0))
    lo, hi = verdict.result["interval"]
    assert lo < verdict.result["geomean_speedup"] < hi
    assert f"[{lo:.2f}, {hi:.2f}]" in verdict.summary


def test_a_bench_of_launch_bound_configs_only_says_so() -> None:
    rows = _rows(1.0)
    for row in rows:
        row["launch_bound"] = True
    verdict = _judge(rows)
    assert verdict.result["configs"] == len(rows) and "every config launch-bound" in verdict.summary
