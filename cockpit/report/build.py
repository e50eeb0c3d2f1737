"""A session folder read into a `Report`: the journal, SESSION.md, the gates' result files, the
telemetry track, the pattern library and the session before it. Reading only: nothing in the
session is written or changed. Whatever is missing or broken becomes a line in `problems`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from cockpit.analysis.decide import class_words
from cockpit.errors import CockpitError
from cockpit.files import read_head
from cockpit.gates.bench.result import BenchResult, read_bench_result
from cockpit.gates.catalog import measures, summary_said
from cockpit.gates.env.result import EnvResult
from cockpit.patterns.library import Pattern, load_patterns
from cockpit.patterns.triggers import TriggerBudget
from cockpit.report.checks import correctness_run, sanitizer_run
from cockpit.report.configs import bench_configs
from cockpit.report.cut import NOTES_READ_BYTES, notes_cut
from cockpit.report.decisions import decision_words, decisions
from cockpit.report.gate_details import details
from cockpit.report.gpu_series import read_track, series
from cockpit.report.history import (
    SessionSummary,
    bench_runs,
    best_valid,
    last_measured,
    pattern_birth,
    previous_in_workload,
    reference_speedups,
    sessions_named,
    summarize,
)
from cockpit.report.jsonio import normalized
from cockpit.report.model import (
    SCHEMA_VERSION,
    TIMELINE_MAX,
    Comparison,
    GateReport,
    Machine,
    Outcome,
    PatternRef,
    PhaseRow,
    ReferenceSpeedup,
    Report,
    Span,
    TimedText,
)
from cockpit.report.phase_gpu import gpu_phases, why_no_gpu_phases
from cockpit.report.reading import read_session
from cockpit.report.text import clean_line, clean_value
from cockpit.report.trend import compare
from cockpit.session import events as ev
from cockpit.session.inside import OutsideWorkspace, confine_session_path
from cockpit.session.journal import Event
from cockpit.session.paths import stored_path
from cockpit.session.results import result_refused
from cockpit.session.state import GateRunRecord, SessionState
from cockpit.session.timer import timer_view, total_elapsed, wall_seconds
from cockpit.session.workspace import SessionRef, Workspace, list_sessions, started_t
from cockpit.telemetry.track import Track


def build_report(ws: Workspace, ref: SessionRef, now: float) -> Report:
    """The report of one session as of `now` (its end, if it has ended)."""
    read = read_session(ref)
    problems = list(read.problems)
    state = read.state
    if state is None:
        raise CockpitError(f"{ref.id}: nothing to report ({'; '.join(problems)})")
    problems += [*state.refused, *refused_results(ws, state)]
    as_of = state.ended_t if state.ended_t is not None else now
    patterns, _ = load_patterns(ws.patterns_dir)
    refs = list_sessions(ws)
    births = pattern_birth(patterns, {r.id: started_t(r) for r in refs})
    budget = TriggerBudget()
    this = summarize(state, read.events, ws.root, patterns, births, as_of, budget, problems)
    problems += budget.too_slow.values()
    phases = _phase_rows(state, as_of)
    track = read_track(ref, problems)
    wall = wall_seconds(state, as_of)
    decided = decisions(read.events, state)
    report = normalized(Report(
        schema_version=SCHEMA_VERSION, session=clean_line(state.id), objective=clean_line(state.objective),
        template=clean_line(state.template), started_t=state.created_t, ended_t=state.ended_t,
        as_of_t=as_of, duration_s=round(total_elapsed(state, as_of), 1), wall_s=round(wall, 1),
        gpu_cost_per_hour=state.gpu_cost_per_hour,
        cost=round(wall / 3600 * state.gpu_cost_per_hour, 2),
        outcome=outcome(state), machine=machine(state, track),
        phases=phases,
        statuses=tuple(TimedText(s.t, clean_line(s.text), s.auto) for s in state.statuses[-TIMELINE_MAX:]),
        statuses_total=len(state.statuses), journal_notes_total=len(state.notes),
        gates=gate_reports(ws, state),
        decisions=decided,
        gpu_phases=gpu_phases(read.events),
        telemetry=series(ref, state, track, problems),
        spans=spans(state, as_of),
        notes=_notes(ref, problems),
        journal_notes=tuple(TimedText(n.t, clean_line(n.text)) for n in state.notes[-TIMELINE_MAX:]),
        patterns_applied=applied(read.events),
        patterns_created=created(patterns, births, state),
        repeated_mistakes=this.mistakes,
        comparison=_comparison(ws, ref, refs, this, patterns, births, as_of),
        problems=tuple(clean_line(p) for p in problems),
        correctness=correctness_run(state, decided), sanitizer=sanitizer_run(state, decided),
        configs=bench_configs(state), decision_words=decision_words(read.events),
    ))
    if report.gpu_phases:
        return report
    return replace(report, gpu_phases_note=why_no_gpu_phases(read.events, [r.t for r in track.rows], as_of))


def _phase_rows(state: SessionState, as_of: float) -> tuple[PhaseRow, ...]:
    """Each phase's budget, time spent, overrun and progress as of the report, with how many
    times the session entered it."""
    view = timer_view(state, as_of, 0.8)
    return tuple(PhaseRow(clean_line(p.name), p.budget_s, round(p.elapsed_s, 1),
                          round(max(0.0, p.elapsed_s - p.budget_s), 1), p.progress,
                          sum(1 for r in state.runs if r.phase == p.name)) for p in view.phases)


def outcome(state: SessionState) -> Outcome:
    benches = [r for r in state.gate_runs if measures(r.gate) and r.finished]
    best = best_valid(state)
    valid = _decidable(benches)
    if best is None:
        return _no_valid_outcome(state, len(benches), valid)
    run, result = best
    result = _with_interval(run, result)
    speedup = result.speedup or 0.0  # never 0: a run counts as valid only with a speedup
    level = clean_line(result.level or "")
    urgency = class_words(level, result.interval)
    vs = reference_speedups(result)
    others = _other_references(vs)
    return Outcome(speedup, level, run.run_id, valid, len(benches) - valid,
                   f"{_speedup_words(result, vs[0].label)} ({urgency}){_modes(result)}{others}, "
                   f"run {run.run_id}{_missing(result)}",
                   clean_line(result.workload), vs[0].label, vs, result.interval, result.configs)


def _with_interval(run: GateRunRecord, headline: BenchResult) -> BenchResult:
    """The best run as its whole result says it, where the journal's headline lost its interval (a
    journal from before the headline kept intervals): one results/ file read, never a guess."""
    if headline.interval is not None or not run.result_file:
        return headline
    whole = read_bench_result(run.result)
    return whole if whole is not None and whole.interval is not None else headline


def _speedup_words(result: BenchResult, baseline: str) -> str:
    """'0.77x [0.76, 0.78] vs SDPA over 56 configs': the number, its interval and what it is against."""
    spread = f" [{result.interval[0]:.2f}, {result.interval[1]:.2f}]" if result.interval else ""
    over = f" over {result.configs} configs" if result.configs else ""
    return f"{result.speedup or 0.0:.2f}x{spread} vs {baseline}{over}"


def _missing(result: BenchResult) -> str:
    """'; 6 configs left out: blocks never clean', and that the speedup has no interval where the
    bench recorded none (a bench from before intervals): said, never guessed."""
    left = f"; {clean_line(left)}" if (left := result.left_out_words()) else ""
    return left + ("" if result.interval else "; no interval: the bench recorded none")


def _decidable(benches: list[GateRunRecord]) -> int:
    """How many finished benches a keep/revert decision could rest on."""
    return sum(1 for r in benches if (b := read_bench_result(r.result_inline)) is not None and b.decidable)


def _other_references(vs: tuple[ReferenceSpeedup, ...]) -> str:
    """', 1.12x vs cudnn': the speedup over each timed reference after the baseline."""
    return "".join(f", {r.speedup:.2f}x vs {r.label}" for r in vs[1:] if r.speedup is not None)


def _no_valid_outcome(state: SessionState, benches: int, valid: int) -> Outcome:
    """The outcome of a session with no valid bench: how many ran, and the workload of the last
    one measured, so the report still says what was benched."""
    text = (f"no valid benchmark: {benches} run(s), all suspect or failed" if benches
            else "no benchmark was run")
    last = last_measured(bench_runs(state))
    return Outcome(None, None, None, valid, benches - valid, text,
                   workload=clean_line(last.workload) if last else None)


def _modes(result: BenchResult) -> str:
    """' (forward 1.61x, backward 1.24x, full 1.33x)': a bench of several modes, side by side."""
    return f" ({clean_line(result.modes_words())})" if result.modes else ""


def machine(state: SessionState, track: Track) -> Machine | None:
    """GPU, driver, CUDA, torch, nvcc and python from the last env run's checks; the driver and
    the GPU count from the telemetry track where the checks do not say; None with neither."""
    env = state.last_run("env", finished=True)
    checks = _env_checks(env)
    gpus = track.gpus
    if env is None and not gpus:
        return None
    gpu = _checked_gpu(checks)
    count = _checked_gpu_count(checks)
    torch = checks.get("torch", "")
    return Machine(
        gpu=clean_line(gpu) if gpu else (gpus[0].name if gpus else None),
        gpu_count=count if count is not None else (len(gpus) or None),
        driver=_driver(checks, track),
        cuda=_torch_cuda(torch),
        torch=clean_line(torch.split(" ", 1)[0]) if torch else None,
        nvcc=_checked_version(checks, "nvcc"),
        python=_checked_version(checks, "python"),
        source=env.run_id if env else "telemetry")


def _env_checks(env: GateRunRecord | None) -> dict[str, str]:
    """The env run's checks that reported a value, by name; none without an env run."""
    if env is None:
        return {}
    return {clean_value(c.name): clean_value(c.value) for c in EnvResult.from_json(env.result).checks
            if c.value}


