"""The Benchmark gate: the workload's candidates against its timed references, measured the same
way in one child Python; the speedup class against the baseline reference ("0.81x vs
torch.softmax") over every config, on device time; the validity verdict from the GPU's own NVML
samples, keep or revert against the best earlier valid run of the same workload, and every row as
a share of the GPU's peak. A candidate or reference that crashed at one config fails the gate in
one line naming both, the rows measured before it kept."""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from cockpit import before_workloads
from cockpit.analysis.bench_notes import equal_clock_speedup, host_bound_note
from cockpit.analysis.decide import URGENCY, Decision, SpeedupThresholds, decide
from cockpit.analysis.keep import (
    BenchRecord,
    KeepResult,
    bench_record,
    decide_keep,
    rows_geomean,
    rows_interval,
)
from cockpit.analysis.speed_of_light import Impossible, impossible
from cockpit.config import Thresholds
from cockpit.errors import CockpitError
from cockpit.gates.bench.blocks import label_of
from cockpit.gates.bench.past import COUNTS, past_benches
from cockpit.gates.bench.result import SCHEMA, SPEEDUP_PREFIX, BenchResult
from cockpit.gates.bench.validity import BenchValidity
from cockpit.gates.bench.validity_rules import probe_validity
from cockpit.gates.gate import GateContext, GateStatus, Verdict
from cockpit.gates.probe_call import ShapeCounter, probe_argv, read_result
from cockpit.hardware.peaks import peak_for, share_of_peak
from cockpit.json_fields import JsonObject, as_number, compact, obj, objects, strings, text
from cockpit.workload.describe import cached
from cockpit.workload.kernel_files import kernel_paths
from cockpit.workload.manifest import Manifest


class BenchGate:
    """Ours against the workload's timed references per shape, timed the same way in one child."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return probe_argv(ctx, "bench")

    def tracker(self, ctx: GateContext) -> ShapeCounter:
        return ShapeCounter()

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        return judge_measured(ctx, before_workloads.bench_probe(read_result(ctx, exit_code, tail)))


def judge_measured(ctx: GateContext, data: JsonObject, harness: str | None = None) -> Verdict:
    """Validity, keep or revert, and the speedup class of one bench's measurements (the probe's,
    or, `harness` naming it, a replaced command's structured result)."""
    data = with_peaks({**data, "workload": text(data.get("workload")) or _workload_name(ctx)})
    validity = _named_baseline(probe_validity(data, ctx.config.thresholds), data)
    rows = [dict(r) for r in objects(data.get("rows"))]
    refused = refusals({**data, "rows": rows})  # a time the card cannot reach decides nothing
    crashed = crash_line(data)  # the configs after the crash were never measured
    counts = not refused and crashed is None
    current = bench_record(f"{ctx.session_dir.name}/{ctx.run_id}", time.time(), rows, "ours",
                           text(data.get("workload")), validity.valid and counts,
                           validity.decidable and counts, validity.suspect_configs,
                           ", ".join(validity.suspect_why))
    paths = tuple(kernel_paths(ctx.config.workload, _manifest(ctx)))
    if crashed is not None:
        kept = _after_crash(data, crashed, paths)
    elif refused:  # never a keep, never a best: the time is not the kernel's
        first = refused[0]
        kept = KeepResult("revert", f"REVERT: {first.line(label_of(data, first.impl))}", None, 0, "", None,
                          paths)
    else:
        kept = _keep_or_revert(ctx, current, paths)
    verdict = judge_bench({**data, "rows": rows, **({} if counts else {COUNTS: False})}, validity, kept,
                          ctx.config.thresholds, None, harness)
    if crashed is not None:
        return replace(verdict, status="fail", summary=crashed)
    return refuse(verdict, refused, data) if refused else verdict


def _workload_name(ctx: GateContext) -> str:
    """What a replaced command that names no workload measured: the configured workload's name."""
    w = ctx.config.workload
    return PurePosixPath((w.module or w.gpumode or w.kernelbench).rstrip("/")).stem or "workload"


