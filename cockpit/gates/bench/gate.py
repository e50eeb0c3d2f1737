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
from cockpit.analysis.decide import Decision, SpeedupThresholds, class_words, decide
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
from cockpit.gates.bench.checks import audit_missing
from cockpit.gates.bench.measured import Measured, MeasuredRow, read_measured, with_peaks
from cockpit.gates.bench.past import COUNTS, CRASHED_REFERENCE, past_benches
from cockpit.gates.bench.payoff import COMMIT, join
from cockpit.gates.bench.result import SCHEMA, SPEEDUP_PREFIX, BenchResult
from cockpit.gates.bench.validity import BenchValidity
from cockpit.gates.bench.validity_rules import probe_validity
from cockpit.gates.gate import GateContext, GateStatus, Verdict
from cockpit.gates.kernel_git import head_commit
from cockpit.gates.probe_call import ShapeCounter, probe_argv, read_result
from cockpit.hardware.peaks import Peak, peak_for
from cockpit.json_fields import compact
from cockpit.workload.describe import cached
from cockpit.workload.guards import off_line
from cockpit.workload.kernel_files import kernel_paths
from cockpit.workload.manifest import Manifest


class BenchGate:
    """Ours against the workload's timed references per shape, timed the same way in one child."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return probe_argv(ctx, "bench")

    def tracker(self, ctx: GateContext) -> ShapeCounter:
        return ShapeCounter()

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        probe_file = before_workloads.bench_probe(read_result(ctx, exit_code, tail))  # old files read as new
        return judge_measured(ctx, read_measured(probe_file))


def judge_measured(ctx: GateContext, measured: Measured, harness: str | None = None) -> Verdict:
    """Validity, keep or revert, and the speedup class of one bench's measurements (the probe's,
    or, `harness` naming it, a replaced command's structured result)."""
    measured = with_peaks(replace(measured, workload=measured.workload or _workload_name(ctx)))
    validity = _named_baseline(probe_validity(measured, ctx.config.thresholds), measured)
    refused = refusals(measured) if "speed-of-light" not in measured.guards_off else []  # decides nothing
    crashed = crash_line(measured) or caught_line(measured)  # the configs after it were never measured
    counts = not refused and crashed is None and not measured.guards_off
    current = bench_record(f"{ctx.session_dir.name}/{ctx.run_id}", time.time(), measured.row_json, "ours",
                           measured.workload, validity.valid and counts, validity.decidable and counts,
                           validity.suspect_configs, ", ".join(validity.suspect_why))
    paths = tuple(kernel_paths(ctx.config.workload, _manifest(ctx)))
    past: list[BenchRecord] = []  # a crashed or refused run decides nothing: no payoff either
    if crashed is not None:
        kept = _after_crash(measured, crashed, paths)
    elif refused:  # never a keep, never a best: the time is not the kernel's
        first = refused[0]
        kept = KeepResult("revert", f"REVERT: {first.line(measured.label(first.impl))}", None, 0, "", None,
                          paths)
    else:
        past = past_benches(ctx.workspace)
        kept = _keep_or_revert(ctx, current, paths, past)
    verdict = _with_payoff(ctx, judge_bench(measured, validity, kept, ctx.config.thresholds, harness, counts),
                           kept, current, past, paths)
    if crashed is not None:
        return unguarded(replace(verdict, status="fail", summary=crashed), measured)
    return unguarded(refuse(verdict, refused, measured) if refused else verdict, measured)


def unguarded(verdict: Verdict, measured: Measured) -> Verdict:
    """The verdict, saying first which checks the mutation test turned off (then it never passes),
    and that the timed outputs went unchecked where no oracle could check them, or the kernel
    records could not be read (never a pass: a check that could not run is no check passed)."""
    off = off_line(measured.guards_off)
    unchecked = measured.timed_unchecked
    unaudited = audit_missing(measured.row_json)
    if off is None and unchecked is None and unaudited is None:
        return verdict
    summary = verdict.summary + (f"; timed outputs not checked: {unchecked}" if unchecked else "")
    summary += f"; {unaudited}" if unaudited else ""
    return replace(verdict, status="warn" if verdict.status == "pass" else verdict.status,
                   summary=f"{off}; {summary}" if off else summary)


