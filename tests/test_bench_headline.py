"""The bench headline is the kernel's: configs the probe found launch-bound (their time is the
launch, not the kernel) are reported apart and cannot move it, and the headline carries the
interval its configs' intervals give it. The rows are the H200 recording's, with the fast
configs marked and their speedups swung as the H100 saw them swing (2.5–3.4x)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from cockpit.analysis.results.validity import BenchValidity
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
    return judge_bench({"rows": rows, "device": "NVIDIA H200"}, BenchValidity.from_json(validity), None,
                       Config().thresholds, "b.json")


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


def test_a_config_near_the_launch_bound_line_stays_on_the_side_the_run_before_put_it() -> None:
    """SDPA's dispatch at S=512 on an H100 took 0.7-0.9x the GPU's time per call: by the 80 % rule
    alone it flipped from one run to the next (22 then 23 configs apart, the headline moved 3 %).
    Within a session the run before holds it until the share clearly moves (under 60 %, over 100 %)."""
    from cockpit.analysis.keep import BenchRecord, hold_launch_bound
    from cockpit.analysis.timing_method import held_launch_bound

    assert held_launch_bound(0.85, True, None) and not held_launch_bound(0.75, False, None)  # first run: 80 %
    assert held_launch_bound(0.7, False, True) and not held_launch_bound(0.55, False, True)
    assert not held_launch_bound(0.9, True, False) and held_launch_bound(1.05, True, False)
    assert held_launch_bound(None, True, False)  # timed per call: the probe's answer stands,
    assert held_launch_bound(None, False, True)  # or the run before's launch-bound one

    def run(shares: dict[str, float]) -> list[dict]:
        rows = _rows(1.0)
        for row in rows:
            share = shares.get(row["config"], 0.1)
            for cell in row["impl"].values():
                cell.update(method="batch", host_ms_per_call=share * cell["median_ms"])
            row["launch_bound"] = share >= 0.8
        return rows

    names = [r["config"] for r in _rows(1.0)]
    first = run({names[0]: 0.85, names[1]: 0.75})
    before = BenchRecord(Path("b1.json"), "s1", 1.0, True, {r["config"]: 1.0 for r in first}, None, None,
                         {}, frozenset(r["config"] for r in first if r["launch_bound"]))
    second = run({names[0]: 0.78, names[1]: 0.82})  # each crossed the 80 % line the other way
    assert hold_launch_bound(second, [before], "s1", None) == names[:2]
    assert [r["launch_bound"] for r in second[:2]] == [True, False]
    assert second[0]["launch_bound_held"] == "host 78% of the GPU's time; launch-bound as in the run before"
    assert _judge(second).result["geomean_speedup"] == _judge(first).result["geomean_speedup"]
    assert "held as in the run before" in _judge(second).summary
    other_session = run({names[0]: 0.78})
    assert hold_launch_bound(other_session, [before], "s2", None) == []  # another session, another card
