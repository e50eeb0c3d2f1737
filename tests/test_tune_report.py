"""What the GPU run's report says (bench/tune_report.py), computed here from a real NVML recording,
the journal a knob search writes and `cockpit tune --json`'s result (cockpit/tune/finish.py's
`decide`): idle fraction per GPU (by UUID) over the search window, build times, trials per minute,
what the workload's rule and the builds rejected, and per group what the confirmation kept, with
its interval against the current values and the baseline and the run's target (a winner at least
`--bar` times the current values); and the correctness sweep's choice of configurations
(bench/tune_run.py) covers every value of every knob the rule allows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cockpit.config import load_config
from cockpit.session.journal import JournalWriter
from cockpit.tune import events as tev
from cockpit.tune.finish import decide
from cockpit.tune.verdict import BASELINE, CURRENT, judge
from tests.test_tune_knobs import BASE_MS, BENCH, FASTEST, SPEED, calls, knob_plan
from tests.tune_fakes import CURRENT as TILE
from tests.tune_fakes import OPTIONS, every_config

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from tune_report import summarize, table  # noqa: E402
from tune_run import covering  # noqa: E402

LOADED = REPO / "tests" / "fixtures" / "telemetry" / "loaded-h200.jsonl"
UUID = "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20"


def confirmed(tmp_path: Path, top1: float) -> dict[str, object]:
    """`cockpit tune --json`'s result after a confirmation whose best is `top1` x the current values."""
    (tmp_path / "cockpit.toml").write_text("")
    plan = knob_plan(tuple(SPEED), (1, 4), {"N": 4096})
    configs = {CURRENT: (1, 4), "top1": FASTEST, "top2": (4, 4)}
    times = {name: [calls(ms * f, salt=i + j) for j, ms in enumerate(BASE_MS)]
             for i, (name, f) in enumerate({CURRENT: 1.3, "top1": 1.3 / top1, "top2": 1.25, BASELINE: 1.0}.items())}
    rows = [{"config": f"M={s['M']} N={s['N']} fp16", "shape": s, "dtype": "fp16"} for s in BENCH]
    verdict = judge(plan.groups[0], configs, times, 0.10, {"valid": True, "reasons": []}, plan)
    result = decide(load_config(tmp_path), tmp_path, plan, [(verdict, {"times_ms": times, "rows": rows})])
    return json.loads(json.dumps(result))  # type: ignore[no-any-return]


def journal(session: Path, t0: float) -> None:
    writer = JournalWriter(session / "journal.jsonl")
    writer.append(tev.tune_started(t0, "tune-20231114-221320", "H200 (sm_90)", [UUID], 900.0, 100,
                                   [{"group": "N=4096", "total": 9, "left": 8, "rejected_by": {"rule": 1}}],
                                   "LHS", False, workload="row-softmax", unit="x torch.softmax",
                                   baseline="torch.softmax"))
    for i, (cached, build_s) in enumerate([(False, 3.1), (False, 3.5), (True, 0.0), (False, 4.0)]):
        writer.append(tev.tune_trial(t0 + 15 * (i + 1), "tune-20231114-221320", "N=4096", i, f"ROWS={i} num_warps=4",
                                     "timed", value=1.2, lo=1.19, hi=1.21, cached=cached, compile_s=build_s))
    writer.append(tev.tune_trial(t0 + 61, "tune-20231114-221320", "N=4096", 4, "ROWS=8 num_warps=8", "rejected",
                                 limit="spills"))
    writer.close()


def test_the_report_reads_idle_fraction_build_times_and_what_the_confirmation_kept(tmp_path: Path) -> None:
    t0 = 1795303184.7  # the recording's first tick: idle for ~3 s, then loaded
    result = confirmed(tmp_path, 1.3)
    session = tmp_path / "sessions" / "s1"  # the plan's session: its journal
    session.mkdir(parents=True)
    journal(session, t0)
    summary = summarize(session, result, LOADED, bar=1.15)
    assert summary["measured"] == 4 and summary["trials_per_min"] == round(4 / (61 / 60), 2)
    assert summary["rejected"] == {"rule": 1, "spills (after building)": 1}
    assert summary["compile"] == {"compiled": 3, "cached": 1, "median_s": 3.5, "mean_s": 3.53, "p90_s": 3.5,
                                  "max_s": 4.0}
    assert (summary["workload"], summary["baseline"]) == ("row-softmax", "torch.softmax")
    idle = summary["idle"][UUID]
    assert idle["nvml_index"] == 0 and idle["samples"] > 0 and 0 < idle["idle_fraction"] < 0.5
    [c] = summary["confirmations"]
    assert (c["group"], c["winner"], c["kept"], c["current"]) == ("N=4096", "top1", "ROWS=4 num_warps=8",
                                                                  "ROWS=1 num_warps=4")
    assert c["vs_current"]["value"] == pytest.approx(1.3, rel=0.01) and c["vs_current"]["lo"] > 1.15
    assert c["vs_baseline"]["value"] == pytest.approx(1.0, rel=0.01)
    assert c["target_met"] and c["valid"] is True
    assert summary["keep"]["action"] == "keep" and summary["keep"]["paths"] == [
        "workloads/softmax/softmax.tuned.json"]
    text = "\n".join(table(summary))
    assert "N=4096: kept ROWS=4 num_warps=8 (winner; was ROWS=1 num_warps=4); vs current 1.3" in text
    assert "vs torch.softmax 1.0" in text
    assert "target: a winner >= 1.15x the current values: MET" in text and "idle " in text
    assert "N=4096: regret 0 %" in text  # the search's first was the confirmation's fastest
    assert text.splitlines()[-1].startswith("KEEP: N=4096 ROWS=4 num_warps=8 1.30x vs current")


def test_a_reverted_tune_reports_the_current_values_kept_and_the_target_not_met(tmp_path: Path) -> None:
    t0 = 1795303184.7
    result = confirmed(tmp_path, 1.03)
    session = tmp_path / "sessions" / "s1"
    session.mkdir(parents=True)
    journal(session, t0)
    summary = summarize(session, result, None, bar=1.15)
    [c] = summary["confirmations"]
    assert (c["winner"], c["kept"], c["target_met"]) == (None, "ROWS=1 num_warps=4", False)
    assert c["vs_current"]["value"] == 1.0 and "under the 10% bar" in c["why"]
    text = "\n".join(table(summary))
    assert "N=4096: kept ROWS=1 num_warps=4 (current; was ROWS=1 num_warps=4)" in text and "NOT MET" in text
    assert summary["keep"]["action"] == "revert" and text.splitlines()[-1].startswith("REVERT")
    del result["confidence"]  # a result from before regret and re-confirms: said, never guessed
    assert "regret and re-confirm not recorded" in "\n".join(table(summarize(session, result, None, bar=1.15)))


@pytest.mark.parametrize("space", ["tiles", "row-softmax"])
def test_the_correctness_sweep_takes_every_value_of_every_knob_with_few_configurations(space: str) -> None:
    if space == "tiles":  # the define knobs of tests/tune_fakes, the rule leaving out BN16 with a direct O store
        feasible = [c for c in every_config() if not (c[1] == 16 and not c[3])]
        current, values = TILE, list(OPTIONS.values())
    else:  # test_tune_knobs' row softmax: the rule leaves out (4, 2)
        feasible, current, values = list(SPEED), (1, 4), [[1, 2, 4], [2, 4, 8]]
    chosen = covering(feasible, current)
    assert chosen[0] == current and len(chosen) <= 4 and set(chosen) <= {*feasible, current}
    for i, offered in enumerate(values):
        assert {c[i] for c in chosen} == set(offered), i
