"""Noise must not pick the winner: the objective with its bootstrap interval, the "better only
with the whole interval above" rule, and the confirmation's keep/revert with the 10 % bar, on
per-call times drawn like a GPU's (a few percent of jitter, a slow tail)."""

from __future__ import annotations

import random
from pathlib import Path

from cockpit.analysis.stats import Estimate, better, clearly_slower, flops, geomean_tflops, speedup
from cockpit.tune.confirm import CURRENT, judge
from cockpit.tune.space import DEFAULTS, KernelParams

SHAPES = [{"B": 4, "H": 16, "S": s, "D": 64, "dtype": "fp16", "causal": False} for s in (1024, 4096)]


def calls(tflops: float, n: int = 60, jitter: float = 0.02, seed: int = 0) -> list[list[float]]:
    rng = random.Random(seed)
    out = []
    for shape in SHAPES:
        ms = flops(shape) / (tflops * 1e12) * 1e3
        out.append([ms * (1 + abs(rng.gauss(0, jitter))) * (1.3 if rng.random() < 0.05 else 1.0)
                    for _ in range(n)])
    return out


def test_the_objective_is_geometric_mean_tflops_with_an_interval_that_holds_the_truth() -> None:
    assert flops({"B": 4, "H": 16, "S": 1024, "D": 64, "causal": False}) == 4 * 4 * 16 * 1024**2 * 64
    assert flops({"B": 4, "H": 16, "S": 1024, "D": 64, "causal": True}) == 2 * 4 * 16 * 1024**2 * 64
    est = geomean_tflops(calls(250.0), [flops(s) for s in SHAPES])
    assert est.lo <= est.value <= est.hi
    assert 240 < est.value < 250 and est.hi - est.lo < 10  # the jitter only ever slows a call


def test_a_candidate_is_better_only_when_its_whole_interval_is_above_the_incumbents() -> None:
    f = [flops(s) for s in SHAPES]
    incumbent = geomean_tflops(calls(250.0, seed=1), f)
    within_noise = geomean_tflops(calls(251.0, seed=2), f)
    clearly = geomean_tflops(calls(280.0, seed=3), f)
    assert within_noise.value > incumbent.value and not better(within_noise, incumbent)
    assert better(clearly, incumbent) and not better(incumbent, clearly)
    assert clearly_slower(Estimate(200, 195, 205), 250.0, 0.10) and not clearly_slower(Estimate(200, 195, 230),
                                                                                         250.0, 0.10)


def test_the_confirmation_keeps_a_winner_only_past_the_bar_with_its_interval_above_one() -> None:
    params = {CURRENT: DEFAULTS[64], "top1": KernelParams(128, 128, 4, 1, 2, True),
              "top2": KernelParams(128, 64, 8, 2, 2, True)}
    times = {CURRENT: calls(250.0, seed=1), "top1": calls(290.0, seed=2), "top2": calls(256.0, seed=3),
             "sdpa": calls(400.0, seed=4), "flash": calls(270.0, seed=5)}
    c = judge(64, times, params, SHAPES, 0.10, valid=True)
    assert c.winner is not None and c.winner.name == "top1"
    assert c.winner.vs_current.lo >= 1.10 and c.winner.vs_current.value < 1.2
    assert c.winner.vs_flash.value > 1.0 and [s.shape["S"] for s in c.winner.shapes] == [1024, 4096]
    assert [k.name for k in c.contenders] == ["top1", "top2"]
    under_bar = judge(64, {**times, "top1": calls(262.0, seed=2)}, params, SHAPES, 0.10, valid=True)
    assert under_bar.winner is None and "under the 10% bar" in under_bar.why
    alone = {CURRENT: params[CURRENT], "top1": params["top1"]}
    noise = judge(64, {**times, "top1": calls(250.5, seed=2)}, alone, SHAPES, 0.0, valid=True)
    assert noise.contenders[0].vs_current.value > 1.0  # faster on its medians, but within the noise:
    assert noise.winner is None and "not better beyond the noise" in noise.why
    suspect = judge(64, times, params, SHAPES, 0.10, valid=False)
    assert suspect.winner is None and suspect.why.startswith("the confirmation run is suspect")


def test_a_kept_winner_goes_into_the_header_and_a_bench_record_the_next_keep_revert_compares_with(
        tmp_path: Path) -> None:
    from cockpit.analysis.keep import bench_history
    from cockpit.config import Config
    from cockpit.tune.finish import _decide
    from cockpit.tune.header import read_current
    from tests.tune_fakes import start_run

    _, run = start_run(tmp_path)
    params = {CURRENT: DEFAULTS[64], "top1": KernelParams(128, 128, 4, 1, 2, True)}
    times = {CURRENT: calls(250.0, seed=1), "top1": calls(290.0, seed=2), "sdpa": calls(400.0, seed=4),
             "flash": calls(270.0, seed=5)}
    shapes = list(run.head_dims[0].shapes)
    assert [s["S"] for s in shapes] == [1024, 4096] == [s["S"] for s in SHAPES]
    confirmation = judge(64, times, params, shapes, 0.10, valid=True)
    result = _decide(Config(), run, [(confirmation, {"valid": True, "reasons": []}, {"times_ms": times})])
    assert result["keep"]["action"] == "keep" and result["keep"]["summary"].startswith("KEEP: D=64 BM128 BN128 4w")
    assert read_current(run.csrc, run.arch)[64] == params["top1"] and read_current(run.csrc, run.arch)[128] == DEFAULTS[128]
    assert result["keep"]["header"] == "csrc/tuned_config.h"  # the journal's paths are the workspace's
    [record] = bench_history(tmp_path / "sessions")
    assert result["record"] == f"sessions/{record.path.parent.parent.name}/results/{record.path.name}"
    assert result["lines"][-1] == f"bench record: {result['record']}"
    assert record.valid and set(record.ours_ms) == {"B4 H16 S1024 D64 fp16 full", "B4 H16 S4096 D64 fp16 full"}
    lost = _decide(Config(), run, [(judge(64, {**times, "top1": calls(251.0, seed=2)}, params, shapes, 0.10, True),
                                    {"valid": True, "reasons": []}, {"times_ms": times})])
    assert lost["keep"]["action"] == "revert" and lost["lines"][-2].endswith("csrc/ is unchanged")
    assert speedup(times["top1"], times[CURRENT]).value > 1.1