def _named_baseline(validity: BenchValidity, data: JsonObject) -> BenchValidity:
    """The verdict with the baseline it judged against, and that baseline's label."""
    baseline = text(data.get("baseline"))
    return replace(validity, baseline=baseline,
                   baseline_label=text(obj(data.get("labels")).get(baseline or "")) or baseline)


def _after_crash(data: JsonObject, crashed: str, paths: tuple[str, ...]) -> KeepResult:
    """A candidate that crashed is reverted; a reference that crashed decides nothing."""
    if text(obj(data.get("crash")).get("impl")) in (strings(data.get("candidates")) or ("ours",)):
        return KeepResult("revert", f"REVERT: {crashed}", None, 0, "", None, paths)
    return KeepResult("baseline", f"{crashed}: a reference that crashes decides nothing", None, 0, "",
                      None, paths)


def _keep_or_revert(ctx: GateContext, current: BenchRecord, paths: tuple[str, ...]) -> KeepResult:
    """Keep or revert this bench against the workspace's earlier ones (the objective decides)."""
    keep = decide_keep(current, past_benches(ctx.workspace), ctx.objective,
                       ctx.config.thresholds.keep_improvement)
    return replace(keep, paths=paths)


def crash_line(data: JsonObject) -> str | None:
    """'past_end crashed at N=4194304: illegal memory access': the probe's record of an
    implementation that crashed at one config (the rows before it are kept); None when none did."""
    crash = obj(data.get("crash"))
    if not crash:
        return None
    impl = text(crash.get("impl")) or "an implementation"
    error = (text(crash.get("error")) or "no error recorded").strip().splitlines()
    config = text(crash.get("config")) or "a config"
    return f"{label_of(data, impl)} crashed at {config}: {error[0] if error else '?'}"


def refusals(data: JsonObject) -> list[Impossible]:
    """Every candidate's time the card cannot reach (cockpit/analysis/speed_of_light.py), row by row."""
    peak = peak_for(text(data.get("device")))
    candidates = strings(data.get("candidates")) or ("ours",)
    found = []
    for row in objects(data.get("rows")):
        cells = obj(row.get("impl"))
        for impl in candidates:
            ms = as_number(obj(cells.get(impl)).get("median_ms"))
            if ms is None:
                continue
            hit = impossible(impl, text(row.get("config")) or "?", ms, peak, as_number(row.get("bytes")),
                             as_number(row.get("flops")), text(row.get("dtype")))
            if hit is not None:
                found.append(hit)
    return found


def refuse(verdict: Verdict, refused: Sequence[Impossible], data: JsonObject) -> Verdict:
    """The bench fails in one line naming the first impossible time (and how many there were)."""
    first = refused[0]
    more = f" ({len(refused)} times refused)" if len(refused) > 1 else ""
    return replace(verdict, status="fail", summary=f"{first.line(label_of(data, first.impl))}{more}; "
                   f"the bench decides nothing until it is explained")


def _ours_ms(rows: Sequence[JsonObject]) -> dict[str, float]:
    """Our median per config (what keep/revert compares)."""
    return {str(r.get("config")): ms for r in rows
            if (ms := as_number(obj(obj(r.get("impl")).get("ours")).get("median_ms"))) is not None}


def _manifest(ctx: GateContext) -> Manifest | None:
    """The workload's manifest when known without asking a child (the env gate and `cockpit
    workload show` leave it cached)."""
    try:
        return cached(ctx.workspace, ctx.config, ctx.python)
    except CockpitError:
        return None


def with_peaks(data: JsonObject) -> dict[str, object]:
    """The measurements with each implementation's share of the card's peak (compute for its
    dtype, memory bandwidth), and the peak itself."""
    peak = peak_for(text(data.get("device")))
    rows = []
    for row in objects(data.get("rows")):
        dtype = text(row.get("dtype"))
        impl = {name: {**cell, "pct_peak": share_of_peak(peak, dtype, as_number(cell.get("tflops")),
                                                         as_number(cell.get("gbps")))}
                for name, cell in ((n, obj(c)) for n, c in obj(row.get("impl")).items())}
        rows.append({**row, "impl": impl})
    return {**data, "rows": rows, "peak": None if peak is None else {
        "gpu": peak.gpu, "tflops": dict(peak.tflops), "memory_gbps": peak.memory_gbps, "source": peak.source}}