def _checked_gpu(checks: dict[str, str]) -> str | None:
    """The device name torch reported ("True: NVIDIA H100 80GB HBM3, ..."); None when CUDA was
    not available to it."""
    device = checks.get("cuda_available", "")
    return device.split(": ", 1)[1].split(",")[0] if device.startswith("True: ") else None


def _checked_gpu_count(checks: dict[str, str]) -> int | None:
    """The GPU count the persistence-mode check saw ("on for 8/8 GPUs"); None when it did not say."""
    persistence = checks.get("persistence_mode", "")
    if "/" in persistence and "GPU" in persistence:
        return int(persistence.rsplit("/", 1)[1].split()[0])
    return None


def _driver(checks: dict[str, str], track: Track) -> str | None:
    """The driver the env check saw, else the first the telemetry track recorded."""
    if "driver" in checks:
        return clean_line(checks["driver"])
    return next((g.driver_version for g in track.gpus if g.driver_version), None)


def _torch_cuda(torch: str) -> str | None:
    """The CUDA torch was built with ("2.4.0 (CUDA 12.4)" -> "12.4")."""
    return clean_line(torch.split("(CUDA ", 1)[1].rstrip(")")) if "(CUDA " in torch else None


def _checked_version(checks: dict[str, str], tool: str) -> str | None:
    """A tool's version without the path after it ("12.4 (/usr/local/cuda/bin/nvcc)" -> "12.4")."""
    return clean_line(checks[tool].split(" (", 1)[0]) if checks.get(tool) else None


