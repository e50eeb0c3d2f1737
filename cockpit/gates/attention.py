"""The Correctness and Benchmark gates: the workload kernel against a float32 reference, and
against PyTorch's SDPA measured the same way in the same process."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cockpit.analysis.decide import SpeedupThresholds, decide
from cockpit.analysis.keep import (
    BenchRecord,
    bench_history,
    bench_record_json,
    decide_keep,
    head_commit,
    rows_geomean,
)
from cockpit.config import Thresholds
from cockpit.errors import CockpitError
from cockpit.gates.bench_validity import judge_probe_window, validity_words
from cockpit.gates.gate import GateContext, GateStatus, Progress, Verdict
from cockpit.session.paths import stored_path

PROBE = Path(__file__).resolve().parent.parent / "probes" / "attention_probe.py"


def config_name(cfg: dict[str, Any]) -> str:
    """How a config is named in results: the probe names it the same way (it runs without
    the cockpit importable, so it keeps its own copy of these two lines)."""
    causal = "causal" if cfg["causal"] else "full"
    return f"B{cfg['B']} H{cfg['H']} S{cfg['S']} D{cfg['D']} {cfg['dtype']} {causal}"


class ConfigCounter:
    """Progress as configs done / configs planned, from the probe's one line per config."""

    def __init__(self, total: int, marks: tuple[str, ...]) -> None:
        self.total = max(1, total)
        self.done = 0
        self.marks = marks

    def feed(self, lines: list[str], elapsed_s: float) -> Progress | None:
        new = sum(1 for line in lines if line.startswith(self.marks))
        if not new:
            return None
        self.done += new
        per = elapsed_s / self.done
        return Progress(min(1.0, self.done / self.total), per * (self.total - self.done),
                        f"{self.done}/{self.total} configs")


def _probe_argv(ctx: GateContext, mode: str) -> tuple[str, ...]:
    w = ctx.config.workload
    configs = w.configs() if mode == "bench" else w.correctness_configs()
    argv = [ctx.python, str(PROBE), mode, "--workspace", str(ctx.workspace), "--out",
            str(ctx.result_path), "--configs", json.dumps(configs),
            "--tolerance", json.dumps({"fp16": w.tolerance, "bf16": w.tolerance})]
    if mode == "bench":
        argv += ["--reps", str(w.reps), "--warmup", str(w.warmup), "--settle-ms", f"{w.settle_ms:g}",
                 "--rounds", str(w.rounds)]
    return tuple(argv)


