"""The learning loop across sessions: each session summed up in one row, the trend from session
to session, repeated mistakes, and regressions — pure functions over journals and the library.

A *repeated mistake* is a pattern whose trigger fires on a gate run of a session that started
after the pattern was in the library, for patterns whose triggers mean the mistake happened
again (a build error, a dropped connection). A trigger that only says when to apply a pattern
(`triggers_mean: advice`, e.g. a speedup below 1.0) is not a mistake. A pattern entered the
library in the earliest session its evidence names; one whose evidence names no session of this
workspace (the seed library) was there before all of them. A *regression* is a session whose
best valid benchmark is slower, on the same GPU and configs, than an earlier session's best
valid one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cockpit.analysis.keep import number, rows_geomean
from cockpit.patterns.library import Pattern, load_library
from cockpit.patterns.triggers import OutputTrigger, match_output, match_verdict
from cockpit.report.model import PatternRef
from cockpit.report.reading import read_session
from cockpit.report.text import clean_line, decode
from cockpit.session import events as ev
from cockpit.session.journal import Event
from cockpit.session.state import GateRunRecord, SessionState
from cockpit.session.timer import total_elapsed
from cockpit.session.workspace import Workspace, list_sessions, started_t

REGRESSION_MARGIN = 0.03
"""Slower by more than the bench's own run-to-run spread (3 % in the fidelity runs) to count."""
LOG_TAIL_BYTES = 256 * 1024
"""How much of a gate's log the output triggers read: the end, where failures print."""


@dataclass(frozen=True)
class SessionSummary:
    id: str
    objective: str
    started_t: float
    ended_t: float | None
    duration_s: float
    first_valid_s: float | None
    """From the session's start to the end of its first valid benchmark."""
    best_speedup: float | None
    best_level: str | None
    best_run: str | None
    best_vs_flash: float | None
    """The same run against SDPA's FLASH backend (geometric mean), where it was measured."""
    device: str | None
    best_ms: tuple[tuple[str, float], ...]
    """Our median per config in the best valid run: what regressions compare."""
    patterns_applied: tuple[int, ...]
    mistakes: tuple[PatternRef, ...]
    gate_runs: int
    outcome: str


def valid_bench_runs(state: SessionState) -> list[GateRunRecord]:
    return [r for r in state.gate_runs if r.gate == "bench" and r.finished and _valid(r.result)
            and _speedup(r.result) is not None]


def _valid(result: Mapping[str, Any]) -> bool:
    validity = result.get("validity")
    return isinstance(validity, dict) and validity.get("valid") is True


def _speedup(result: Mapping[str, Any]) -> float | None:
    return number(result.get("geomean_speedup"))


def vs_flash(result: Mapping[str, Any]) -> float | None:
    """A bench result's geometric mean against SDPA's FLASH backend; journals from before the
    gate stored it are read from their rows."""
    stored = number(result.get("geomean_vs_flash"))
    if stored is not None:
        return stored
    found = rows_geomean(result.get("rows"), "speedup_vs_flash")
    return found[0] if found else None


def best_valid(state: SessionState) -> GateRunRecord | None:
    runs = valid_bench_runs(state)
    return max(runs, key=lambda r: _speedup(r.result) or 0.0) if runs else None


