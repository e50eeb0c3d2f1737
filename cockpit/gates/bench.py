"""The Benchmark gate: the workload's candidates against its timed references, measured the same
way in one child Python; the speedup class against the baseline reference ("0.81x vs
torch.softmax"), the validity verdict from the GPU's own NVML samples, keep or revert against the
best earlier valid run of the same workload, and every row as a share of the GPU's peak."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from typing import Any

from cockpit.analysis.decide import SpeedupThresholds, decide
from cockpit.analysis.keep import (
    BenchRecord,
    bench_history,
    bench_record_json,
    decide_keep,
    head_commit,
    hold_launch_bound,
    rows_geomean,
    rows_interval,
)
from cockpit.analysis.results.bench import ATTENTION_LABELS
from cockpit.analysis.results.keep import KeepResult
from cockpit.analysis.results.validity import BenchValidity
from cockpit.config import Thresholds
from cockpit.errors import CockpitError
from cockpit.gates.bench_validity import judge_probe_window
from cockpit.gates.gate import GateContext, GateStatus, Verdict
from cockpit.gates.probe_call import ShapeCounter, probe_argv, read_result
from cockpit.hardware.peaks import peak_for, share_of_peak
from cockpit.session.paths import stored_path
from cockpit.workload.describe import cached
from cockpit.workload.kernel_files import kernel_paths
from cockpit.workload.manifest import Manifest

SCHEMA = 2
"""The bench result's schema: 2 names the workload, its baseline and its references (1: the
attention kernel against SDPA, before workloads)."""


class BenchGate:
    """Ours against the workload's timed references per shape, timed the same way in one child."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return probe_argv(ctx, "bench")

    def tracker(self, ctx: GateContext) -> ShapeCounter:
        return ShapeCounter()

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        return judge_measured(ctx, read_result(ctx, exit_code, tail))


def judge_measured(ctx: GateContext, data: dict[str, Any]) -> Verdict:
    """Validity, keep or revert, and the speedup class of one bench's measurements (the probe's,
    or a replaced command's structured result)."""
    add_peaks(data)
    labels = data.get("labels") or {}
    validity = judge_probe_window(data, ctx.config.thresholds)
    validity["baseline"] = data.get("baseline")
    validity["baseline_label"] = labels.get(data.get("baseline"), data.get("baseline"))
    t = time.time()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(t))
    record_path = ctx.session_dir / "results" / f"bench-{stamp}.json"
    record_path.parent.mkdir(parents=True, exist_ok=True)
    commit = head_commit(ctx.workspace)
    history = bench_history(ctx.workspace / "sessions")  # read once: the hold and keep/revert
    hold_launch_bound(data["rows"], history, ctx.session_dir.name,
                      data.get("workload"))  # the headline covers the configs the run before did
    record = bench_record_json(data["rows"], ctx.session_dir.name, t, validity["valid"], validity, commit)
    record["workload"] = data.get("workload")
    record_path.write_text(json.dumps(record), encoding="utf-8")
    current = BenchRecord(record_path, ctx.session_dir.name, t, validity["valid"],
                          {r["config"]: r["impl"]["ours"]["median_ms"] for r in data["rows"]
                           if "ours" in r["impl"]}, commit, data.get("workload"))
    keep = decide_keep(current, history, ctx.objective,
                       ctx.config.thresholds.keep_improvement)
    keep_json = KeepResult(keep.action, keep.summary, keep.improvement, keep.shared_configs,
                           keep.commit_message,
                           stored_path(keep.reference.path, ctx.workspace) if keep.reference else None,
                           tuple(kernel_paths(ctx.config.workload, _manifest(ctx)))).to_json()
    return judge_bench(data, validity, keep_json, ctx.config.thresholds,
                       stored_path(record_path, ctx.workspace))


def _manifest(ctx: GateContext) -> Manifest | None:
    """The workload's manifest when known without asking a child (the env gate and `cockpit
    workload show` leave it cached)."""
    try:
        return cached(ctx.workspace, ctx.config, ctx.python)
    except CockpitError:
        return None


