"""How sure a tune is of its winner, as the engineer reads it at the end of `cockpit tune`: the
search's regret against its own finalists, the winner measured once more (the re-confirm) and
kept only when it held, near-ties said as ties, and the card named as NVML names it. The search
runs for real over the tile space of tests/tune_fakes.py; only the builds and the GPU are
stand-ins, and the confirmation and the re-confirm are requests to that one measuring child."""

from __future__ import annotations

import json
import shutil
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cockpit.config import load_config
from cockpit.telemetry.fake import FakeGpu as NvmlGpu
from cockpit.telemetry.fake import FakePynvml
from cockpit.telemetry.nvml import Nvml
from cockpit.tune import events as tev
from cockpit.tune import launch
from cockpit.tune.build import BuildPool
from cockpit.tune.confidence import NOT_RECORDED, GroupConfidence
from cockpit.tune.finish import TuneResult, confirm_groups
from cockpit.tune.plan import KnobPlan, read_plan
from cockpit.tune.progress import tune_progress
from cockpit.tune.search import Walk, open_study, search
from cockpit.tune.space import label
from cockpit.tune.target import list_gpus, measured_on, resolve_target
from cockpit.ui.widgets.tune_panel import tune_lines
from cockpit.workload.tuned import read_winners
from tests.tune_fakes import CURRENT, TILES, FakeGpu, builder, fastest, speed, tile_plan

BEST = fastest()  # BM128 BN128 two stages, O staged: 1.21x SDPA, the search's first
SECOND = (128, 128, 2, False)  # O stored directly: 1.17x SDPA, its second
T0 = 1_700_000_000.0


def name(config: tuple[Any, ...]) -> str:
    return label(TILES, config)


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace whose search walked the whole tile space: its study holds every trial."""
    ws = tmp_path_factory.mktemp("searched")
    (ws / "cockpit.toml").write_text("")
    plan = launch.new_run(ws, tile_plan(trials=40))
    pool = BuildPool(builder(ws, [], threading.Lock()), workers=2)
    group = plan.groups[0]
    walk = Walk(plan, group, pool, FakeGpu(ws), lambda e: None,  # type: ignore[arg-type]
                time.time, float("inf"), "GPU-fake")
    try:
        search(open_study(plan, group, plan.journal(ws)), walk)
    finally:
        pool.close()
    return ws


def finish(searched: Path, tmp_path: Path, gpu: FakeGpu | None = None,
           target: str | None = None) -> tuple[TuneResult, list[str], KnobPlan, Path]:
    """The search's end in a copy of its workspace: confirmed, re-confirmed, kept or reverted."""
    ws = tmp_path / "ws"
    shutil.copytree(searched, ws)
    plan = read_plan(ws / "sessions" / "s1" / "tune" / "plan.json")
    plan = replace(plan, target=target) if target else plan
    said: list[str] = []
    gpu = gpu or FakeGpu(ws)
    gpu.workspace = ws
    result = confirm_groups(load_config(ws), ws, plan, gpu, said.append)  # type: ignore[arg-type]
    return json.loads(json.dumps(result)), said, plan, ws


def test_a_winner_that_holds_its_re_confirm_is_kept_and_the_search_had_no_regret(
        searched: Path, tmp_path: Path) -> None:
    gpu = FakeGpu()
    result, said, plan, ws = finish(searched, tmp_path, gpu)
    lines = result["lines"]
    assert lines[0].startswith(f"D=64: WINNER {name(BEST)} — 1.4")
    assert f"  regret 0 %: the search's first, {name(BEST)}, is the fastest of its 3 finalists on the " \
           "confirmation" in lines
    [again] = [line for line in lines if line.startswith("  re-confirm: ")]
    assert again.startswith(f"  re-confirm: the winner held on a re-confirm: {name(BEST)} read 1.")
    assert f"the runner-up {name(SECOND)} 1.4" in again
    # one child measured both: first the three finalists with the current values, then the
    # winner, the runner-up and the current values once more
    measured = [n for op, n in gpu.calls if op == "confirm"]
    assert len(measured) == 7 and measured[:3] == measured[4:] == [name(CURRENT), name(BEST), name(SECOND)]
    assert said[-1] == f"D=64: re-confirming {name(CURRENT)}, {name(BEST)}, {name(SECOND)} once more, interleaved"
    assert result["keep"]["action"] == "keep"
    assert [w.knobs["BM"] for w in read_winners(ws / plan.tuned_file)] == [128]
    [recorded] = result["confidence"]
    confidence = GroupConfidence.from_json(recorded)
    assert confidence is not None and confidence.reconfirm is not None and confidence.reconfirm.held
    assert confidence.regret is not None and confidence.regret.slower.value == 1.0 and confidence.tie is None
    assert recorded["schema"] == 1 and recorded["reconfirm"]["held"] is True


