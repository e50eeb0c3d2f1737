"""What the GPU run's report says, computed here from a real NVML recording and the journal a
search writes: idle fraction per GPU (by UUID) over the search window, compile times, trials per
minute, and per shape whether the kept configuration meets >= 1.0x FLASH; and the correctness
sweep's choice of configurations covers every value of every knob the GPU allows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cockpit.session.journal import JournalWriter
from cockpit.tune import events as tev
from cockpit.tune.confirm import CURRENT, judge
from cockpit.tune.space import DEFAULTS, TUNABLE_NAMES, KernelParams
from tests.test_tune_confirm import SHAPES, calls

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from tune_report import summarize, table  # noqa: E402
from tune_run import covering  # noqa: E402

LOADED = REPO / "tests" / "fixtures" / "telemetry" / "loaded-h200.jsonl"
UUID = "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20"


def test_the_report_reads_idle_fraction_compile_times_and_the_flash_target_per_shape(tmp_path: Path) -> None:
    t0 = 1795303184.7  # the recording's first tick: idle for ~3 s, then loaded
    writer = JournalWriter(tmp_path / "journal.jsonl")
    writer.append(tev.tune_started(t0, "tune-1", "H200 (sm_90)", [UUID], 900.0, 100,
                                   [{"head_dim": 64, "total": 480, "left": 136, "rejected_by": {"registers": 64}}],
                                   "LHS", False))
    for i, (cached, compile_s) in enumerate([(False, 3.1), (False, 3.5), (True, 0.0), (False, 4.0)]):
        writer.append(tev.tune_trial(t0 + 15 * (i + 1), "tune-1", 64, i, f"c{i}", "timed", tflops=250.0, lo=249.0,
                                     hi=251.0, cached=cached, compile_s=compile_s))
    writer.append(tev.tune_trial(t0 + 61, "tune-1", 64, 4, "c4", "rejected", limit="spills"))
    params = {CURRENT: DEFAULTS[64], "top1": KernelParams(128, 128, 4, 1, 2, True)}
    times = {CURRENT: calls(250.0, seed=1), "top1": calls(290.0, seed=2), "sdpa": calls(400.0, seed=4),
             "flash": calls(280.0, seed=5)}
    confirmation = judge(64, times, params, SHAPES, 0.10, valid=True)
    result = {"keep": {"action": "keep", "summary": "KEEP: D=64 ..."},
              "confirmations": [dict(confirmation.as_json(), validity={"valid": True})]}
    summary = summarize(tmp_path, json.loads(json.dumps(result)), LOADED)
    assert summary["measured"] == 4 and summary["trials_per_min"] == round(4 / (61 / 60), 2)
    assert summary["rejected"] == {"registers": 64, "spills (after compiling)": 1}
    assert summary["compile"] == {"compiled": 3, "cached": 1, "median_s": 3.5, "mean_s": 3.53, "p90_s": 3.5,
                                  "max_s": 4.0}
    idle = summary["idle"][UUID]
    assert idle["nvml_index"] == 0 and idle["samples"] > 0 and 0 < idle["idle_fraction"] < 0.5
    [c] = summary["confirmations"]
    assert c["winner"] == "top1" and c["kept"] == params["top1"].label and c["target_met"]
    assert [s["meets_flash"] for s in c["shapes"]] == [True, True]
    text = "\n".join(table(summary))
    assert "target >= 1.0x FLASH for S >= 1024: MET" in text and "idle " in text


def test_the_correctness_sweep_takes_every_value_of_every_knob_with_few_configurations() -> None:
    from cockpit.config import load_config
    from cockpit.tune.plan import make_plan
    from cockpit.tune.target import resolve_target

    config = load_config(REPO)
    plan = make_plan(config.tune, config.workload, resolve_target("9.0", {}, []))
    for space in plan.spaces:
        chosen = covering(list(space.feasible), space.current)
        assert chosen[0] == space.current and len(chosen) <= 8
        for name in TUNABLE_NAMES:
            assert {getattr(p, name) for p in chosen} == {getattr(p, name) for p in space.feasible}, name
