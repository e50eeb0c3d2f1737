"""The learning loop across sessions: each session summed up in one row, the trend from session
to session, repeated mistakes, and regressions — pure functions over journals and the library.

A *repeated mistake* is a pattern whose trigger fires on a gate run of a session that started
after the pattern was in the library, for patterns whose triggers mean the mistake happened
again (a build error, a dropped connection). A trigger that only says when to apply a pattern
(`triggers_mean: advice`, e.g. a speedup below 1.0) is not a mistake. A pattern entered the
library in the earliest session its evidence names; one whose evidence names no session of this
workspace (the seed library) was there before all of them. A *regression* is a session whose
best valid benchmark is slower, on the same GPU and configs, than an earlier session's best
valid one of the same workload: sessions are compared only within the workload they measured.
A bench suspect of named configs alone (blocks never clean there) counts as a measurement over
the others; the configs it left out are in no comparison.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cockpit.analysis.fix_payoff import FixPayoff
from cockpit.files import RefusedFile, read_tail
from cockpit.gates.bench.past import BenchRun, finished_benches
from cockpit.gates.bench.result import BenchResult, read_bench_result
from cockpit.gates.catalog import measures
from cockpit.gates.output import text_lines
from cockpit.patterns.library import Pattern
from cockpit.patterns.triggers import OutputTrigger, TriggerBudget, match_output, match_verdict
from cockpit.report.model import PatternRef, ReferenceSpeedup
from cockpit.report.text import clean_line
from cockpit.session import events as ev
from cockpit.session.journal import Event
from cockpit.session.paths import stored_path
from cockpit.session.state import GateRunRecord, SessionState
from cockpit.session.timer import total_elapsed

REGRESSION_MARGIN = 0.03
"""Slower by more than the bench's own run-to-run spread (3 % in the fidelity runs) to count."""
LOG_TAIL_BYTES = 256 * 1024
"""How much of a gate's log the output triggers read: the end, where failures print."""


@dataclass(frozen=True)
class SessionSummary:
    id: str
    objective: str
    workload: str | None
    """What its bench runs measured; None: it ran no bench."""
    started_t: float
    ended_t: float | None
    duration_s: float
    first_valid_s: float | None
    """From the session's start to the end of its first valid benchmark."""
    best_speedup: float | None
    """The best valid bench run against the workload's baseline (geometric mean)."""
    best_level: str | None
    best_run: str | None
    best_vs: tuple[ReferenceSpeedup, ...]
    """The best valid run against each timed reference, the baseline first; with no valid run,
    the references its last bench measured, with no speedup."""
    device: str | None
    best_ms: tuple[tuple[str, float], ...]
    """Our median per config in the best valid run: what regressions compare."""
    patterns_applied: tuple[int, ...]
    mistakes: tuple[PatternRef, ...]
    gate_runs: int
    outcome: str
    best_ci: tuple[tuple[str, float, float], ...] = ()
    """The best run's interval per config, where its bench measured one (the configs it found
    launch-bound left out): what a regression must fall outside of."""
    payoffs: tuple[FixPayoff, ...] = ()
    """Each profile's fix and what the bench after it realized, in order (gates/bench/payoff.py)."""

    def vs(self, reference: str) -> float | None:
        """The best valid run against one reference (by id), where it was measured."""
        return next((r.speedup for r in self.best_vs if r.reference == reference), None)


def bench_runs(state: SessionState) -> list[BenchRun]:
    """The session's finished bench runs (the past keep/revert reads too: gates/bench/past.py), of
    the workload its last measurement was of (a session that changed workloads half-way is summed
    up by the one it ended on; a run that measured nothing may not name its workload); once per
    state: a report asks five times."""
    if _read_for[0] is state:
        return list(_read_for[1])
    runs = finished_benches(state)  # the headline: no tables
    last = last_measured(runs)
    kept = [(r, b) for r, b in runs if last is not None and b.workload == last.workload]
    _read_for[:] = [state, kept]
    return list(kept)


_read_for: list[Any] = [None, []]


def last_measured(runs: Sequence[BenchRun]) -> BenchResult | None:
    """The latest of the runs that measured a speedup, else the latest: what names the session's
    workload and references."""
    return next((b for _, b in reversed(runs) if b.speedup is not None), runs[-1][1]) if runs else None


def valid_bench_runs(state: SessionState) -> list[BenchRun]:
    """The runs that count as measurements: valid, or suspect of named configs alone (their
    headline is over the others and says how many it left out)."""
    return [(r, b) for r, b in bench_runs(state) if b.decidable and b.speedup is not None]


def best_valid(state: SessionState) -> BenchRun | None:
    runs = valid_bench_runs(state)
    return max(runs, key=lambda run: run[1].speedup or 0.0) if runs else None


def reference_speedups(bench: BenchResult, measured: bool = True) -> tuple[ReferenceSpeedup, ...]:
    """A bench run against its baseline and each reference it has a geometric mean for;
    `measured` False: the references alone (the run does not count)."""
    return tuple(ReferenceSpeedup(clean_line(r), clean_line(bench.label(r)),
                                  bench.vs.get(r) if measured else None)
                 for r in dict.fromkeys([bench.baseline, *bench.vs]))


