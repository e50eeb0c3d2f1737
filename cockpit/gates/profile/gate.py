"""The Profile gate: Nsight Compute on the workload kernel, a bottleneck verdict and ONE fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from cockpit.analysis.ncu_csv_file import read_ncu_csv
from cockpit.analysis.roofline import Roofline, place
from cockpit.errors import CockpitError
from cockpit.gates.bench.payoff import COMMIT, FIX, LOG_SEEN
from cockpit.gates.bench.result import BenchResult, read_bench_result
from cockpit.gates.catalog import measures
from cockpit.gates.gate import COULD_NOT_RUN, GateContext, NoProgress, ProgressTracker, Verdict
from cockpit.gates.kernel_git import head_commit
from cockpit.gates.probe_call import of_this_wire
from cockpit.gates.profile.result import KernelVerdict, ProfiledKernel, ProfileResult
from cockpit.hardware.peaks import peak_for
from cockpit.json_fields import as_number, compact, obj, strings, text
from cockpit.session.journal import JOURNAL_NAME
from cockpit.session.log_md import read_log_lines
from cockpit.session.paths import stored_path
from cockpit.session.results import read_result_json
from cockpit.session.saved_state import recent_state
from cockpit.session.state import GateRunRecord
from cockpit.workload.describe import workload_args

if TYPE_CHECKING:
    from cockpit.analysis.ncu import KernelLaunch

PROBE = Path(__file__).resolve().parents[2] / "probes" / "profile_probe.py"
TARGET = Path(__file__).resolve().parents[2] / "probes" / "workload_probe.py"
CLOCK_NOTE = {
    "base": "ncu locked the clocks to base (--clock-control base): its durations are steadier but "
            "not comparable with the benchmark's; set [profile] clock_control = \"none\" to compare",
    "none": "clocks were left free (--clock-control none): durations compare with the benchmark's",
}


class ProfileGate:
    """One config under ncu, and the bottleneck verdict with the one fix it points at."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        p = ctx.config.profile
        report = ctx.session_dir / "results" / ctx.run_id
        argv = [ctx.python, str(PROBE), "--workspace", str(ctx.workspace), "--out",
                str(ctx.result_path), "--report", str(report), "--kernel-regex", p.kernel_regex,
                "--launch-skip", str(p.launch_skip), "--clock-control", p.clock_control]
        argv += ["--set-full"] if p.set_full else [a for s in p.sections for a in ("--section", s)]
        argv += ["--", ctx.python, str(TARGET), "profile", "--workspace", str(ctx.workspace),
                 *workload_args(ctx.workspace, ctx.config).argv(), "--iters", str(p.launch_skip + 2)]
        return tuple(argv)

    def tracker(self, ctx: GateContext) -> ProgressTracker:
        return NoProgress()

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        try:
            probe = obj(read_result_json(ctx.result_path))
        except (OSError, ValueError):
            probe = {}
        of_this_wire(probe, ctx.result_path)
        last = next((line.strip() for line in reversed(tail) if line.strip()
                     and not line.startswith("#")), "")
        if exit_code == 2 or not probe:
            raise CockpitError(last or f"the profile probe exited {exit_code}")
        base = ProfileResult(report=_stored(probe.get("report"), ctx.workspace),
                             csv=_stored(probe.get("csv"), ctx.workspace),
                             clock_note=CLOCK_NOTE.get(str(probe.get("clock_control")), ""))
        if probe.get("error") == "permission":  # ncu was refused the counters: the kernel was never profiled
            return Verdict(COULD_NOT_RUN, last.removeprefix("cockpit-profile: "), base)
        if probe.get("error") == "no match" and probe.get("every_kernel"):
            return Verdict("fail", last.removeprefix("cockpit-profile: ")
                           or "no kernel ran in the candidate's profiled call", base)
        if probe.get("error") == "no match":
            seen = strings(probe.get("kernels_seen"))
            regex = text(probe.get("kernel_regex")) or "the kernel regex"
            return Verdict("fail", f"no kernel matched {regex} (the "
                           "workload's profile kernel, or [profile] kernel_regex); kernels that ran: "
                           f"{', '.join(seen) or 'none'}", replace(base, kernels_seen=seen))
        csv = text(probe.get("csv"))
        if csv is None:
            raise CockpitError(last or "ncu produced no report")
        shape = text(probe.get("shape"))
        ms, roofline = bench_row_for(ctx, shape) if shape is not None else (None, None)
        details = text(probe.get("details_csv"))
        log = read_log_lines(ctx.session_dir)
        said = compact({COMMIT: head_commit(ctx.workspace), "workload": text(probe.get("workload")),
                        LOG_SEEN: len(log) if log is not None else None})
        return judge_profile(read_ncu_csv(csv),
                             replace(base, shape=shape, roofline=roofline, raw={**base.raw, **said}), ms,
                             _read(details) if details is not None else None)


