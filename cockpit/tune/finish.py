"""After the search: confirm the best configurations on one GPU, keep or revert, and record it.

Keep writes the winners into csrc/tuned_config.h (the change, which the engineer commits as any
kept change: csrc/ is what keep commits and revert restores) and saves the confirmation as a
bench record in the session's results, so the next bench gate's keep/revert compares with the
tuned kernel. Revert writes nothing: the current configuration stays.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.analysis.keep import bench_record_json, head_commit
from cockpit.analysis.stats import flops
from cockpit.config import Config
from cockpit.gates.bench_validity import judge_probe_window
from cockpit.session.paths import stored_path
from cockpit.tune.compile import compile_config, find_toolchain
from cockpit.tune.confirm import CURRENT, Confirmation, describe, judge
from cockpit.tune.header import keep as keep_tiles
from cockpit.tune.header import render, write_header
from cockpit.tune.measure import ProbeMeasurer
from cockpit.tune.runplan import HeadDimPlan, RunPlan
from cockpit.tune.space import KernelParams, config_name
from cockpit.tune.storage import Store
from cockpit.tune.study import open_run_study, params_of, run_store
from cockpit.tune.target import Gpu


def top_configurations(run: RunPlan, head: HeadDimPlan, k: int,
                       store: Store | None = None) -> list[KernelParams]:
    """The `k` best distinct timed configurations of a head dim's study (every box's, in a shared
    store), the current one aside."""
    import optuna

    study = open_run_study(store or run_store(run), run, head)
    done = sorted((t for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
                   if t.value is not None), key=lambda t: t.value or 0.0, reverse=True)
    out: list[KernelParams] = []
    for t in done:
        params = params_of(t)
        if params is not None and params != head.current and params not in out:
            out.append(params)
    return out[:k]


def finish_run(config: Config, run: RunPlan, gpu: Gpu, say: Callable[[str], None]) -> dict[str, Any]:
    toolchain = find_toolchain()
    measurer = ProbeMeasurer(run.probe, run.run_dir / "confirm.log",
                             env=dict(os.environ, CUDA_VISIBLE_DEVICES=gpu.uuid))
    results: list[tuple[Confirmation, dict[str, Any], dict[str, Any]]] = []
    store = run_store(run, config.tune)
    try:
        for head in run.head_dims:
            best = top_configurations(run, head, config.tune.confirm_top, store)
            contenders = {CURRENT: head.current} | {f"top{i + 1}": p for i, p in enumerate(best)}
            libraries: dict[str, Path] = {}
            for name, params in contenders.items():
                built = compile_config(toolchain, run.csrc, run.cache, params, head.head_dim, run.arch,
                                       run.max_smem)
                if built.library is not None:
                    libraries[name] = built.library
            if CURRENT not in libraries:
                say(f"D={head.head_dim}: the current configuration does not compile; nothing to confirm")
                continue
            say(f"D={head.head_dim}: confirming {', '.join(p.label for p in contenders.values())} against "
                "SDPA (default and FLASH), interleaved")
            reply = measurer.confirm(libraries, head.head_dim)
            validity = judge_probe_window(reply, config.thresholds)
            confirmation = judge(head.head_dim, reply["times_ms"], {n: contenders[n] for n in libraries},
                                 head.shapes, config.tune.keep_improvement, validity["valid"])
            results.append((confirmation, validity, reply))
    finally:
        measurer.close()
    return _decide(config, run, results)


def _decide(config: Config, run: RunPlan,
            results: list[tuple[Confirmation, dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    winners = {c.head_dim: c.winner for c, _, _ in results if c.winner is not None}
    lines = [line for c, _, _ in results for line in describe(c)]
    for c, validity, _ in results:
        if not validity["valid"]:
            lines.append(f"D={c.head_dim}: SUSPECT: " + "; ".join(validity["reasons"]))
    keep: dict[str, Any]
    if winners:
        notes = {d: f"{w.vs_current.value:.2f}x the configuration before it, {w.vs_flash.value:.2f}x "
                    f"SDPA FLASH on {run.target} ({run.run})" for d, w in winners.items()}
        tiles = keep_tiles(run.csrc, run.arch, {d: w.params for d, w in winners.items()}, notes, run.max_smem)
        header = write_header(run.csrc, render(tiles))
        improvement = min(w.vs_current.value for w in winners.values()) - 1
        summary = "KEEP: " + "; ".join(f"D={d} {w.params.label} {w.vs_current.value:.2f}x "
                                       f"[{w.vs_current.lo:.2f}, {w.vs_current.hi:.2f}] vs current, "
                                       f"{w.vs_flash.value:.2f}x FLASH" for d, w in winners.items())
        keep = {"action": "keep", "summary": summary, "improvement": improvement,
                "header": stored_path(header, run.csrc.parent),
                "commit_message": f"csrc: tuned configuration from {run.run} "
                                  f"({summary.removeprefix('KEEP: ')})"}
        lines.append(f"{summary}\nwritten: {header}, the {run.arch} entries (commit csrc/ to keep it; "
                     "other archs keep theirs)")
    else:
        summary = "REVERT: nothing beat the current configuration beyond the noise and the bar"
        keep = {"action": "revert", "summary": summary, "improvement": None, "commit_message": ""}
        lines.append(summary + "; csrc/ is unchanged")
    saved = _bench_record(run, results, winners)
    record = stored_path(saved, run.csrc.parent) if saved is not None else None  # journaled
    if record is not None:
        lines.append(f"bench record: {record}")
    return {"run": run.run, "target": run.target, "keep": keep, "lines": lines,
            "record": record,
            "confirmations": [dict(c.as_json(), validity=v) for c, v, _ in results]}


def _bench_record(run: RunPlan, results: list[tuple[Confirmation, dict[str, Any], dict[str, Any]]],
                  winners: dict[int, Any]) -> Path | None:
    """The confirmation as the bench gate saves a run: ours = the kept configuration per shape."""
    if not results:
        return None
    rows = []
    for c, _, reply in results:
        ours = winners[c.head_dim].name if c.head_dim in winners else CURRENT
        head = run.head_dim(c.head_dim)
        for i, shape in enumerate(head.shapes):
            medians = {name: statistics.median(reply["times_ms"][key][i])
                       for name, key in (("ours", ours), ("sdpa", "sdpa"), ("flash", "flash"))}
            impl = {name: {"median_ms": ms, "tflops": flops(shape) / (ms * 1e-3) / 1e12}
                    for name, ms in medians.items()}
            rows.append({"config": config_name(shape), **shape, "flops": flops(shape), "impl": impl,
                         "speedup_vs_sdpa": impl["sdpa"]["median_ms"] / impl["ours"]["median_ms"],
                         "speedup_vs_flash": impl["flash"]["median_ms"] / impl["ours"]["median_ms"]})
    valid = all(v["valid"] for _, v, _ in results)
    t = time.time()
    path = run.run_dir.parent / "results" / f"bench-{time.strftime('%Y%m%d-%H%M%S', time.localtime(t))}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    validity = {"valid": valid, "per_head_dim": [v for _, v, _ in results]}
    commit = head_commit(run.csrc.parent)
    record = bench_record_json(rows, run.run_dir.parent.name, t, valid, validity, commit)
    path.write_text(json.dumps(record), encoding="utf-8")
    return path