def resolve_workloads(sessions: Sequence[SessionSummary]) -> list[str | None]:
    """The workload of each session (oldest first): what its benches measured; a session that ran
    none was on the workload of the nearest earlier one that did (the workspace's at the time),
    or, before any, of the nearest later one. None only when no session ran a bench."""
    out: list[str | None] = []
    for s in sessions:
        out.append(s.workload or (out[-1] if out else None))
    later: str | None = None
    for i in reversed(range(len(sessions))):
        later = sessions[i].workload or later
        out[i] = out[i] or later
    return out


def previous_in_workload(this: SessionSummary,
                         earlier: Iterable[SessionSummary]) -> SessionSummary | None:
    """The session before `this` on its workload, as `resolve_workloads` assigns them, from the
    earlier sessions newest first; it reads no further back than it has to."""
    nearest_without: SessionSummary | None = None  # since the last session that ran a bench
    crossed = False
    for s in earlier:
        if this.workload is None:
            return s  # on the workload of the sessions just before it
        if s.workload is None:
            nearest_without = nearest_without or s
        elif s.workload == this.workload:
            return nearest_without or s
        else:  # another workload: the sessions without a bench after it were on that one
            nearest_without, crossed = None, True
    return None if crossed else nearest_without


_SESSION_NAME = re.compile(r"(?<![\w-])\d{8}-\d{4}(?:-[0-9a-z]+)*")


def sessions_named(evidence: Iterable[str], ids: Iterable[str]) -> set[str]:
    """The sessions of this workspace that evidence lines name: by the whole id (what the
    cockpit writes), or by a start of it that only one session has — "Session 20261123-0849
    (H100, …)", as an engineer writes it by hand."""
    known = list(ids)
    named = set()
    for line in evidence:
        for token in _SESSION_NAME.findall(line):
            matches = [i for i in known if i == token or i.startswith(token + "-")]
            if len(matches) == 1:
                named.add(matches[0])
    return named


def pattern_birth(patterns: Sequence[Pattern], started: Mapping[str, float]) -> dict[int, float]:
    """When each pattern entered the library: the start of the earliest session of this
    workspace its evidence names. Patterns naming none are absent (there from the beginning)."""
    births = {}
    for p in patterns:
        times = [started[i] for i in sessions_named(p.evidence, started)]
        if times:
            births[p.id] = min(times)
    return births


def mistakes_in(state: SessionState, workspace: Path, patterns: Sequence[Pattern],
                births: Mapping[int, float], budget: TriggerBudget | None = None,
                problems: list[str] | None = None) -> tuple[PatternRef, ...]:
    """Patterns already in the library when the session started whose triggers fired on one of
    its gate runs: each once, with the first run that fired it. A trigger that outlasts
    `budget` is skipped and named there; a log that is no file to read, in `problems`."""
    known = [p for p in patterns if births.get(p.id, -math.inf) < state.created_t and p.triggers
             and p.triggers_mean == "mistake"]
    if not known:
        return ()
    found: dict[int, PatternRef] = {}
    for run in state.gate_runs:
        if not run.finished:
            continue
        for pattern, why in _fired(known, found, run, workspace, budget, problems):
            found.setdefault(pattern.id, PatternRef(pattern.id, clean_line(pattern.title),
                                                    clean_line(why), run.finished_t, run.run_id))
    return tuple(sorted(found.values(), key=lambda m: (m.t or 0.0, m.id)))


def _fired(known: list[Pattern], found: dict[int, PatternRef], run: GateRunRecord, workspace: Path,
           budget: TriggerBudget | None, problems: list[str] | None) -> list[tuple[Pattern, str]]:
    """The known patterns whose triggers fire on one finished run, and why: verdict triggers on its
    result; output triggers on its log's tail, read only while a pattern that has one is still
    unfound."""
    hits = match_verdict(known, run.gate, verdict_fields(run))
    waiting = [p for p in known if p.id not in found]
    if any(_has_output_trigger(p) for p in waiting):
        hits += match_output(waiting, run.gate, log_tail(workspace, run.log, problems), budget)
    return hits


def _intervals(result: Mapping[str, Any]) -> tuple[tuple[str, float, float], ...]:
    """Our interval per config, of the configs the run vouches for. Left out: those its validity
    verdict could not vouch for, and those a bench from before device time (issue 32) found
    launch-bound: its time there was the host's launch rate, which a later run's device time
    must not be held to (a regression would then be the timing method's, not the kernel's)."""
    rows = result.get("rows")
    bench = read_bench_result(result)
    apart = set(bench.left_out) if bench is not None else set()
    return tuple((str(r["config"]), float(c[0]), float(c[1]))
                 for r in (rows if isinstance(rows, list) else [])
                 if _vouched(r, apart) and (c := _ours_ci(r)) is not None)


def _vouched(row: object, apart: set[str]) -> bool:
    """Whether the run vouches for this config's time: neither left out by its validity verdict
    nor launch-bound in a bench from before device time."""
    return isinstance(row, dict) and row.get("launch_bound") is not True and row.get("config") not in apart