def _stored(path: object, workspace: Path) -> str | None:
    return stored_path(Path(path), workspace) if isinstance(path, str) and path else None


def _read(path: str) -> str | None:
    try:
        return read_ncu_csv(path)
    except OSError:
        return None


def judge_profile(csv_text: str, base: ProfileResult, bench_ms: float | None,
                  details_text: str | None = None) -> Verdict:
    """The bottleneck verdict on each launch ncu profiled with its one fix (one_fix.py: ncu's best
    estimate on the details page, else the decision tree's); the first launch's is the summary."""
    from cockpit.analysis.bottleneck import verdict as bottleneck_verdict
    from cockpit.analysis.ncu import parse_ncu_csv
    from cockpit.analysis.ncu_rules import NoRules, parse_rules
    from cockpit.analysis.one_fix import one_fix

    report = parse_ncu_csv(csv_text)
    if not report.launches:
        return Verdict("fail", "ncu's report holds no kernel launch", base)
    kernels = []
    matrix_math = base.roofline.matrix_math if base.roofline is not None else None
    try:
        rules = parse_rules(details_text) if details_text else []
    except NoRules:
        rules = []
    for launch in report.launches:
        v = bottleneck_verdict(launch, bench_ms=bench_ms, matrix_math=matrix_math)
        fix = one_fix(rules, launch.id, v.recommendation, matrix_math)
        verdict = KernelVerdict(v.bottleneck, v.headline, fix.line, v.confidence, v.confidence_reason,
                                tuple(v.notes), {n: m.value for n, m in v.evidence.items()},
                                {n: m.unit for n, m in v.evidence.items()}, fix.estimate_lines(),
                                fix.tree_fix)
        kernels.append(ProfiledKernel(launch.name, verdict, id=launch.id, grid=launch.grid,
                                      block=launch.block))
    main, share = _main_launch(report.launches)
    first = kernels[main].verdict
    # what the next decided bench holds this profile to (gates/bench/payoff.py)
    paid_by_bench = {"line": first.recommendation, "estimates": list(first.estimates[:1])}
    summary = f"{first.bottleneck}: {first.headline} — next: {first.recommendation}"
    if len(kernels) > 1:  # every kernel of a call (a GPU MODE folder's): the verdict names its longest
        took = f", {share:.0f} % of their time" if share is not None else ""
        summary = (f"{len(kernels)} kernels; the longest, {report.launches[main].short_name} "
                   f"(#{main + 1}{took}): {summary}")
    return Verdict("pass", summary, replace(base, kernels=tuple(kernels), bench_ms=bench_ms,
                                            raw={**base.raw, FIX: paid_by_bench}))


def _main_launch(launches: Sequence[KernelLaunch]) -> tuple[int, float | None]:
    """Which launch the summary speaks of: the longest (the first when a duration is missing),
    and its share of the launches' time in percent."""
    durations = [launch.duration_ns for launch in launches]
    known = [d for d in durations if d is not None]
    if len(known) != len(durations) or not known or sum(known) <= 0:
        return 0, None
    longest = max(range(len(known)), key=lambda i: known[i])
    return longest, 100.0 * known[longest] / sum(known)


def _latest_bench(runs: Sequence[GateRunRecord]) -> BenchResult | None:
    """The result of the session's latest finished run that measured (None without one)."""
    run = next((r for r in reversed(runs) if r.finished and measures(r.gate)), None)
    return read_bench_result(run.result) if run is not None else None


def bench_row_for(ctx: GateContext, name: str) -> tuple[float | None, Roofline | None]:
    """Our per-call time for this shape (as the workload names it) from the session's latest bench
    run, and the kernel on the roofline there (the row's FLOP and byte counts, the card's peaks);
    (None, None) without a bench of it."""
    try:
        state = recent_state(ctx.session_dir / JOURNAL_NAME, ctx.workspace)
    except CockpitError:
        return None, None
    bench = _latest_bench(state.gate_runs)
    if bench is None:
        return None, None
    ms = dict(bench.ours_ms).get(name)
    row = next((r for r in bench.raw_rows if r.get("config") == name), None)
    if ms is None or row is None:
        return ms, None
    return ms, place(ms, as_number(row.get("flops")), as_number(row.get("bytes")), text(row.get("dtype")),
                     peak_for(bench.device))
