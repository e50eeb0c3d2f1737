"""Two knob searches as an H100 journaled them (bench/device/visit_workloads.sh, TUNE="softmax
layernorm"): the Triton layer norm's, kept per N, which kept a winner for N=512, and the CUDA
softmax's, which kept nothing. The panel, the status line and the session's fold read them as
they were written."""

from __future__ import annotations

import json
from pathlib import Path

from cockpit.session.state import fold
from cockpit.tune.plan import read_plan
from cockpit.tune.progress import tune_progress
from cockpit.ui.widgets.tune_panel import tune_lines

RECORDED = Path(__file__).resolve().parent / "fixtures" / "gpu" / "tune-knobs"


def events(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (RECORDED / f"{name}-h100-journal.jsonl").read_text().splitlines()]


def test_the_layer_norm_search_reads_per_n_with_its_kept_winner() -> None:
    progress = tune_progress(events("layernorm"))
    assert progress is not None and not progress.running
    assert progress.unit == "x torch.layer_norm" and progress.baseline == "torch.layer_norm"
    # 15 configurations in each of 4 groups: every one measured, none planned beyond the space
    assert (progress.measured, progress.planned) == (60, 60)
    assert [b.group for b in progress.best] == ["N=512", "N=1024", "N=4096", "N=16384"]
    n512 = progress.best[0]
    assert n512.vs_current is not None and n512.vs_current > 1.1 and n512.beats_current
    assert progress.summary.startswith("KEEP: N=512 num_warps=2 ROWS=2")
    text = tune_lines(progress, progress.finished or 0.0).plain
    assert "N=512 best" in text and "× torch.layer_norm" in text and "TFLOP/s" not in text


def test_the_softmax_search_kept_nothing_and_says_so() -> None:
    journal = events("softmax")
    progress = tune_progress(journal)
    assert progress is not None and progress.summary.startswith("REVERT")
    assert [b.group for b in progress.best] == ["all"]
    decision = [e for e in journal if e["type"] == "decision"]
    assert decision and decision[-1]["action"] == "revert" and decision[-1]["source"] == "tune"


def test_the_session_folds_the_search_events() -> None:
    state = fold(events("layernorm"))
    assert len(state.tune_events) == 66  # started, 4 baselines, 60 trials, finished


def test_the_recorded_plan_reads_back_with_workspace_relative_paths() -> None:
    plan = read_plan(RECORDED / "layernorm-h100-plan.json")
    assert plan.arch == "sm_90" and plan.keep_per == ("N",)
    assert plan.tuned_file == "workloads/layernorm_triton/layernorm.tuned.json"
    assert not Path(plan.run_dir).is_absolute() and not Path(plan.session_journal).is_absolute()
    assert [g.label for g in plan.groups] == ["N=512", "N=1024", "N=4096", "N=16384"]
