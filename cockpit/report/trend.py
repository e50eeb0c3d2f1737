"""Sessions compared: this one against the one before, and the whole workspace's trend —
duration, time to the first valid baseline, best valid speedup against each reference, patterns
applied, repeated mistakes — with regressions called out. A workspace may hold several
workloads: sessions are compared only with sessions of their own workload."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from cockpit.analysis.keep import geomean_speedup
from cockpit.analysis.stats import geomean
from cockpit.report.history import REGRESSION_MARGIN, SessionSummary, resolve_workloads
from cockpit.report.model import CompareRow, Comparison

SECONDS_SHOWN_BELOW_S = 600
"""A duration under 10 minutes is shown to the second ("1:40 min"): two short sessions never
read "2 min (was 2 min) +44 %". It fits `cockpit history`'s 8-character column."""


def shown_seconds(seconds: float) -> float:
    """`seconds` rounded as `minutes` shows it: to the second under 10 minutes, else to the minute."""
    whole = round(seconds)
    return whole if whole < SECONDS_SHOWN_BELOW_S else round(seconds / 60) * 60


def minutes(seconds: float | None) -> str:
    """"—", "40 s", "1:40 min", "2:00 min", "12 min"."""
    if seconds is None:
        return "—"
    shown = shown_seconds(seconds)
    if shown >= SECONDS_SHOWN_BELOW_S:
        return f"{shown // 60:.0f} min"
    mins, secs = divmod(int(shown), 60)
    return f"{mins}:{secs:02d} min" if mins else f"{secs} s"


def duration_change(now: float | None, before: float | None) -> str:
    """`change` of two durations as `minutes` shows them: the percentage never contradicts them."""
    return change(None if now is None else shown_seconds(now),
                  None if before is None else shown_seconds(before), lower_is_better=True)


def times(speedup: float | None) -> str:
    return "—" if speedup is None else f"{speedup:.2f}x"


def pattern_ids(ids: Iterable[int]) -> str:
    """Pattern numbers as the library names its files: "#03,#10"; "—" for none."""
    return ",".join(f"#{i:02d}" for i in ids) or "—"


def change(now: float | None, before: float | None, lower_is_better: bool) -> str:
    """"-38 % (better)" — relative change, and whether it is the way the loop wants."""
    if now is None or before is None or before == 0:
        return "—"
    delta = now / before - 1
    if abs(delta) < 0.005:
        return "same"
    better = (delta < 0) == lower_is_better
    return f"{delta:+.0%} ({'better' if better else 'worse'})"


def count_change(now: int, before: int, lower_is_better: bool) -> str:
    if now == before:
        return "same"
    better = (now < before) == lower_is_better
    return f"{now - before:+d} ({'better' if better else 'worse'})"


def references(sessions: Iterable[SessionSummary]) -> tuple[tuple[str, str], ...]:
    """(id, label) of every reference the sessions were measured against, in the order they
    appear: the baseline of the first session that names one leads."""
    found: dict[str, str] = {}
    for s in sessions:
        for r in s.best_vs:
            found.setdefault(r.reference, r.label)
    return tuple(found.items())


def reference_metric(index: int, label: str) -> str:
    """How a comparison names one reference's row: the baseline's first, as the speedup."""
    return f"best valid speedup vs {label}" if index == 0 else f"best valid run vs {label}"


def compare(this: SessionSummary, previous: SessionSummary) -> Comparison:
    """The numbers of the learning loop, this session against the one before (of its workload)."""
    versus = [CompareRow(reference_metric(i, label), times(this.vs(ref)), times(previous.vs(ref)),
                         change(this.vs(ref), previous.vs(ref), lower_is_better=False))
              for i, (ref, label) in enumerate(references((this, previous)))]
    rows = (
        CompareRow("duration", minutes(this.duration_s), minutes(previous.duration_s),
                   duration_change(this.duration_s, previous.duration_s)),
        CompareRow("time to first valid baseline", minutes(this.first_valid_s),
                   minutes(previous.first_valid_s),
                   duration_change(this.first_valid_s, previous.first_valid_s)),
        *(versus or [CompareRow("best valid speedup", times(this.best_speedup),
                                times(previous.best_speedup),
                                change(this.best_speedup, previous.best_speedup, False))]),
        CompareRow("patterns applied", str(len(this.patterns_applied)),
                   str(len(previous.patterns_applied)),
                   count_change(len(this.patterns_applied), len(previous.patterns_applied), False)),
        CompareRow("repeated mistakes", str(len(this.mistakes)), str(len(previous.mistakes)),
                   count_change(len(this.mistakes), len(previous.mistakes), True)),
    )
    return Comparison(previous.id, previous.objective, rows)


