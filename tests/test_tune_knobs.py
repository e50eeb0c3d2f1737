"""`cockpit tune` on any workload's knobs, as the engineer meets it: the tuned file committed beside
the kernel (per GPU architecture and group of shapes), the space laid out from the manifest with its
one-line refusals, the search itself (Optuna's study on its journal file, run for real against a
GPU stand-in whose fastest configuration is known), the confirmation's keep/revert, and the panel."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import optuna
import pytest

from cockpit.config import ConfigError, load_config
from cockpit.config.tune import TuneConfig
from cockpit.errors import CockpitError
from cockpit.gates.bench.past import as_record
from cockpit.gates.bench.result import read_bench_result
from cockpit.tune import events as tev
from cockpit.tune import launch
from cockpit.tune.build import BuildPool, Built
from cockpit.tune.finish import decide
from cockpit.tune.plan import BenchSettings, GroupPlan, KnobPlan, PlanBuild, read_plan
from cockpit.tune.progress import tune_progress
from cockpit.tune.search import Walk, open_study, search
from cockpit.tune.seeds import seed_order
from cockpit.tune.space import (
    Group,
    Variant,
    current,
    decls,
    groups,
    label,
    narrowed,
    options,
    searchable,
    variant,
)
from cockpit.tune.verdict import BASELINE, CURRENT, judge
from cockpit.ui.widgets.tune_panel import tune_lines
from cockpit.workload.manifest import Manifest, manifest_from_json
from cockpit.workload.tuned import (
    KnobDecl,
    Tuned,
    TunedFileError,
    Winner,
    define_flags,
    merged,
    read_winners,
    tuned_path,
    write_winners,
)

T0 = 1_700_000_000.0
KWARGS = (KnobDecl("ROWS", "kwarg", "ROWS", 1), KnobDecl("num_warps", "kwarg", "num_warps", 4))


def calls(ms: float, n: int = 30, salt: int = 0) -> list[float]:
    """`n` per-call times around `ms`, with a small deterministic jitter (±0.4 %)."""
    return [ms * (1 + 0.004 * (((i * 7 + salt) % 11) - 5) / 5) for i in range(n)]


# --- the tuned file -------------------------------------------------------------------------------

def test_the_tuned_file_hands_a_winner_to_its_own_group_on_its_own_arch_only(tmp_path: Path) -> None:
    path = tuned_path(tmp_path, "workloads/softmax/softmax.py")
    assert path == tmp_path / "workloads" / "softmax" / "softmax.tuned.json"
    won = Winner("sm_90", {"N": 4096}, {"ROWS": 4, "num_warps": 8, "gone": 1}, "tune-1", "1.31x")
    write_winners(path, "row-softmax", ["N"], [won])
    assert read_winners(path) == (won,)
    assert json.loads(path.read_text())["keep_per"] == ["N"]
    assert [p.name for p in path.parent.iterdir()] == ["softmax.tuned.json"]  # no temporary left
    h100 = Tuned(KWARGS, ("N",), "sm_90", read_winners(path))
    assert h100.kwargs({"M": 1024, "N": 4096, "dtype": "fp16"}) == {"ROWS": 4, "num_warps": 8}
    assert h100.kwargs({"M": 1024, "N": 512, "dtype": "fp16"}) == {"ROWS": 1, "num_warps": 4}
    l4 = Tuned(KWARGS, ("N",), "sm_89", read_winners(path))
    assert l4.kwargs({"M": 1024, "N": 4096, "dtype": "fp16"}) == {"ROWS": 1, "num_warps": 4}


def test_define_knobs_become_d_flags_formatted_with_the_group() -> None:
    knobs = (
        KnobDecl("ROWS", "define", "SOFTMAX_ROWS", None),
        KnobDecl("BM", "define", "K_D{D}_BM", 64),
        KnobDecl("FAST", "define", "USE_FAST", False),
        KnobDecl("SWIZZLE", "define", "SWIZZLE", None),
        KnobDecl("num_warps", "kwarg", "num_warps", 4),
    )
    assert define_flags(knobs, {"ROWS": 2, "BM": 128, "FAST": True}, {"D": 64}) == [
        "-DSOFTMAX_ROWS=2", "-DK_D64_BM=128", "-DUSE_FAST=1"]
    # None: the source's own #ifndef default stands, no flag; False is a flag of its own
    assert define_flags(knobs, {}, {"D": 128}) == ["-DK_D128_BM=64", "-DUSE_FAST=0"]
    winners = (Winner("sm_90", {"D": 64}, {"BM": 128}), Winner("sm_90", {"D": 128}, {"BM": 32, "ROWS": 4}),
               Winner("sm_89", {"D": 64}, {"BM": 16}))
    kept = Tuned(knobs, ("D",), "sm_90", winners)
    assert "-DK_D64_BM=128" in kept.defines() and "-DK_D64_BM=16" not in kept.defines()
    assert kept.defines(leave_out={"D": 64}) == ["-DSOFTMAX_ROWS=4", "-DK_D128_BM=32", "-DUSE_FAST=0"]


def test_a_new_winner_replaces_only_its_own_arch_and_group() -> None:
    h100_big, h100_small = Winner("sm_90", {"N": 4096}, {"ROWS": 2}), Winner("sm_90", {"N": 512}, {"ROWS": 1})
    l4_big = Winner("sm_89", {"N": 4096}, {"ROWS": 8})
    fresh = Winner("sm_90", {"N": 4096}, {"ROWS": 4}, "tune-2")
    out = merged([h100_big, h100_small, l4_big], [fresh])
    assert out == (l4_big, fresh, h100_small)  # sorted by arch and group, so the file diffs stay small


@pytest.mark.parametrize("text", ["{not json", '{"schema": 2, "winners": []}', '{"schema": 1}',
                                  '{"schema": 1, "winners": [{"arch": "sm_90"}]}', "[1, 2]"])
def test_a_damaged_tuned_file_is_a_one_line_error_never_the_untuned_values(tmp_path: Path, text: str) -> None:
    path = tmp_path / "softmax.tuned.json"
    path.write_text(text)
    with pytest.raises(TunedFileError) as caught:
        read_winners(path)
    said = str(caught.value)
    assert said.startswith(f"{path}: ") and "\n" not in said
    assert "restore it" in said and "delete it" in said


def test_a_missing_tuned_file_is_no_winners_and_a_gpu_mode_folder_has_none(tmp_path: Path) -> None:
    assert read_winners(tmp_path / "nope.tuned.json") == () and read_winners(None) == ()
    assert tuned_path(tmp_path, "gpumode:problems/softmax") is None
    dotted = tuned_path(tmp_path, "mypkg.softmax")
    assert dotted is not None and dotted.parent == tmp_path / "tuned"
    assert dotted.name.startswith("mypkg.softmax")


def test_a_dotted_modules_tuned_file_is_named_like_any_other() -> None:
    assert tuned_path(Path("/ws"), "mypkg.softmax") == Path("/ws/tuned/mypkg.softmax.tuned.json")


# --- the space ------------------------------------------------------------------------------------

def row(m: int, n: int) -> dict[str, Any]:
    return {"name": f"M={m} N={n} fp16", "shape": {"M": m, "N": n, "dtype": "fp16"},
            "flops": 5.0 * m * n, "bytes": 4.0 * m * n}


def manifest(**over: Any) -> Manifest:
    """A row softmax as workload_load.describe reports it: bench M x N, one winner kept per N."""
    d: dict[str, Any] = {
        "schema": 1, "name": "row-softmax", "source": "workloads/softmax/softmax.py",
        "build": {"kind": "triton"}, "candidates": ["ours"],
        "references": [{"name": "fp64", "oracle": True}, {"name": "torch.softmax", "baseline": True}],
        "test_grid": [row(3, 512), row(3, 4096)],
        "bench_grid": [row(m, n) for m in (1024, 4096) for n in (512, 4096)],
        # the workload's correctness_grid(): its test grid and the bench grid's smallest and largest
        "correctness": ["M=3 N=512 fp16", "M=3 N=4096 fp16", "M=1024 N=512 fp16", "M=4096 N=4096 fp16"],
        "check": {"kind": "rel_l2", "tolerance": {"fp16": 1e-2}}, "dtype_key": "dtype",
        "knobs": [{"name": "ROWS", "values": [1, 2, 4], "via": "kwarg", "start": 1},
                  {"name": "num_warps", "values": [2, 4, 8], "via": "kwarg", "start": 4}],
        "knob_combinations": 9, "keep_per": ["N"],
    }
    return manifest_from_json(d | over)


def test_each_group_is_timed_on_its_own_bench_shapes_and_checked_on_its_own_ends() -> None:
    m = manifest()
    searchable(m)  # nothing to say
    small, big = groups(m)
    assert (small.key, small.label, big.key, big.label) == ({"N": 512}, "N=512", {"N": 4096}, "N=4096")
    assert [s["M"] for s in small.bench] == [1024, 4096] and {s["N"] for s in small.bench} == {512}
    assert [s["M"] for s in big.bench] == [1024, 4096] and {s["N"] for s in big.bench} == {4096}
    assert [(s["M"], s["N"]) for s in small.checks] == [(3, 512), (1024, 512), (4096, 512)]
    assert [(s["M"], s["N"]) for s in big.checks] == [(3, 4096), (4096, 4096), (1024, 4096)]
    knobs = decls(m)
    assert current(knobs, big, [Winner("sm_90", {"N": 4096}, {"ROWS": 4})], "sm_90") == (4, 4)
    assert current(knobs, small, [Winner("sm_90", {"N": 4096}, {"ROWS": 4})], "sm_90") == (1, 4)
    assert current(knobs, big, [Winner("sm_89", {"N": 4096}, {"ROWS": 4})], "sm_90") == (1, 4)
    assert variant(knobs, (4, 8), big, []) is None  # kwargs only: nothing to compile
    assert label(knobs, (4, 8)) == "ROWS=4 num_warps=8"


EXTENSION = {"kind": "extension", "name": "softmax_ext", "sources": ["csrc/softmax.cu"]}
DEFINE = {"name": "ROWS", "values": [1, 2, 4], "via": "define", "macro": "SOFTMAX_ROWS"}


@pytest.mark.parametrize(("over", "said"), [
    ({"knobs": []}, "row-softmax declares no knobs to tune: add knobs=(Knob(...),)"),
    ({"references": [{"name": "fp64", "oracle": True}]}, "has no timed reference to tune against"),
    ({"knobs": [DEFINE]},
     "define knobs are compiled into an Extension build; row-softmax is built as triton"),
    ({"knobs": [DEFINE], "build": EXTENSION},
     "knob ROWS is a define kept per N, but its macro 'SOFTMAX_ROWS' is the same for every group"),
])
def test_a_workload_the_search_cannot_tune_is_refused_in_one_line(over: dict[str, Any], said: str) -> None:
    with pytest.raises(CockpitError) as caught:
        searchable(manifest(**over))
    assert str(caught.value).startswith("workloads/softmax/softmax.py: ")
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_define_named_per_group_or_kept_for_all_is_searchable() -> None:
    searchable(manifest(knobs=[DEFINE | {"macro": "SOFTMAX_ROWS_{N}"}], build=EXTENSION))
    searchable(manifest(knobs=[DEFINE], build=EXTENSION, keep_per=[]))


def test_tune_space_narrows_the_declared_values_and_a_wrong_one_names_its_line() -> None:
    m = manifest()
    narrow = TuneConfig(space={"ROWS": (2, 4)}, where={"space.ROWS": "cockpit.toml:12"})
    values = options(m, narrow)
    assert values == {"ROWS": (2, 4), "num_warps": (2, 4, 8)}
    every = list(itertools.product((1, 2, 4), (2, 4, 8)))
    assert narrowed(every, decls(m), values) == [c for c in every if c[0] != 1]
    with pytest.raises(ConfigError) as caught:
        options(m, TuneConfig(space={"ROWZ": (2,)}, where={"space.ROWZ": "cockpit.toml:12"}))
    assert str(caught.value).startswith("cockpit.toml:12: tune.space.ROWZ: row-softmax has no knob 'ROWZ'")
    with pytest.raises(ConfigError) as caught:
        options(m, TuneConfig(space={"ROWS": (2, 3)}, where={"space.ROWS": "cockpit.toml:13"}))
    assert str(caught.value).startswith("cockpit.toml:13: tune.space.ROWS: 3 is not one of")


# --- the search -----------------------------------------------------------------------------------

# How fast each configuration runs, against torch.softmax's 1.0; (4, 2) is not allowed by the rule,
# (2, 8) computes garbage.
SPEED = {(1, 2): 0.8, (1, 4): 1.05, (1, 8): 0.9, (2, 2): 0.95, (2, 4): 1.15, (2, 8): 1.2,
         (4, 4): 1.25, (4, 8): 1.6}
FASTEST, WRONG = (4, 8), (2, 8)
BENCH = ({"M": 4096, "N": 1024, "dtype": "fp16"}, {"M": 4096, "N": 4096, "dtype": "fp16"})
BASE_MS = (0.05, 0.2)


def knob_plan(feasible: tuple[tuple[int, ...], ...], now: tuple[int, ...], key: dict[str, Any],
              trials: int = 20) -> KnobPlan:
    opts = {"ROWS": (1, 2, 4), "num_warps": (2, 4, 8)}
    seeds, how = seed_order(feasible, opts, ["ROWS", "num_warps"], now, 3)
    group = GroupPlan(Group(key, BENCH, ({"M": 3, "N": 1024, "dtype": "fp16"}, *BENCH)), feasible, now,
                      tuple(seeds), ())
    return KnobPlan(
        run="tune-20231114-221320", run_dir="sessions/s1/tune", session_journal="sessions/s1/journal.jsonl",
        workload="row-softmax", workload_argv=("--workload", "workloads/softmax/softmax.py"),
        build=PlanBuild(None),
        tuned_file="workloads/softmax/softmax.tuned.json", keep_per=tuple(key), knobs=KWARGS, options=opts,
        arch="sm_90", target="H100 (sm_90)", trials=trials, prune_slower=0.05, budget_s=600.0, seed_how=how,
        baseline="torch.softmax", groups=(group,),
        settings=BenchSettings(reps=30, warmup=5, input_sets=4, settle_ms=0, rounds=1),
    )


class FakeChild:
    """The measuring child (`workload_probe.py serve`) on a GPU that runs each configuration at SPEED."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, tuple[int, ...] | None, bool]] = []
        self.restarts = 0

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        op = message["op"]
        config = message.get("config")
        if config is not None:
            assert config["variant"] is None  # kwarg knobs: nothing built, nothing loaded
        knobs = (config["knobs"]["ROWS"], config["knobs"]["num_warps"]) if config else None
        self.requests.append((op, knobs, bool(message.get("short"))))
        if op == "baseline":
            return {"times_ms": [calls(ms, salt=i) for i, ms in enumerate(BASE_MS)]}
        assert knobs is not None
        if op == "check":
            if knobs == WRONG:
                return {"ok": False, "detail": "FAILS at M=3 N=1024 fp16: rel L2 3.1e-01 > 0.01"}
            return {"ok": True, "detail": f"{len(message['shapes'])} shapes correct"}
        n = 10 if message["short"] else 30
        return {"times_ms": [calls(ms / SPEED[knobs], n, salt=i + 3) for i, ms in enumerate(BASE_MS)]}

    def restart(self) -> None:
        self.restarts += 1