DETAILED_RUNS = 40
"""Gate runs whose details (facts, warnings, tables) the report shows: the latest ones, plus each
gate's latest and the best valid bench. An earlier run is its one line (status, summary,
speedup): a week-long session's 2,000 runs made a 15 MB REPORT.md that no one reads, and its
details stay in the journal and results/."""


def ran(state: SessionState) -> list[GateRunRecord]:
    """The gate runs that ran: a start with no child (pid 0) and no finish never did. Cockpits
    before the refused start was withdrawn wrote such a start once a full disk had space again."""
    return [r for r in state.gate_runs if r.pid != 0 or r.finished]


def gate_reports(ws: Workspace, state: SessionState) -> tuple[GateReport, ...]:
    runs = ran(state)
    detailed = {r.run_id for r in runs[-DETAILED_RUNS:]}
    detailed |= {last.run_id for gate in {r.gate for r in runs} if (last := state.last_run(gate))}
    if (best := best_valid(state)) is not None:
        detailed.add(best[0].run_id)
    return tuple(gate_report(ws, state, run, run.run_id in detailed) for run in runs)


def gate_report(ws: Workspace, state: SessionState, run: GateRunRecord, detailed: bool = True) -> GateReport:
    facts, warnings, tables = details(run.gate, run.result) if run.finished and detailed else ((), (), ())
    bench = read_bench_result(run.result_inline) if measures(run.gate) else None  # its headline
    return GateReport(
        run_id=clean_line(run.run_id), gate=clean_line(run.gate),
        status=clean_line(run.status or "interrupted"),
        summary=clean_line(summary_said(run.gate, run.summary, run.result_inline) if run.finished
                           else "no finish in the journal (the cockpit "
                           "that ran it went away)"),
        phase=phase_at(state, run.started_t), started_t=run.started_t,
        duration_s=run.duration_s, log=clean_line(stored_path(Path(run.log), ws.root)) if run.log else "",
        facts=facts, warnings=warnings, tables=tables,
        speedup=bench.speedup if bench else None,
        valid=bench.valid if bench and bench.validity is not None else None)