def _workload_name(ctx: GateContext) -> str:
    """What a replaced command that names no workload measured: the configured workload's name."""
    w = ctx.config.workload
    return PurePosixPath((w.module or w.gpumode or w.kernelbench).rstrip("/")).stem or "workload"


def _named_baseline(validity: BenchValidity, measured: Measured) -> BenchValidity:
    """The verdict with the baseline it judged against, and that baseline's label."""
    baseline = measured.baseline
    label = measured.labels.get(baseline or "") or baseline
    return replace(validity, baseline=baseline, baseline_label=label)


def _after_crash(measured: Measured, crashed: str, paths: tuple[str, ...]) -> KeepResult:
    """A candidate that crashed, or that a guard caught, is reverted; a reference that crashed
    decides nothing."""
    crash = measured.crash
    if measured.caught is not None or (crash is not None and crash.impl in measured.candidates):
        return KeepResult("revert", f"REVERT: {crashed}", None, 0, "", None, paths)
    return KeepResult("baseline", f"{crashed}: {CRASHED_REFERENCE}", None, 0, "",
                      None, paths)


def _keep_or_revert(ctx: GateContext, current: BenchRecord, paths: tuple[str, ...],
                    past: list[BenchRecord]) -> KeepResult:
    """Keep or revert this bench against the workspace's earlier ones (the objective decides)."""
    keep = decide_keep(current, past, ctx.objective, ctx.config.thresholds.keep_improvement)
    return replace(keep, paths=paths)


def _with_payoff(ctx: GateContext, verdict: Verdict, kept: KeepResult, current: BenchRecord,
                 past: list[BenchRecord], paths: tuple[str, ...]) -> Verdict:
    """The verdict's result with the commit the bench ran on and, when a profile of this session
    waited for a decided bench, what its fix realized (gates/bench/payoff.py)."""
    result = verdict.result
    if not isinstance(result, BenchResult):
        return verdict
    commit = head_commit(ctx.workspace)
    payoff = join(ctx.workspace, ctx.session_dir, ctx.run_id, kept, current, past, paths, commit) \
        if past else None
    raw = {**result.raw, **compact({COMMIT: commit, "payoff": payoff.to_json() if payoff else None})}
    return replace(verdict, result=replace(result, raw=raw))


def crash_line(measured: Measured) -> str | None:
    """'past_end crashed at N=4194304: illegal memory access': the probe's record of an
    implementation that crashed at one config (the rows before it are kept); None when none did."""
    crash = measured.crash
    if crash is None:
        return None
    error = (crash.error or "no error recorded").strip().splitlines()
    return (f"{measured.label(crash.impl or 'an implementation')} crashed at {crash.config or 'a config'}: "
            f"{error[0] if error else '?'}")


def caught_line(measured: Measured) -> str | None:
    """'ours: right when checked, wrong when timed (call 9 of shape N=4096): ...': a guard's catch
    during the bench, its line naming the shape (the configs after it were never measured); None
    when no guard caught anything."""
    caught = measured.caught
    if caught is None:
        return None
    return f"{measured.label(caught.impl)}: {caught.line}"


def refusals(measured: Measured) -> list[Impossible]:
    """Every candidate's time the card cannot reach (cockpit/analysis/speed_of_light.py), row by row."""
    peak = peak_for(measured.device)
    found = []
    for row in measured.rows:
        for impl in measured.candidates:
            ms = row.median_ms(impl)
            if ms is None:
                continue
            hit = impossible(impl, row.config, ms, peak, row.bytes, row.flops, row.dtype)
            if hit is not None:
                found.append(hit)
    return found