def test_a_winner_that_loses_its_re_confirm_is_not_kept(searched: Path, tmp_path: Path) -> None:
    """The confirmation read the winner 1.5x the current tile; measured once more it runs no faster
    than the current tile (the first read caught a lucky moment): nothing is kept."""
    gpu = FakeGpu(reads=[{}, {BEST: speed(CURRENT) * 0.99}])
    result, _, plan, ws = finish(searched, tmp_path, gpu)
    lines = result["lines"]
    assert lines[0].startswith(f"D=64: no winner — the winner, {name(BEST)}, did not hold on a re-confirm "
                               "(the confirmation read 1.")
    assert lines[0].endswith("the current values): not kept")
    [again] = [line for line in lines if line.startswith("  re-confirm: ")]
    assert again.startswith(f"  re-confirm: the winner did not hold on a re-confirm: {name(BEST)} read 0.99x [")
    assert again.endswith("the current values, not beyond the noise")
    assert result["keep"]["action"] == "revert"
    assert result["keep"]["summary"] == ("REVERT: nothing beat the current knob values beyond the noise and the "
                                         "bar (D=64: the winner did not hold on a re-confirm)")
    assert not (ws / plan.tuned_file).exists()
    [recorded] = result["confidence"]
    assert recorded["reconfirm"]["held"] is False
    assert result["bench"] is not None  # the confirmation is still a bench of the current values
    assert result["bench"]["rows"][0]["impl"]["ours"]["median_ms"] == pytest.approx(0.5 / speed(CURRENT), rel=0.02)


def test_overlapping_intervals_read_as_a_tie_and_the_keep_rule_still_keeps_against_current(
        searched: Path, tmp_path: Path) -> None:
    """The search's first and second run as fast as each other: the lines say tie, never a win;
    either beats the current tile beyond the noise and the bar, so one is kept."""
    same = {SECOND: speed(BEST)}
    result, _, plan, ws = finish(searched, tmp_path, FakeGpu(reads=[same, same]))
    head = result["lines"][0]
    assert head.startswith("D=64: TIE — ") and "WINNER" not in head
    pair = {f"{name(BEST)} and {name(SECOND)} tie: ", f"{name(SECOND)} and {name(BEST)} tie: "}
    assert any(p in head for p in pair)
    tied = head.split(" tie: ")[1].split(" the current values")[0]  # "1.50x [1.49, 1.51] and 1.50x [...]"
    assert tied.count("x [") == 2 and " and " in tied
    assert result["keep"]["action"] == "keep" and "(a tie with " in result["keep"]["summary"]
    [kept] = read_winners(ws / plan.tuned_file)
    assert (kept.knobs["BM"], kept.knobs["BN"], kept.knobs["ST"]) == (128, 128, 2)
    [recorded] = result["confidence"]
    assert recorded["tie"] is not None and {recorded["tie"]["kept"], recorded["tie"]["other"]} == {
        name(BEST), name(SECOND)}


def test_a_runner_up_faster_on_the_re_confirm_makes_a_tie_not_a_win(searched: Path, tmp_path: Path) -> None:
    """The confirmation ordered the two best one way, the re-confirm the other: the winner did not
    hold, so it is no win; it is still beyond the noise and the bar against the current tile, so
    the keep rule keeps it, as a tie."""
    result, _, plan, ws = finish(searched, tmp_path, FakeGpu(reads=[{}, {SECOND: 1.30}]))
    head = result["lines"][0]
    assert head.startswith(f"D=64: TIE — {name(BEST)} and {name(SECOND)} tie: 1.49x [")
    assert " the current values on the confirmation, 1.50x [" in head and "] and 1.61x [" in head
    [again] = [line for line in result["lines"] if line.startswith("  re-confirm: ")]
    assert again.startswith(f"  re-confirm: the winner did not hold on a re-confirm: {name(SECOND)} 1.61x [")
    assert result["keep"]["action"] == "keep"
    assert result["keep"]["summary"].endswith(f"(a tie with {name(SECOND)})")
    [kept] = read_winners(ws / plan.tuned_file)
    assert kept.knobs["O_SMEM"] is True
    confidence = GroupConfidence.from_json(result["confidence"][0])
    assert confidence is not None and confidence.reconfirm is not None and not confidence.reconfirm.held
    assert confidence.tie is not None and confidence.tie.again is not None
    assert confidence.tie.again[1].value == pytest.approx(1.30 / speed(CURRENT), rel=0.01)


def test_a_tie_of_two_near_equal_configurations_is_said_in_the_issues_words() -> None:
    from cockpit.analysis.stats import Estimate
    from cockpit.tune.confidence import Tie, overlap

    a, b = Estimate(1.18, 1.16, 1.20), Estimate(1.17, 1.15, 1.19)
    assert overlap(a, b) and not overlap(a, Estimate(1.10, 1.08, 1.15))
    assert Tie("BM128 BN64", "BM64 BN64", a, b).words() == (
        "BM128 BN64 and BM64 BN64 tie: 1.18x [1.16, 1.20] and 1.17x [1.15, 1.19] the current values")