def _ours_ci(row: dict[str, Any]) -> list[float] | None:
    """Our [low, high] interval in ms as the bench stored it; None unless both are positive numbers."""
    c = row.get("impl", {}).get("ours", {}).get("ci_ms")
    if isinstance(c, list) and len(c) == 2 and all(isinstance(x, (int, float)) and x > 0 for x in c):
        return c
    return None


def verdict_fields(run: GateRunRecord) -> dict[str, Any]:
    """What a pattern's verdict trigger reads of a finished run: its result and status, and for
    a bench its speedup over the baseline as `speedup`."""
    fields = {**run.result_inline, "status": run.status}  # a trigger reads top-level fields: the headline
    bench = read_bench_result(run.result_inline) if measures(run.gate) else None
    if bench is not None and bench.speedup is not None:
        fields["speedup"] = bench.speedup
    return fields


def _has_output_trigger(pattern: Pattern) -> bool:
    return any(isinstance(t, OutputTrigger) for t in pattern.triggers)


def log_tail(workspace: Path, log: str, problems: list[str] | None = None) -> list[str]:
    """The last `LOG_TAIL_BYTES` of a gate's log as lines; none when it is gone, nor when it is no
    file to read (a FIFO in its place: named in `problems`)."""
    if not log:
        return []
    path = Path(log) if Path(log).is_absolute() else workspace / log
    try:
        data, _ = read_tail(path, LOG_TAIL_BYTES)
    except RefusedFile as exc:
        if problems is not None:
            problems.append(f"the log {stored_path(path, workspace)}: {exc.strerror}")
        return []
    except OSError:
        return []
    return text_lines(data)  # the child's bytes: escapes out, as a terminal shows them


def summarize(state: SessionState, events: Sequence[Event], workspace: Path,
              patterns: Sequence[Pattern], births: Mapping[int, float], now: float,
              budget: TriggerBudget | None = None, problems: list[str] | None = None) -> SessionSummary:
    """One session in one row; `budget` bounds the pattern triggers' searches (mistakes_in), a
    gate log that is no file to read is named in `problems`."""
    best = best_valid(state)
    result = best[1] if best else None
    last = last_measured(bench_runs(state))
    level = clean_line(result.level or "") if result else None
    return SessionSummary(
        id=state.id, objective=clean_line(state.objective),
        workload=clean_line(last.workload) if last else None, started_t=state.created_t,
        ended_t=state.ended_t, duration_s=round(total_elapsed(state, state.ended_t or now), 1),
        first_valid_s=_first_valid_s(state),
        best_speedup=result.speedup if result else None, best_level=level,
        best_run=best[0].run_id if best else None, best_vs=_best_vs(result, last),
        device=clean_line(result.device) if result and result.device else None,
        best_ms=_best_ms(best), best_ci=_intervals(best[0].result) if best else (),
        patterns_applied=_patterns_applied(events),
        mistakes=mistakes_in(state, workspace, patterns, births, budget, problems),
        gate_runs=len(state.gate_runs), outcome=_outcome(state, result, level),
        payoffs=_payoffs(state))


def _payoffs(state: SessionState) -> tuple[FixPayoff, ...]:
    """Each profile's fix and what the bench after it realized, as the session's benches keep them."""
    return tuple(p for _, b in bench_runs(state) if (p := b.payoff) is not None)


def _first_valid_s(state: SessionState) -> float | None:
    """From the session's start to the end of its first valid benchmark."""
    first = min((r.finished_t for r, _ in valid_bench_runs(state) if r.finished_t is not None), default=None)
    return None if first is None else round(first - state.created_t, 1)


def _best_vs(result: BenchResult | None, last: BenchResult | None) -> tuple[ReferenceSpeedup, ...]:
    """The best valid run against each reference; without one, the references the last measured."""
    if result:
        return reference_speedups(result)
    return reference_speedups(last, measured=False) if last else ()


def _best_ms(best: BenchRun | None) -> tuple[tuple[str, float], ...]:
    """Our median per config in the best valid run, read from its whole result (the tables), less
    the configs its validity verdict left out."""
    whole = read_bench_result(best[0].result) if best else None
    return tuple((c, ms) for c, ms in whole.ours_ms if c not in whole.left_out) if whole else ()


def _patterns_applied(events: Sequence[Event]) -> tuple[int, ...]:
    """The patterns the session marked applied, each once, in order."""
    applied = (e["pattern"] for e in events if e.get("type") == ev.PATTERN_APPLIED
               and isinstance(e.get("pattern"), int) and not isinstance(e.get("pattern"), bool))
    return tuple(dict.fromkeys(applied))


def _outcome(state: SessionState, result: BenchResult | None, level: str | None) -> str:
    """The session's outcome in a few words: its best speedup, else why it has none."""
    if result and result.speedup is not None:
        left = result.left_out_words()
        return f"{result.speedup:.2f}x {level}" + (f" ({clean_line(left)})" if left else "")
    benches = sum(1 for r in state.gate_runs if measures(r.gate) and r.finished)
    return f"no valid bench ({benches} suspect)" if benches else "no bench"