def judge_bench(data: JsonObject, validity: BenchValidity | None, keep: KeepResult | None,
                thresholds: Thresholds, record_path: str | None, harness: str | None = None) -> Verdict:
    """The verdict on one bench's rows: ours against the baseline as a geometric mean over every
    config the validity verdict vouches for (all of them, on a clean run) with its speedup class,
    against each other compared reference, the implementations whose host cannot keep up in eager
    use, the speedup at equal clocks where ours and the baseline ran at different ones, and the
    validity verdict in words."""
    every = objects(data.get("rows"))
    rows = _headline_rows(every, validity)
    baseline = text(data.get("baseline")) or ""
    labels = _labels(data)
    candidates = strings(data.get("candidates")) or ("ours",)
    timed = _references(every, candidates)
    vs = _versus(rows, timed)
    result = BenchResult(
        schema=SCHEMA, workload=text(data.get("workload")) or "", ours="ours",
        candidates=candidates,
        baseline=baseline, labels=labels, speedup=None, configs=None, vs={}, device=text(data.get("device")),
        validity=validity, keep=keep, source=text(data.get("source")), raw_rows=every, record=record_path,
        raw=compact({"gpu": data.get("gpu"), "peak": data.get("peak"), "harness": harness,
                     COUNTS: data.get(COUNTS)}))
    if baseline not in vs:
        return Verdict("error", "no shape produced a time for both ours and "
                       f"{labels.get(baseline, baseline) or 'a baseline (the workload names none)'}",
                       result.to_json())
    geomean, configs = vs[baseline]
    d = _decision(rows, geomean, thresholds)
    interval = rows_interval(rows, SPEEDUP_PREFIX + baseline)
    equal = _equal_clocks(rows, validity, baseline)
    by_mode = mode_speedups(rows, baseline)
    summary = (f"{geomean:.2f}x{_spread(interval)} vs {labels.get(baseline, baseline)} ({URGENCY[d.level]}) "
               f"over {configs} configs{_modes_words(by_mode)}{_at_equal_words(equal)}"
               f"{_against_others(data, rows, baseline, vs, labels)}"
               f"{_left_out(validity, len(every) - len(rows))}{host_bound_note(every, labels)}; "
               + _validity_words(validity))
    result = replace(result, labels={i: labels.get(i, i) for i in ["ours", *timed]}, speedup=geomean,
                     configs=configs, vs={ref: g[0] for ref, g in vs.items()}, interval=interval,
                     level=d.level, next_step=d.next_step, modes=by_mode,
                     raw={**result.raw, "tool": d.tool, "profile_first": d.profile_first,
                          **compact({"equal_clock_speedup": equal})})
    return Verdict(_status(d, validity), summary, result.to_json())


def _headline_rows(every: Sequence[JsonObject], validity: BenchValidity | None) -> list[JsonObject]:
    """The rows the headline is over: those the validity verdict vouches for (every row when it
    vouches for none, so a headline is always said)."""
    suspect = set(validity.suspect_configs) if validity is not None else set()
    return [r for r in every if str(r.get("config")) not in suspect] or list(every)


def _labels(data: JsonObject) -> dict[str, str]:
    """Each implementation's label, as the probe names it."""
    return {k: v for k, n in obj(data.get("labels")).items() if (v := text(n)) is not None}


def _references(every: Sequence[JsonObject], candidates: Sequence[str]) -> list[str]:
    """The timed implementations that are not candidates, in the order the rows first name them."""
    return [i for i in dict.fromkeys(i for r in every for i in obj(r.get("impl"))) if i not in candidates]


def _versus(rows: Sequence[JsonObject], timed: Sequence[str]) -> dict[str, tuple[float, int]]:
    """Ours against each reference: its geometric mean and over how many configs (where any)."""
    return {ref: g for ref in timed if (g := rows_geomean(rows, SPEEDUP_PREFIX + ref)) is not None}