def test_regret_is_how_much_slower_the_searchs_first_is_than_the_fastest_finalist(
        searched: Path, tmp_path: Path) -> None:
    """The trials ranked BM128 BN128 ST2 with O staged first; the confirmation (and the
    re-confirm) measure the same tile with O stored directly 7 % faster: the search's regret."""
    faster = {SECOND: 1.30}
    result, _, _, _ = finish(searched, tmp_path, FakeGpu(reads=[faster, faster]))
    [regret] = [line for line in result["lines"] if line.startswith("  regret ")]
    assert regret.startswith("  regret 7.")
    assert regret.endswith(f"the search's first, {name(BEST)}, is that much slower than {name(SECOND)}, the "
                           "fastest of its 3 finalists on the confirmation")
    slower = result["confidence"][0]["regret"]["slower"]
    assert slower["value"] == pytest.approx(1.30 / 1.21, rel=0.01)
    assert 1.0 < slower["lo"] < slower["value"] < slower["hi"]
    assert result["lines"][0].startswith(f"D=64: WINNER {name(SECOND)} — ")
    assert result["confidence"][0]["reconfirm"]["held"] is True


def test_an_h200_is_named_h200_in_the_result_and_the_commit_message_never_h100(
        searched: Path, tmp_path: Path) -> None:
    h200 = list_gpus(Nvml(lib=FakePynvml([NvmlGpu()])))
    assert [(g.name, g.arch) for g in h200] == [("NVIDIA H200", "sm_90")]
    assert resolve_target(None, {}, h200).label == "NVIDIA H200 (sm_90)"
    # chosen by --arch 9.0, or resumed from a plan that said "H100 (sm_90)": the card measuring it says
    for target in (resolve_target("9.0", {}, h200).label, "H100 (sm_90)"):
        assert measured_on(target, "sm_90", h200[0]) == "NVIDIA H200 (sm_90)"
    assert measured_on("sm_89", "sm_89", h200[0]) == "NVIDIA H200 (sm_90), held to the limits of sm_89"

    result, _, plan, ws = finish(searched, tmp_path, FakeGpu(card="NVIDIA H200"),
                                 measured_on("H100 (sm_90)", "sm_90", h200[0]))
    keep = result["keep"]
    assert result["target"] == "NVIDIA H200 (sm_90)"
    assert f"tuned by {plan.run} on NVIDIA H200 (sm_90) (" in str(keep["commit_message"])
    [kept] = read_winners(ws / plan.tuned_file)
    assert kept.note.endswith("on NVIDIA H200 (sm_90)")
    assert "H100" not in json.dumps(result) and "H100" not in (ws / plan.tuned_file).read_text()


def test_a_tune_examined_without_a_gpu_names_the_arch_alone() -> None:
    assert resolve_target("9.0", {}, []).label == "sm_90"
    assert resolve_target(None, {"TORCH_CUDA_ARCH_LIST": "8.9"}, []).label == "sm_89"


def test_the_panel_says_how_sure_the_tune_is_and_an_old_tune_that_it_was_not_recorded() -> None:
    started = tev.tune_started(T0, "tune-1", "NVIDIA H200 (sm_90)", ["GPU-a"], 900.0, 20,
                               [{"group": "D=64", "total": 24, "left": 24, "rejected_by": {}}], "LHS", False,
                               workload="tiles", unit="x SDPA", baseline="SDPA")
    trial = tev.tune_trial(T0 + 10, "tune-1", "D=64", 0, name(BEST), "timed", value=1.21, lo=1.2, hi=1.22)
    summary = f"KEEP: D=64 {name(BEST)} 1.50x vs current, 1.21x SDPA"
    old = tev.tune_finished(T0 + 60, "tune-1", "keep", summary)
    progress = tune_progress([started, trial, old])
    assert progress is not None and progress.confidence is None
    assert NOT_RECORDED in tune_lines(progress, T0 + 70).plain

    confidence = [{"schema": 1, "group": "D=64",
                   "regret": {"pick": name(BEST), "fastest": name(BEST),
                              "slower": {"value": 1.0, "lo": 1.0, "hi": 1.0}, "finalists": 3},
                   "tie": None,
                   "reconfirm": {"held": True, "winner": name(BEST),
                                 "winner_vs_current": {"value": 1.5, "lo": 1.49, "hi": 1.51},
                                 "runner_up": name(SECOND),
                                 "runner_up_vs_current": {"value": 1.45, "lo": 1.44, "hi": 1.46},
                                 "valid": True, "suspect": ""}},
                  {"schema": 99, "group": "D=128"}]  # a version this cockpit does not know: left out
    new = tev.tune_finished(T0 + 60, "tune-1", "keep", summary, confidence=confidence)
    progress = tune_progress([started, trial, new])
    assert progress is not None and progress.confidence is not None and len(progress.confidence) == 1
    text = tune_lines(progress, T0 + 70).plain
    assert "D=64: regret 0 %; the winner held on a re-confirm" in text and NOT_RECORDED not in text