def our_times(result: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    out = []
    rows = result.get("rows")
    for row in rows if isinstance(rows, list) else []:
        impl = row.get("impl") if isinstance(row, dict) else None
        ours = impl.get("ours") if isinstance(impl, dict) else None
        ms = ours.get("median_ms") if isinstance(ours, dict) else None
        if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms > 0:
            out.append((str(row.get("config")), float(ms)))
    return tuple(out)


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
                births: Mapping[int, float]) -> tuple[PatternRef, ...]:
    """Patterns already in the library when the session started whose triggers fired on one of
    its gate runs: each once, with the first run that fired it."""
    known = [p for p in patterns if births.get(p.id, -math.inf) < state.created_t and p.triggers
             and p.triggers_mean == "mistake"]
    if not known:
        return ()
    found: dict[int, PatternRef] = {}
    for run in state.gate_runs:
        if not run.finished:
            continue
        result = {**run.result, "status": run.status}
        if "geomean_speedup" in result:
            result["speedup"] = result["geomean_speedup"]
        hits = match_verdict(known, run.gate, result)
        waiting = [p for p in known if p.id not in found]
        if any(_has_output_trigger(p) for p in waiting):
            hits += match_output(waiting, run.gate, log_tail(workspace, run.log))
        for pattern, why in hits:
            found.setdefault(pattern.id, PatternRef(pattern.id, clean_line(pattern.title),
                                                    clean_line(why), run.finished_t, run.run_id))
    return tuple(sorted(found.values(), key=lambda m: (m.t or 0.0, m.id)))


def _has_output_trigger(pattern: Pattern) -> bool:
    return any(isinstance(t, OutputTrigger) for t in pattern.triggers)


def log_tail(workspace: Path, log: str) -> list[str]:
    """The last `LOG_TAIL_BYTES` of a gate's log as lines; none when it is gone."""
    if not log:
        return []
    path = Path(log) if Path(log).is_absolute() else workspace / log
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - LOG_TAIL_BYTES))
            return decode(f.read()).splitlines()
    except OSError:
        return []


def summarize(state: SessionState, events: Sequence[Event], workspace: Path,
              patterns: Sequence[Pattern], births: Mapping[int, float], now: float) -> SessionSummary:
    """One session in one row."""
    best = best_valid(state)
    valid = valid_bench_runs(state)
    first = min((r.finished_t for r in valid if r.finished_t is not None), default=None)
    applied = tuple(e["pattern"] for e in events if e.get("type") == ev.PATTERN_APPLIED
                    and isinstance(e.get("pattern"), int) and not isinstance(e.get("pattern"), bool))
    speedup = _speedup(best.result) if best else None
    flash = vs_flash(best.result) if best else None
    level = clean_line(str(best.result.get("level", ""))) if best else None
    benches = sum(1 for r in state.gate_runs if r.gate == "bench" and r.finished)
    if speedup is not None:
        outcome = f"{speedup:.2f}x {level}"
    elif benches:
        outcome = f"no valid bench ({benches} suspect)"
    else:
        outcome = "no bench"
    return SessionSummary(
        id=state.id, objective=clean_line(state.objective), started_t=state.created_t,
        ended_t=state.ended_t, duration_s=round(total_elapsed(state, state.ended_t or now), 1),
        first_valid_s=None if first is None else round(first - state.created_t, 1),
        best_speedup=speedup, best_level=level, best_run=best.run_id if best else None,
        best_vs_flash=flash,
        device=clean_line(str(best.result.get("device"))) if best and best.result.get("device")
        else None,
        best_ms=our_times(best.result) if best else (),
        patterns_applied=tuple(dict.fromkeys(applied)),
        mistakes=mistakes_in(state, workspace, patterns, births),
        gate_runs=len(state.gate_runs), outcome=outcome)


def workspace_summaries(ws: Workspace, now: float) -> tuple[list[SessionSummary], list[str]]:
    """Every session of the workspace summed up, oldest first; and the sessions that could not
    be read, one line each."""
    patterns, _ = load_library(ws.patterns_dir)
    refs = list_sessions(ws)
    births = pattern_birth(patterns, {r.id: started_t(r) for r in refs})
    summaries, problems = [], []
    for ref in refs:
        read = read_session(ref)
        if read.state is None:
            problems.append(f"{ref.id}: {'; '.join(read.problems)}")
            continue
        summaries.append(summarize(read.state, read.events, ws.root, patterns, births, now))
    summaries.sort(key=lambda s: (s.started_t, s.id))
    return summaries, problems