def refuse(verdict: Verdict, refused: Sequence[Impossible], measured: Measured) -> Verdict:
    """The bench fails in one line naming the first impossible time (and how many there were)."""
    first = refused[0]
    more = f" ({len(refused)} times refused)" if len(refused) > 1 else ""
    return replace(verdict, status="fail", summary=f"{first.line(measured.label(first.impl))}{more}; "
                   f"the bench decides nothing until it is explained")


def _ours_ms(rows: Sequence[MeasuredRow]) -> dict[str, float]:
    """Our median per config (what keep/revert compares)."""
    return {r.config: ms for r in rows if (ms := r.median_ms("ours")) is not None}


def _manifest(ctx: GateContext) -> Manifest | None:
    """The workload's manifest when known without asking a child (the env gate and `cockpit
    workload show` leave it cached)."""
    try:
        return cached(ctx.workspace, ctx.config, ctx.python)
    except CockpitError:
        return None


def _peak_json(peak: Peak | None) -> dict[str, object] | None:
    return None if peak is None else {"gpu": peak.gpu, "tflops": dict(peak.tflops),
                                      "memory_gbps": peak.memory_gbps, "source": peak.source}


def judge_bench(measured: Measured, validity: BenchValidity | None, keep: KeepResult | None,
                thresholds: Thresholds, harness: str | None = None, counts: bool = True) -> Verdict:
    """The verdict on one bench's rows: ours against the baseline as a geometric mean over every
    config the validity verdict vouches for (all of them, on a clean run) with its speedup class,
    against each other compared reference, the implementations whose host cannot keep up in eager
    use, the speedup at equal clocks where ours and the baseline ran at different ones, and the
    validity verdict in words. A bench that does not `counts` (a crash, an impossible time) is
    never a reference for a later one (gates/bench/past.py)."""
    every = measured.rows
    rows = _headline_rows(every, validity)
    baseline = measured.baseline or ""
    labels = dict(measured.labels)
    candidates = measured.candidates
    timed = _references(every, candidates)
    vs = _versus(rows, timed)
    result = BenchResult(
        schema=SCHEMA, workload=measured.workload or "", ours="ours",
        candidates=candidates, baseline=baseline, labels=labels, speedup=None, configs=None, vs={},
        device=measured.device, validity=validity, keep=keep, source=measured.source,
        raw_rows=tuple(measured.row_json), record=None,
        raw=compact({"gpu": measured.gpu_json, "peak": _peak_json(measured.peak), "harness": harness,
                     COUNTS: None if counts else False}))
    if baseline not in vs:
        return Verdict("error", "no shape produced a time for both ours and "
                       f"{labels.get(baseline, baseline) or 'a baseline (the workload names none)'}", result)
    geomean, configs = vs[baseline]
    interval = rows_interval([r.json for r in rows], SPEEDUP_PREFIX + baseline)
    d = _decision(rows, geomean, thresholds, interval)
    equal = _equal_clocks(rows, validity, baseline)
    by_mode = mode_speedups(rows, baseline)
    summary = (f"{geomean:.2f}x{_spread(interval)} vs {labels.get(baseline, baseline)} "
               f"({class_words(d.level, interval)}) over {configs} configs{_modes_words(by_mode)}"
               f"{_at_equal_words(equal)}"
               f"{_against_others(measured, rows, baseline, vs, labels)}"
               f"{_left_out(validity, len(every) - len(rows))}{host_bound_note(measured.row_json, labels)}; "
               + _validity_words(validity))
    result = replace(result, labels={i: labels.get(i, i) for i in ["ours", *timed]}, speedup=geomean,
                     configs=configs, vs={ref: g[0] for ref, g in vs.items()}, interval=interval,
                     level=d.level, next_step=d.next_step, modes=by_mode,
                     raw={**result.raw, "tool": d.tool, "profile_first": d.profile_first,
                          **compact({"equal_clock_speedup": equal})})
    return Verdict(_status(d, validity), summary, result)


def _headline_rows(every: Sequence[MeasuredRow], validity: BenchValidity | None) -> list[MeasuredRow]:
    """The rows the headline is over: those the validity verdict vouches for (every row when it
    vouches for none, so a headline is always said)."""
    suspect = set(validity.suspect_configs) if validity is not None else set()
    return [r for r in every if r.config not in suspect] or list(every)