@dataclass(frozen=True)
class Regression:
    session: str
    earlier: str
    slower: float
    """How much slower, as a fraction (0.12 = 12 % slower)."""
    configs: int
    text: str


@dataclass(frozen=True)
class WorkloadHistory:
    """The sessions of one workload, oldest first, and their trend."""

    workload: str | None
    """None only when no session of the workspace ran a bench."""
    sessions: tuple[str, ...]
    references: tuple[tuple[str, str], ...]
    """(id, label) of the references its sessions were measured against, the baseline first."""
    vs_previous: Comparison | None
    """Its latest session against the one before it."""
    overall: tuple[str, ...]
    best_speedups: tuple[float | None, ...]


@dataclass(frozen=True)
class HistoryTable:
    """Every session side by side, oldest first, with the trend; what `cockpit history` prints
    and the TUI's History screen draws."""

    sessions: tuple[SessionSummary, ...]
    vs_previous: Comparison | None
    """The latest session against the one before it on its workload."""
    overall: tuple[str, ...]
    """Each workload's trend (its lines start with the workload's name when there are several)."""
    regressions: tuple[Regression, ...]
    durations_min: tuple[float, ...]
    best_speedups: tuple[float | None, ...]
    """Each session's against its own workload's baseline."""
    problems: tuple[str, ...] = ()
    workloads: tuple[WorkloadHistory, ...] = ()
    """The sessions grouped by workload; the latest session's workload last."""


def slower_beyond_noise(earlier: SessionSummary, later: SessionSummary, speedup: float) -> bool:
    """Whether `later`'s best run is slower than `earlier`'s beyond what they measured: with both
    runs' intervals, the geometric mean of the configs' best-case ratios stays under 1; runs from
    before intervals fall back to a fixed margin (REGRESSION_MARGIN)."""
    before = {c: (lo, hi) for c, lo, hi in earlier.best_ci}
    after = {c: (lo, hi) for c, lo, hi in later.best_ci}
    shared = [c for c in after if c in before]
    if not shared:
        return speedup < 1 - REGRESSION_MARGIN
    best_case = math.exp(sum(math.log(before[c][1] / after[c][0]) for c in shared) / len(shared))
    return best_case < 1.0


Fastest = tuple[float, SessionSummary]
"""A run's geometric-mean time over its configs, and its session."""


def _worst_loss(fastest: Iterable[Fastest], s: SessionSummary) -> tuple[float, int, SessionSummary] | None:
    """The earlier run `s` is slowest against beyond noise (its speedup, the configs shared, its
    session); None when it loses to none."""
    worst: tuple[float, int, SessionSummary] | None = None
    for _, earlier in fastest:
        speedup, shared = geomean_speedup(dict(earlier.best_ms), dict(s.best_ms))
        if shared and slower_beyond_noise(earlier, s, speedup) and (worst is None or speedup < worst[0]):
            worst = (speedup, shared, earlier)
    return worst


class RegressionWatch:
    """Regressions found as sessions arrive, oldest first: each session's best valid run against the
    fastest earlier run of its workload on the same GPU, one per set of configs measured (over one
    set, the geometric mean orders the runs: the fastest is the one a later run loses most to). It
    holds one run per (workload, GPU, config set), not one per session: 10,000 sessions stream."""

    def __init__(self) -> None:
        self._fastest: dict[tuple[str | None, str | None], dict[frozenset[str], Fastest]] = {}

    def see(self, s: SessionSummary) -> Regression | None:
        """`s` judged against the runs seen before it, then kept if it is the fastest of its set."""
        if not s.best_ms:
            return None
        runs = self._fastest.setdefault((s.workload, s.device), {})
        worst = _worst_loss(runs.values(), s)
        configs = frozenset(c for c, _ in s.best_ms)
        mean = geomean([ms for _, ms in s.best_ms])  # medians are > 0 (results/bench.py reads them so)
        if configs not in runs or mean < runs[configs][0]:
            runs[configs] = (mean, s)
        if worst is None:
            return None
        speedup, shared, earlier = worst
        slower = 1 / speedup - 1
        return Regression(s.id, earlier.id, round(slower, 4), shared,
                          f"{s.id}: best valid run {slower:.0%} slower than {earlier.id}'s "
                          f"over {shared} shared configs on {s.device or 'the same GPU'}")


def regressions(sessions: Sequence[SessionSummary]) -> tuple[Regression, ...]:
    """Each session of one workload (oldest first) whose best valid run is slower than an earlier
    session's on the same GPU and configs (RegressionWatch)."""
    watch = RegressionWatch()
    return tuple(r for s in sessions if (r := watch.see(s)) is not None)


TREND_POINTS = 20
"""Sessions a trend line lists one by one: the latest (a workspace of 10,000 keeps its line short)."""