def refused_results(ws: Workspace, state: SessionState) -> list[str]:
    """A line for each result file the report reads only the headline of: not a file, or too big."""
    out = []
    for run in state.gate_runs:
        path = Path(run.result_file)
        try:
            st = path.stat() if run.result_file else None
        except OSError:
            continue  # a missing result reads as its headline, as before
        if st is not None and (why := result_refused(path, st, stored_path(path, ws.root))):
            out.append(f"{why}; run {run.run_id} shows the journal's headline")
    return out


def phase_at(state: SessionState, t: float) -> str | None:
    for run in reversed(state.runs):
        if run.started_t <= t and (run.ended_t is None or t <= run.ended_t):
            return clean_line(run.phase)
    return None


def spans(state: SessionState, as_of: float) -> tuple[Span, ...]:
    phases = [Span(clean_line(r.phase), r.started_t, r.ended_t if r.ended_t is not None else as_of,
                   "phase") for r in state.runs]
    gates = [Span(clean_line(r.run_id), r.started_t,
                  r.finished_t if r.finished_t is not None else r.started_t,
                  clean_line(r.status or "interrupted")) for r in ran(state)]
    return tuple(phases + gates)


def _notes(ref: SessionRef, problems: list[str]) -> str | None:
    """SESSION.md as the report carries it: its first NOTES_READ_BYTES, cut (report/cut.py)."""
    try:
        head, st = read_head(confine_session_path(ref.log_md), NOTES_READ_BYTES)
        return notes_cut(head, st.st_size)
    except FileNotFoundError:
        problems.append(f"{stored_path(ref.log_md, ref.workspace)}: missing (no notes to report)")
    except OutsideWorkspace as exc:
        problems.append(str(exc))
    except OSError as exc:
        problems.append(f"{stored_path(ref.log_md, ref.workspace)}: cannot read ({exc.strerror})")
    return None


def applied(events: tuple[Event, ...]) -> tuple[PatternRef, ...]:
    return tuple(PatternRef(e["pattern"], clean_value(e.get("title")), clean_value(e.get("why")),
                            float(e["t"]))
                 for e in events if e.get("type") == ev.PATTERN_APPLIED
                 and isinstance(e.get("pattern"), int) and not isinstance(e.get("pattern"), bool))


def created(patterns: tuple[Pattern, ...], births: dict[int, float],
            state: SessionState) -> tuple[PatternRef, ...]:
    """Patterns whose evidence names this session first: the lessons it added."""
    return tuple(PatternRef(p.id, clean_line(p.title), clean_line(p.problem), None)
                 for p in patterns if births.get(p.id) == state.created_t
                 and state.id in sessions_named(p.evidence, (state.id,)))


def _comparison(ws: Workspace, ref: SessionRef, refs: list[SessionRef], this: SessionSummary,
                patterns: tuple[Pattern, ...], births: dict[int, float],
                as_of: float) -> Comparison | None:
    """This session against the one before it on the same workload."""
    index = next((i for i, r in enumerate(refs) if r.id == ref.id), 0)

    def earlier() -> Iterator[SessionSummary]:
        for r in reversed(refs[:index]):
            read = read_session(r)
            if read.state is not None:
                yield summarize(read.state, read.events, ws.root, patterns, births, as_of)

    previous = previous_in_workload(this, earlier())
    return compare(this, previous) if previous is not None else None