def _references(every: Sequence[MeasuredRow], candidates: Sequence[str]) -> list[str]:
    """The timed implementations that are not candidates, in the order the rows first name them."""
    return [i for i in dict.fromkeys(i for r in every for i in r.cells) if i not in candidates]


def _versus(rows: Sequence[MeasuredRow], timed: Sequence[str]) -> dict[str, tuple[float, int]]:
    """Ours against each reference: its geometric mean and over how many configs (where any)."""
    stored = [r.json for r in rows]
    return {ref: g for ref in timed if (g := rows_geomean(stored, SPEEDUP_PREFIX + ref)) is not None}


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


def mode_speedups(rows: Sequence[MeasuredRow], baseline: str) -> dict[str, float]:
    """Mode -> ours' geometric mean over the baseline in it, in the order the rows ran ("forward",
    "backward", "full"); empty when every row is a forward row (a bench of the forward alone)."""
    if all(r.mode is None for r in rows):
        return {}
    order = list(dict.fromkeys(r.mode or "forward" for r in rows))
    found = {mode: rows_geomean([r.json for r in rows if (r.mode or "forward") == mode],
                                SPEEDUP_PREFIX + baseline) for mode in order}
    return {mode: g[0] for mode, g in found.items() if g is not None}


def _decision(rows: Sequence[MeasuredRow], geomean: float, thresholds: Thresholds,
              interval: tuple[float, float] | None) -> Decision:
    """The speedup class (the same as the baseline where its interval reaches 1.0); the typical
    kernel of the sweep decides whether launches dominate (the smallest always will)."""
    typical_ms = statistics.median(_ours_ms(rows).values())
    return decide(geomean, typical_ms, SpeedupThresholds(
        thresholds.speedup_critical, thresholds.speedup_high, thresholds.speedup_medium), interval)


def _status(d: Decision, validity: BenchValidity | None) -> GateStatus:
    """CRITICAL fails; HIGH warns, PARITY (not shown to be ahead) too, and so does a pass measured
    on a GPU that was not clean."""
    if d.level == "CRITICAL":
        return "fail"
    if d.level in ("HIGH", "PARITY") or validity is None or not validity.valid:
        return "warn"
    return "pass"


def _left_out(validity: BenchValidity | None, left: int) -> str:
    """'; 6 left out: blocks never clean': the configs the headline leaves to the validity verdict."""
    if validity is None or not left:
        return ""
    return f"; {left} left out: {', '.join(validity.suspect_why) or 'suspect'}"


def _equal_clocks(rows: Sequence[MeasuredRow], validity: BenchValidity | None, baseline: str) -> float | None:
    """The speedup at equal clocks (cycle space), where ours and the baseline ran at materially
    different SM clocks; None where they did not, or no config has both clocks."""
    if validity is None:
        return None
    found = equal_clock_speedup([r.json for r in rows], SPEEDUP_PREFIX + baseline, validity.config_mhz,
                                "ours", baseline)
    return found[0] if validity.clocks_apart(baseline) and found is not None else None


def _against_others(measured: Measured, rows: Sequence[MeasuredRow], baseline: str,
                    vs: Mapping[str, tuple[float, int]], labels: Mapping[str, str]) -> str:
    """Ours against each other compared reference. A geomean over small and large sizes can read
    as parity while the sizes that matter lose: the worst config is said with it."""
    said = ""
    for ref in measured.compared or ():
        if ref == baseline or ref not in vs:
            continue
        said += f", {vs[ref][0]:.2f}x vs {labels.get(ref, ref)}"
        speedups = [(v, r.config) for r in rows if (v := r.speedups.get(ref))]
        worst = min(speedups, key=lambda s: s[0], default=None)
        if worst is not None and worst[0] < 1.0:
            said += f" (worst {worst[0]:.2f}x at {worst[1]})"
    return said