def test_the_search_walks_the_space_once_and_finds_the_fastest_configuration(tmp_path: Path) -> None:
    feasible = tuple(SPEED)
    plan = knob_plan(feasible, (1, 4), {})
    group = plan.groups[0]
    assert group.seeds[0] == (1, 4) and len(set(group.seeds)) == 3 and set(group.seeds) <= set(feasible)
    launch.new_run(tmp_path, plan)
    assert read_plan(tmp_path / plan.run_dir / "plan.json") == plan
    assert plan.journal(tmp_path).exists()
    with pytest.raises(CockpitError, match="holds an earlier search"):
        launch.new_run(tmp_path, plan)

    built: list[dict[str, Any]] = []

    def build_one(v: Variant) -> Built:
        built.append(v)
        raise AssertionError("kwarg knobs have nothing to build")

    pool, child, recorded = BuildPool(build_one, workers=2), FakeChild(), []
    ticks = itertools.count()
    walk = Walk(plan, group, pool, child, recorded.append,  # type: ignore[arg-type]
                lambda: T0 + 100 + next(ticks), float("inf"), "GPU-fake")
    try:
        done = search(open_study(plan, group, plan.journal(tmp_path)), walk)
    finally:
        pool.close()
    assert not built and child.restarts == 0

    trials = [e for e in recorded if e["type"] == "tune_trial"]
    outcomes = {e["config"]: e for e in trials}
    assert {"timed", "incorrect"} <= {e["outcome"] for e in trials}
    wrong = outcomes[label(KWARGS, WRONG)]
    assert wrong["outcome"] == "incorrect" and wrong["detail"].startswith("FAILS at")
    assert not [r for r in child.requests if r[0] == "time" and r[1] == WRONG]  # never timed
    checked = [r[1] for r in child.requests if r[0] == "check"]
    assert len(checked) == len(set(checked)) == len(feasible) == done, "a configuration was measured twice"
    assert [r[0] for r in child.requests].count("baseline") == 1
    assert outcomes[label(KWARGS, (1, 4))]["current"] is True

    study = open_study(plan, group, plan.journal(tmp_path))
    complete = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    best = max(complete, key=lambda t: t.value or 0.0)
    assert (best.params["ROWS"], best.params["num_warps"]) == FASTEST
    assert best.user_attrs["config"] == "ROWS=4 num_warps=8" and best.value == pytest.approx(1.6, rel=0.02)

    started = tev.tune_started(T0, plan.run, plan.target, ["GPU-fake"], plan.budget_s, plan.trials,
                               [{"group": "all", "total": 9, "left": 8, "rejected_by": {"ROWS x warps": 1}}],
                               plan.seed_how, False, workload=plan.workload, unit="x torch.softmax",
                               baseline="torch.softmax")
    progress = tune_progress([started, *recorded])
    assert progress is not None and progress.measured == done and progress.planned == len(feasible)
    [top] = progress.best
    assert (top.group, top.config) == ("all", "ROWS=4 num_warps=8") and top.value.value > 1
    assert top.vs_current is not None and top.vs_current > 1.4 and top.beats_current