def _spread(interval: tuple[float, float] | None) -> str:
    """' [1.21, 1.35]': the headline's interval, where every row has one."""
    return f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else ""


def _at_equal_words(equal: float | None) -> str:
    """', 1.30x at equal clocks': said only where ours and the baseline ran at different clocks."""
    return f", {equal:.2f}x at equal clocks" if equal is not None else ""


def _modes_words(by_mode: Mapping[str, float]) -> str:
    """' (forward 1.20x, backward 0.90x)': each mode's speedup, for a bench with backward modes."""
    return f" ({', '.join(f'{m} {v:.2f}x' for m, v in by_mode.items())})" if by_mode else ""


def _validity_words(validity: BenchValidity | None) -> str:
    """The validity verdict in words (a bench without one is suspect)."""
    return validity.words() if validity is not None else "SUSPECT: no validity verdict"


def _mode(row: JsonObject) -> str:
    """The mode a row timed ("forward" for a row from a bench of the forward alone)."""
    return text(row.get("mode")) or "forward"


def mode_speedups(rows: Sequence[JsonObject], baseline: str) -> dict[str, float]:
    """Mode -> ours' geometric mean over the baseline in it, in the order the rows ran ("forward",
    "backward", "full"); empty when every row is a forward row (a bench of the forward alone)."""
    if not any("mode" in r for r in rows):
        return {}
    order = list(dict.fromkeys(_mode(r) for r in rows))
    found = {mode: rows_geomean([r for r in rows if _mode(r) == mode],
                                SPEEDUP_PREFIX + baseline) for mode in order}
    return {mode: g[0] for mode, g in found.items() if g is not None}


def _decision(rows: Sequence[JsonObject], geomean: float, thresholds: Thresholds) -> Decision:
    """The speedup class; the typical kernel of the sweep decides whether launches dominate (the
    smallest always will)."""
    typical_ms = statistics.median(_ours_ms(rows).values())
    return decide(geomean, typical_ms, SpeedupThresholds(
        thresholds.speedup_critical, thresholds.speedup_high, thresholds.speedup_medium))


def _status(d: Decision, validity: BenchValidity | None) -> GateStatus:
    """CRITICAL fails, HIGH warns, and so does a pass measured on a GPU that was not clean."""
    if d.level == "CRITICAL":
        return "fail"
    if d.level == "HIGH" or validity is None or not validity.valid:
        return "warn"
    return "pass"


def _left_out(validity: BenchValidity | None, left: int) -> str:
    """'; 6 left out: blocks never clean': the configs the headline leaves to the validity verdict."""
    if validity is None or not left:
        return ""
    return f"; {left} left out: {', '.join(validity.suspect_why) or 'suspect'}"


def _equal_clocks(rows: Sequence[JsonObject], validity: BenchValidity | None, baseline: str) -> float | None:
    """The speedup at equal clocks (cycle space), where ours and the baseline ran at materially
    different SM clocks; None where they did not, or no config has both clocks."""
    if validity is None:
        return None
    material = any(c.get("baseline") == baseline and c.get("material") is True
                   for c in objects(validity.raw.get("comparisons")))
    found = equal_clock_speedup(rows, SPEEDUP_PREFIX + baseline, validity.config_mhz, "ours", baseline)
    return found[0] if material and found is not None else None


def _against_others(data: JsonObject, rows: Sequence[JsonObject], baseline: str,
                    vs: Mapping[str, tuple[float, int]], labels: Mapping[str, str]) -> str:
    """Ours against each other compared reference. A geomean over small and large sizes can read
    as parity while the sizes that matter lose: the worst config is said with it."""
    said = ""
    for ref in strings(data.get("compared")):
        if ref == baseline or ref not in vs:
            continue
        said += f", {vs[ref][0]:.2f}x vs {labels.get(ref, ref)}"
        key = SPEEDUP_PREFIX + ref
        speedups = [(v, str(r.get("config"))) for r in rows if (v := as_number(r.get(key)))]
        worst = min(speedups, key=lambda s: s[0], default=None)
        if worst is not None and worst[0] < 1.0:
            said += f" (worst {worst[0]:.2f}x at {worst[1]})"
    return said