def overall(sessions: Sequence[SessionSummary]) -> tuple[str, ...]:
    """The trend over all sessions, in a few lines."""
    if len(sessions) < 2:
        return ("one session so far: the trend starts with the next one",) if sessions else ()
    lines = [*_duration_trend(sessions), *_reference_trends(sessions)]
    firsts = [s.first_valid_s for s in sessions if s.first_valid_s is not None]
    if len(firsts) >= 2:
        lines.append(f"time to first valid baseline: {minutes(firsts[0])} → {minutes(firsts[-1])}")
    counts = [str(len(s.mistakes)) for s in sessions[-TREND_POINTS:]]
    cut = f" (the last {TREND_POINTS} of {len(sessions)} sessions)" if len(sessions) > TREND_POINTS else ""
    lines.append("repeated mistakes per session: " + " → ".join(counts) + cut)
    lines.append(f"patterns applied: {sum(len(s.patterns_applied) for s in sessions)} over "
                 f"{len(sessions)} sessions")
    return tuple(lines)


def _duration_trend(sessions: Sequence[SessionSummary]) -> list[str]:
    """How much shorter or longer each ended session ran than the one before (geometric mean);
    nothing with fewer than two ended."""
    durations = [s.duration_s for s in sessions if s.ended_t is not None and s.duration_s > 0]
    if len(durations) < 2:
        return []
    mean = geomean([b / a for a, b in pairwise(durations)]) - 1
    return [f"duration: each ended session {abs(mean):.0%} "
            f"{'shorter' if mean < 0 else 'longer'} than the one before, on average "
            f"({minutes(durations[0])} → {minutes(durations[-1])})"]


def _reference_trends(sessions: Sequence[SessionSummary]) -> list[str]:
    """The speedup over each reference, first session that measured it to the last; over the
    baseline (the first reference), the best one too."""
    lines = []
    for i, (ref, label) in enumerate(references(reversed(sessions))):
        measured = [s for s in sessions if s.vs(ref) is not None]
        if not measured:
            continue
        line = (f"{reference_metric(i, label)}: {times(measured[0].vs(ref))} in {measured[0].id} → "
                f"{times(measured[-1].vs(ref))} in {measured[-1].id}")
        if i == 0:
            best = max(measured, key=lambda s: s.vs(ref) or 0.0)
            line += f"; best {times(best.vs(ref))} in {best.id}"
        lines.append(line)
    return lines


def workload_history(workload: str | None, sessions: Sequence[SessionSummary]) -> WorkloadHistory:
    """One workload's sessions (oldest first) with their trend; its latest session's references
    lead."""
    return WorkloadHistory(
        workload, tuple(s.id for s in sessions), references(reversed(sessions)),
        compare(sessions[-1], sessions[-2]) if len(sessions) >= 2 else None, overall(sessions),
        tuple(s.best_speedup for s in sessions))


def history_table(sessions: Sequence[SessionSummary], problems: Sequence[str] = (),
                  found: Sequence[Regression] | None = None) -> HistoryTable:
    """`found`: the regressions a HistoryReader found as it read (its sessions no longer hold the
    per-config medians to find them again)."""
    ordered = tuple(sorted(sessions, key=lambda s: (s.started_t, s.id)))
    ordered_groups = _by_workload(ordered)
    workloads = tuple(workload_history(w, members) for w, members in ordered_groups)
    several = len(workloads) > 1
    position = {s.id: i for i, s in enumerate(ordered)}
    return HistoryTable(
        sessions=ordered,
        vs_previous=workloads[-1].vs_previous if workloads else None,
        overall=tuple(f"{w.workload}: {line}" if several else line
                      for w in workloads for line in w.overall),
        regressions=tuple(sorted(found if found is not None else _regressions_of(ordered_groups),
                                 key=lambda r: position[r.session])),
        durations_min=tuple(round(s.duration_s / 60, 1) for s in ordered),
        best_speedups=tuple(s.best_speedup for s in ordered), problems=tuple(problems),
        workloads=workloads)


def _by_workload(ordered: tuple[SessionSummary, ...]) -> list[tuple[str | None, list[SessionSummary]]]:
    """The sessions (oldest first) grouped by workload, the workload worked on most recently last:
    nearest the prompt, and the History screen's first view."""
    groups: dict[str | None, list[SessionSummary]] = {}
    for s, workload in zip(ordered, resolve_workloads(ordered), strict=True):
        groups.setdefault(workload, []).append(s)
    return sorted(groups.items(), key=lambda g: (g[1][-1].started_t, g[1][-1].id))


def _regressions_of(groups: list[tuple[str | None, list[SessionSummary]]]) -> Iterator[Regression]:
    """Each workload's regressions, found again from its sessions' per-config medians."""
    for _, members in groups:
        yield from regressions(members)