# --- keep or revert -------------------------------------------------------------------------------

def test_the_confirmation_keeps_a_winner_beyond_the_bar_and_reverts_otherwise(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text("")
    config = load_config(tmp_path)
    plan = knob_plan(tuple(SPEED), (1, 4), {"N": 4096})
    group = plan.groups[0]
    configs = {CURRENT: (1, 4), "top1": FASTEST, "top2": (4, 4)}
    rows = [{"config": f"M={s['M']} N={s['N']} fp16", "shape": s, "dtype": "fp16"} for s in BENCH]

    def times(top1: float) -> dict[str, list[list[float]]]:
        return {name: [calls(ms * f, salt=i + j) for j, ms in enumerate(BASE_MS)]
                for i, (name, f) in enumerate({CURRENT: 1.3, "top1": 1.3 / top1, "top2": 1.25,
                                                BASELINE: 1.0}.items())}

    good = {"valid": True, "reasons": []}
    won = judge(group, configs, times(1.3), 0.10, good, plan)
    assert won.winner is not None and won.winner.name == "top1" and won.winner.config == FASTEST
    assert won.winner.vs_current.value == pytest.approx(1.3, rel=0.01) and won.winner.vs_current.lo > 1
    assert "(bar 1.10x)" in won.why and "torch.softmax" in won.why
    close = judge(group, configs, times(1.03), 0.10, good, plan)
    assert close.winner is None and "under the 10% bar" in close.why
    throttled = {"valid": False, "reasons": ["SM clock throttled"]}
    suspect = judge(group, configs, times(1.3), 0.10, throttled, plan)
    assert suspect.winner is None and "suspect" in suspect.why

    tuned = tmp_path / plan.tuned_file
    out = decide(config, tmp_path, plan, [(close, {"times_ms": times(1.03), "rows": rows})])
    assert out["keep"]["action"] == "revert" and not tuned.exists()
    assert out["keep"]["summary"].startswith("REVERT")

    elsewhere = Winner("sm_89", {"N": 4096}, {"ROWS": 2, "num_warps": 4}, "tune-0")
    write_winners(tuned, plan.workload, plan.keep_per, [elsewhere])
    out = decide(config, tmp_path, plan, [(won, {"times_ms": times(1.3), "rows": rows})])
    keep = out["keep"]
    assert keep["action"] == "keep" and keep["paths"] == [plan.tuned_file]
    assert keep["improvement"] == pytest.approx(0.3, abs=0.02)
    kept = read_winners(tuned)
    assert elsewhere in kept and len(kept) == 2  # an L4's winner is not the H100's to replace
    [mine] = [w for w in kept if w.arch == "sm_90"]
    assert (mine.group, mine.knobs, mine.run) == ({"N": 4096}, {"ROWS": 4, "num_warps": 8}, plan.run)
    assert Tuned(KWARGS, ("N",), "sm_90", kept).kwargs({"M": 4096, "N": 4096}) == {"ROWS": 4, "num_warps": 8}
    confirmed = read_bench_result(out["bench"])  # journaled in tune_finished: the next bench's reference
    assert confirmed is not None and confirmed.workload == plan.workload and confirmed.valid
    assert as_record("s/tune-1", T0, confirmed).ours_ms.keys() == {r["config"] for r in rows}


# --- the panel ------------------------------------------------------------------------------------

KNOB_EVENTS = [
    tev.tune_started(T0, "tune-2", "H100 (sm_90)", ["GPU-a"], 600.0, 50,
                     [{"group": "N=4096", "total": 9, "left": 8, "rejected_by": {"ROWS x warps": 1}}], "LHS",
                     False, workload="row-softmax", unit="x torch.softmax", baseline="torch.softmax"),
    tev.tune_baseline(T0 + 5, "tune-2", "N=4096", {"value": 1.0, "lo": 1.0, "hi": 1.0}),
    tev.tune_trial(T0 + 10, "tune-2", "N=4096", 0, "ROWS=1 num_warps=4", "timed", value=1.05, lo=1.03,
                   hi=1.07, current=True, queued=0),
    tev.tune_trial(T0 + 20, "tune-2", "N=4096", 1, "ROWS=4 num_warps=8", "timed", value=1.4, lo=1.37,
                   hi=1.43, queued=0),
    tev.tune_trial(T0 + 30, "tune-2", "N=4096", 2, "ROWS=2 num_warps=8", "incorrect",
                   detail="FAILS at M=3 N=4096 fp16", queued=0),
]
ATTENTION_EVENTS = [  # as the attention kernel's tuner journaled them, before workloads
    {"t": T0, "type": "tune_started", "run": "tune-1", "target": "H100 (sm_90)", "gpus": ["GPU-a"],
     "budget_s": 900.0, "trials": 100,
     "spaces": [{"head_dim": 64, "total": 480, "left": 136, "rejected_by": {"registers": 64}}],
     "seed": "LHS", "resumed": False},
    {"t": T0 + 5, "type": "tune_baseline", "run": "tune-1", "d": 64,
     "flash": {"value": 270.0, "lo": 268.0, "hi": 272.0}},
    {"t": T0 + 10, "type": "tune_trial", "run": "tune-1", "d": 64, "n": 0, "config": "BM128 BN64 8w mb2 1st O:smem",
     "outcome": "timed", "tflops": 255.0, "lo": 254.0, "hi": 256.0, "current": True, "queued": 2},
    {"t": T0 + 20, "type": "tune_trial", "run": "tune-1", "d": 64, "n": 1, "config": "BM128 BN128 4w mb1 2st O:smem",
     "outcome": "timed", "tflops": 281.0, "lo": 280.0, "hi": 282.5, "queued": 2},
]


def test_a_tune_event_written_now_names_its_group_and_reference_in_the_generic_keys() -> None:
    written = [json.loads(json.dumps(e)) for e in KNOB_EVENTS]
    assert all("d" not in e and "flash" not in e for e in written)
    assert (written[1]["group"], written[1]["reference"]) == ("N=4096", {"value": 1.0, "lo": 1.0, "hi": 1.0})
    assert written[2]["group"] == "N=4096"


def test_a_knob_search_reads_in_times_its_baseline_and_the_attention_tiles_still_in_tflops() -> None:
    progress = tune_progress(KNOB_EVENTS)
    assert progress is not None and progress.run == "tune-2"
    assert (progress.unit, progress.baseline, progress.planned, progress.measured) == (
        "x torch.softmax", "torch.softmax", 8, 3)  # 50 trials planned, but the space holds 8
    [best] = progress.best
    assert (best.group, best.config, best.value.value) == ("N=4096", "ROWS=4 num_warps=8", 1.4)
    assert best.vs_current == pytest.approx(1.4 / 1.05) and best.vs_baseline == pytest.approx(1.4)
    assert best.beats_current and progress.searching == "N=4096"
    assert progress.activity() == "tuning: 3/8, best 1.40× torch.softmax"
    assert "N=4096 ROWS=4 num_warps=8: timed 1.400× torch.softmax" in progress.recent
    text = tune_lines(progress, T0 + 60).plain
    assert "N=4096 best ROWS=4 num_warps=8  1.40× torch.softmax [1.37, 1.43]  1.33× current" in text
    assert "TFLOP/s" not in text and "1 incorrect" in text

    attention = tune_progress(ATTENTION_EVENTS)
    assert attention is not None and attention.unit == " TFLOP/s" and attention.baseline == "FLASH"
    [tiles] = attention.best
    assert tiles.group == "D=64" and tiles.vs_current == pytest.approx(281.0 / 255.0)
    assert attention.activity() == "tuning: 2/100, best 1.04× FLASH"
    text = tune_lines(attention, T0 + 60).plain
    assert "D=64 best BM128 BN128 4w mb1 2st O:smem  281.0 TFLOP/s [280.0, 282.5]" in text
    assert "× torch.softmax" not in text

    # one session, the tiles tuned first and the workload's knobs after: the panel shows the latest
    latest = tune_progress([*ATTENTION_EVENTS, *KNOB_EVENTS])
    assert latest is not None and latest.run == "tune-2" and latest.unit == "x torch.softmax"


def test_a_plan_written_before_the_typed_build_still_resumes(tmp_path: Path) -> None:
    """plan.json of an earlier version: its "build" has no variant_build or tuned_header, its
    settle_ms is an int; it reads as a rebuild with no header, and writes back as it was."""
    plan = knob_plan(((1, 4), (2, 4)), (1, 4), {"N": 4096})
    path = tmp_path / plan.run_dir / "plan.json"
    path.parent.mkdir(parents=True)
    old = plan.to_json()
    old["build"] = {"name": "softmax_ext", "sources": ["csrc/softmax.cu"], "include_dirs": []}  # type: ignore[typeddict-item]
    path.write_text(json.dumps(old), encoding="utf-8")
    read = read_plan(path)
    assert read.build == PlanBuild("softmax_ext", ("csrc/softmax.cu",))
    assert read.build.variant_build == "rebuild" and read.build.tuned_header is None
    assert read.settings == plan.settings and read.to_json()["settings"] == old["settings"]


def test_a_configuration_faster_than_the_card_allows_is_refused_never_the_best(tmp_path: Path) -> None:
    """The bench gate's speed-of-light check stops a trial too: a cached or skipped result at one
    shape (here the fastest configuration reads 1.6x, faster than 234 MB can move on an H100)."""
    from dataclasses import replace

    from cockpit.hardware.peaks import peak_for

    plan = knob_plan(tuple(SPEED), (1, 4), {})
    sized = replace(plan.groups[0].group, sizes=((234.5e6, None, "fp16"), (None, None, "fp16")))
    plan = replace(plan, groups=(replace(plan.groups[0], group=sized),))
    launch.new_run(tmp_path, plan)
    assert read_plan(tmp_path / plan.run_dir / "plan.json") == plan  # the sizes survive a resume
    group = plan.groups[0]
    pool, child, recorded = BuildPool(lambda v: Built("", True, 0.0, True), workers=1), FakeChild(), []
    ticks = itertools.count()
    walk = Walk(plan, group, pool, child, recorded.append,  # type: ignore[arg-type]
                lambda: T0 + 100 + next(ticks), float("inf"), "GPU-fake",
                peak=peak_for("NVIDIA H100 80GB HBM3"))
    try:
        search(open_study(plan, group, plan.journal(tmp_path)), walk)
    finally:
        pool.close()
    outcomes = {e["config"]: e for e in recorded if e["type"] == "tune_trial"}
    cached = outcomes[label(KWARGS, FASTEST)]
    assert cached["outcome"] == "incorrect" and "a cached or skipped result?" in cached["detail"]
    assert "faster than 224 MB can move at 3.35 TB/s" in cached["detail"]
    study = open_study(plan, group, plan.journal(tmp_path))
    best = max(study.get_trials(states=(optuna.trial.TrialState.COMPLETE,)), key=lambda t: t.value or 0.0)
    assert (best.params["ROWS"], best.params["num_warps"]) == (4, 4)  # the fastest the card allows