def _read(ctx: GateContext, exit_code: int, tail: Sequence[str]) -> dict[str, Any]:
    last = next((line.strip() for line in reversed(tail) if line.strip()
                 and not line.startswith("#")), "")
    if exit_code == 2:
        raise CockpitError(last or "the probe could not run")
    try:
        data = json.loads(ctx.result_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CockpitError(f"the probe exited {exit_code} without a result: {last or exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise CockpitError(f"{ctx.result_path}: not a probe result; run the gate again")
    return data


class CorrectnessGate:
    """Every correctness config against a float32 reference, in a child python (the catalog names it)."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return _probe_argv(ctx, "correctness")

    def tracker(self, ctx: GateContext) -> ConfigCounter:
        return ConfigCounter(len(ctx.config.workload.correctness_configs()), ("PASS ", "FAIL "))

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        return judge_correctness(_read(ctx, exit_code, tail), len(ctx.config.workload.correctness_configs()))


def judge_correctness(data: dict[str, Any], planned: int) -> Verdict:
    rows = data["rows"]
    result = {"rows": rows, "device": data.get("device"), "gpu": data.get("gpu")}
    failed = next((r for r in rows if not r.get("ok")), None)
    if failed is not None:
        why = (f"{failed['nonfinite']} NaN/Inf" if failed["nonfinite"]
               else f"rel L2 {failed['rel_l2']:.2e} > {failed['tolerance']:g}")
        return Verdict("fail", f"FAILS at {failed['config']}: {why} (max |Δ| {failed['max_abs']:.2e}); "
                       f"{len(rows) - 1} smaller configs passed", result)
    if not rows:
        return Verdict("error", "no config was checked", result)
    worst = max(rows, key=lambda r: r["rel_l2"])
    return Verdict("pass", f"all {len(rows)}/{planned} configs correct; worst rel L2 "
                   f"{worst['rel_l2']:.1e} at {worst['config']}", result)


class BenchGate:
    """Ours against SDPA (and FLASH, cuDNN) per config, timed the same way in one child python."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return _probe_argv(ctx, "bench")

    def tracker(self, ctx: GateContext) -> ConfigCounter:
        return ConfigCounter(len(ctx.config.workload.configs()), ("B",))

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        data = _read(ctx, exit_code, tail)
        validity = judge_probe_window(data, ctx.config.thresholds)
        t = time.time()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(t))
        record_path = ctx.session_dir / "results" / f"bench-{stamp}.json"
        commit = head_commit(ctx.workspace)
        record = bench_record_json(data["rows"], ctx.session_dir.name, t, validity["valid"],
                                   validity, commit)
        record_path.write_text(json.dumps(record), encoding="utf-8")
        current = BenchRecord(record_path, ctx.session_dir.name, t, validity["valid"],
                              {r["config"]: r["impl"]["ours"]["median_ms"] for r in data["rows"]
                               if "ours" in r["impl"]}, commit)
        keep = decide_keep(current, bench_history(ctx.workspace / "sessions"), ctx.objective,
                           ctx.config.thresholds.keep_improvement)
        keep_json = {"action": keep.action, "summary": keep.summary,
                     "improvement": keep.improvement, "shared_configs": keep.shared_configs,
                     "commit_message": keep.commit_message,
                     "reference": stored_path(keep.reference.path, ctx.workspace) if keep.reference
                     else None}
        return judge_bench(data, validity, keep_json, ctx.config.thresholds,
                           stored_path(record_path, ctx.workspace))


def judge_bench(data: dict[str, Any], validity: dict[str, Any], keep: dict[str, Any],
                thresholds: Thresholds, record_path: str) -> Verdict:
    rows = data["rows"]
    vs_sdpa = rows_geomean(rows, "speedup_vs_sdpa")
    if vs_sdpa is None:
        return Verdict("error", "no config produced a time for both ours and SDPA",
                       {"rows": rows, "validity": validity})
    geomean, configs = vs_sdpa
    vs_flash = rows_geomean(rows, "speedup_vs_flash")
    # The typical kernel of the sweep decides whether launches dominate (the smallest always will).
    typical_ms = statistics.median(r["impl"]["ours"]["median_ms"] for r in rows if "ours" in r["impl"])
    d = decide(geomean, typical_ms, SpeedupThresholds(thresholds.speedup_critical,
                                                       thresholds.speedup_high,
                                                       thresholds.speedup_medium))
    status: GateStatus = "fail" if d.level == "CRITICAL" else "warn" if d.level == "HIGH" else "pass"
    if not validity["valid"] and status == "pass":
        status = "warn"
    summary = f"{geomean:.2f}x vs SDPA ({d.level}) over {configs} configs"
    if vs_flash is not None:
        summary += f", {vs_flash[0]:.2f}x vs FLASH"
        # A geomean over small and large sizes can read as parity while the sizes that matter
        # lose: the worst config is said with it.
        worst = min((r for r in rows if r.get("speedup_vs_flash")), key=lambda r: r["speedup_vs_flash"])
        if worst["speedup_vs_flash"] < 1.0:
            summary += f" (worst {worst['speedup_vs_flash']:.2f}x at {worst['config']})"
    summary += "; " + validity_words(validity)
    result = {"rows": rows, "device": data.get("device"), "gpu": data.get("gpu"), "geomean_speedup": geomean,
              "geomean_vs_flash": vs_flash[0] if vs_flash else None,
              "level": d.level, "next_step": d.next_step, "tool": d.tool,
              "profile_first": d.profile_first, "validity": validity, "keep": keep,
              "record": record_path}
    return Verdict(status, summary, result)