def add_peaks(data: dict[str, Any]) -> None:
    """Each implementation's share of the card's peak (compute for its dtype, memory bandwidth)."""
    peak = peak_for(data.get("device"))
    data["peak"] = None if peak is None else {"gpu": peak.gpu, "tflops": dict(peak.tflops),
                                              "memory_gbps": peak.memory_gbps, "source": peak.source}
    for row in data["rows"]:
        dtype = row.get("dtype") if isinstance(row.get("dtype"), str) else None
        for cell in row.get("impl", {}).values():
            cell["pct_peak"] = share_of_peak(peak, dtype, cell.get("tflops"), cell.get("gbps"))


def judge_bench(data: dict[str, Any], validity: dict[str, Any], keep: dict[str, Any],
                thresholds: Thresholds, record_path: str) -> Verdict:
    rows = data["rows"]
    baseline = str(data.get("baseline") or "sdpa")
    labels: dict[str, str] = {**ATTENTION_LABELS, **(data.get("labels") or {})}
    timed = [i for i in dict.fromkeys(i for r in rows for i in r.get("impl", {})) if i not in
             (data.get("candidates") or ["ours"])]
    vs = {ref: g for ref in timed if (g := rows_geomean(rows, f"speedup_vs_{ref}")) is not None}
    if baseline not in vs:
        return Verdict("error", "no shape produced a time for both ours and "
                       f"{labels.get(baseline, baseline)}",
                       {"schema": SCHEMA, "workload": data.get("workload") or "attention",
                        "baseline": baseline,
                        "labels": labels, "rows": rows, "validity": validity})
    geomean, configs = vs[baseline]
    # The typical kernel of the sweep decides whether launches dominate (the smallest always will).
    typical_ms = statistics.median(r["impl"]["ours"]["median_ms"] for r in rows if "ours" in r["impl"])
    d = decide(geomean, typical_ms, SpeedupThresholds(thresholds.speedup_critical, thresholds.speedup_high,
                                                       thresholds.speedup_medium))
    status: GateStatus = "fail" if d.level == "CRITICAL" else "warn" if d.level == "HIGH" else "pass"
    if not validity["valid"] and status == "pass":
        status = "warn"
    interval = rows_interval(rows, f"speedup_vs_{baseline}")
    spread = f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else ""
    bound = [str(r.get("config")) for r in rows if r.get("launch_bound") is True]
    held = sum(1 for r in rows if r.get("launch_bound_held"))
    kept = f", {held} held as in the run before" if held else ""
    apart = f" ({len(bound)} launch-bound apart{kept})" if bound and len(bound) < len(rows) else \
        " (every config launch-bound)" if bound else ""
    summary = (f"{geomean:.2f}x{spread} vs {labels.get(baseline, baseline)} ({d.level}) over {configs} "
               f"configs{apart}")
    for ref in data.get("compared") or ["flash"]:
        if ref == baseline or ref not in vs:
            continue
        summary += f", {vs[ref][0]:.2f}x vs {labels.get(ref, ref)}"
        # A geomean over small and large sizes can read as parity while the sizes that matter
        # lose: the worst config is said with it.
        key = f"speedup_vs_{ref}"
        worst = min((r for r in rows if r.get(key)), key=lambda r: r[key])
        if worst[key] < 1.0:
            summary += f" (worst {worst[key]:.2f}x at {worst['config']})"
    read = BenchValidity.from_json(validity)
    summary += "; " + (read.words() if read is not None else "SUSPECT: no validity verdict")
    result = {"schema": SCHEMA, "workload": data.get("workload") or "attention",
              "source": data.get("source"),
              "ours": "ours", "candidates": data.get("candidates") or ["ours"], "baseline": baseline,
              "labels": {i: labels.get(i, i) for i in ["ours", *timed]},
              "rows": rows, "device": data.get("device"), "gpu": data.get("gpu"), "peak": data.get("peak"),
              "geomean_speedup": geomean, "configs": configs, "vs": {ref: g[0] for ref, g in vs.items()},
              "interval": list(interval) if interval else None, "launch_bound": bound,
              "level": d.level, "next_step": d.next_step, "tool": d.tool,
              "profile_first": d.profile_first, "validity": validity, "keep": keep, "record": record_path}
    if "flash" in vs:
        result["geomean_vs_flash"] = vs["flash"][0]
    return Verdict(status, summary, result)
