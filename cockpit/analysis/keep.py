"""Keep or revert: after ONE change, compare with the best earlier valid run of the same configs.

At least `keep_improvement` faster (20 % by default, geometric mean over the shared configs)
→ KEEP and commit the kernel's files; otherwise REVERT them to the last kept version. A run suspect
of named configs alone (blocks never clean there, a foreign process over their blocks: the
validity verdict's `suspect_configs`) still decides, on the other configs, and says how many it
left out; a run suspect window-wide decides nothing. This module decides and runs nothing: git is
cockpit/gates/kernel_git.py's, which commits or restores the kernel's files after the engineer
confirms; the past it compares with is cockpit/gates/bench/past.py's. The decision is one type,
`KeepResult`, from the rule to the journal and back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from cockpit.analysis.stats import geomean
from cockpit.json_fields import JsonObject, as_number, compact, numbers, obj, pair, strings, text, whole

ACTIONS = ("keep", "revert", "baseline")


@dataclass(frozen=True)
class KeepResult:
    """KEEP, REVERT or BASELINE after one change, and what carrying it out touches: what the rule
    decides, the bench gate journals in its result and a tune's confirmation in `tune_finished`.

    Version 1: `action`, the `summary` said to the engineer, the `improvement` over the reference
    run (0.23 = 23 % faster), how many configs both shared, the commit message a KEEP would use,
    the reference run, the kernel's paths git may touch, (a tune's) the tuned header it wrote, and
    since issue 47 the `interval` of the speedup over the reference (1 + improvement) where the
    runs measured one (absent before, and for runs without intervals).
    """

    SCHEMA: ClassVar[int] = 1

    action: str
    summary: str
    improvement: float | None = None
    shared_configs: int | None = None
    commit_message: str = ""
    reference: str | None = None
    """The run compared with, `<session>/<run>` (results from before: its bench record's path)."""
    paths: tuple[str, ...] = ()
    header: str | None = None
    """A tune's tuned header (the file a KEEP commits beside the kernel's)."""
    interval: tuple[float, float] | None = None
    """The speedup over the reference's interval (conservative: each config at its worst and best)."""

    @property
    def decides(self) -> bool:
        """KEEP or REVERT: there is something to carry out (a baseline only records)."""
        return self.action in ("keep", "revert")

    @property
    def touched(self) -> tuple[str, ...]:
        """The paths git may touch (a decision read from before the bench named them has csrc/'s:
        cockpit/before_workloads.py)."""
        return self.paths

    @classmethod
    def from_json(cls, value: object) -> KeepResult | None:
        """None when `value` is not a decision (no action, or one this cockpit does not know). Reads
        both shapes journaled before this type: the bench's, and a tune's (no `shared_configs`, no
        `reference`)."""
        data = obj(value)
        action = text(data.get("action"))
        if action not in ACTIONS:
            return None
        return cls(action, text(data.get("summary")) or "", as_number(data.get("improvement")),
                   whole(data.get("shared_configs")), text(data.get("commit_message")) or "",
                   text(data.get("reference")), strings(data.get("paths")), text(data.get("header")),
                   pair(data.get("interval")))

    def to_json(self) -> dict[str, object]:
        return {"action": self.action, "summary": self.summary, "improvement": self.improvement,
                "shared_configs": self.shared_configs, "commit_message": self.commit_message,
                "reference": self.reference, "paths": list(self.paths),
                **compact({"header": self.header,
                           "interval": list(self.interval) if self.interval else None})}


@dataclass(frozen=True)
class BenchRecord:
    """A bench run as keep/revert compares it: our median per config, whether the GPU was clean,
    and which run it was (cockpit/gates/bench/past.py reads every earlier one from the journals)."""

    run: str
    """`<session>/<run id>`: what a decision names as its reference."""
    t: float
    valid: bool
    ours_ms: dict[str, float]
    workload: str | None = None
    """The workload it measured."""
    ours_ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Our median's interval per config (benches that measured one); empty for older records."""
    launch_bound: frozenset[str] = frozenset()
    """Configs a bench from before device time (issue 32) found launch-bound: its time there was
    the host's launch rate, not the kernel's, so they stay out of any comparison with it (a
    newer run's device time against an old launch rate would credit the timing, not the kernel).
    Newer records have none: every config is on device time."""
    suspect_configs: frozenset[str] = frozenset()
    """Configs its validity verdict could not vouch for: left out of every comparison with it."""
    decidable: bool | None = None
    """Valid, or suspect of `suspect_configs` alone (None: a record from before, as `valid`)."""
    left_out_why: str = ""
    """Why its suspect configs were left out, in a few words ("blocks never clean")."""

    @property
    def decides(self) -> bool:
        """It may decide keep/revert and be a reference (on its configs that are not suspect)."""
        return self.valid if self.decidable is None else self.decidable

    @property
    def measured(self) -> str:
        return self.workload or ""


def record_json(record: BenchRecord) -> dict[str, object]:
    """A record as its session's past is kept between bench runs (gates/bench/past.py)."""
    return {"run": record.run, "t": record.t, "valid": record.valid, "ours_ms": record.ours_ms,
            "workload": record.workload, "ours_ci": {c: list(ends) for c, ends in record.ours_ci.items()},
            "launch_bound": sorted(record.launch_bound), "suspect": sorted(record.suspect_configs),
            "decidable": record.decidable, "why": record.left_out_why}


def record_of(value: object) -> BenchRecord | None:
    """A kept record read back; None when it is not one (a cache from another version, torn)."""
    data = obj(value)
    run, t = data.get("run"), as_number(data.get("t"))
    if not isinstance(run, str) or t is None or not isinstance(data.get("valid"), bool):
        return None
    medians = dict(numbers(data.get("ours_ms")))
    ci = {c: ends for c, v in obj(data.get("ours_ci")).items() if (ends := pair(v)) is not None}
    workload, decidable = text(data.get("workload")), data.get("decidable")
    return BenchRecord(run, t, data["valid"] is True, medians, workload, ci,
                       frozenset(strings(data.get("launch_bound"))), frozenset(strings(data.get("suspect"))),
                       decidable if isinstance(decidable, bool) else None, text(data.get("why")) or "")


def bench_record(run: str, t: float, rows: Sequence[JsonObject], ours: str, workload: str | None,
                 valid: bool, decidable: bool | None = None, suspect: Iterable[str] = (),
                 why: str = "") -> BenchRecord:
    """A bench's rows read as keep/revert compares them: `ours`' median and interval per config, and
    the configs a bench from before device time marked launch-bound."""
    cells = [(str(r.get("config")), obj(obj(r.get("impl")).get(ours))) for r in rows]
    medians = {c: ms for c, cell in cells if (ms := as_number(cell.get("median_ms"))) is not None}
    ci = {c: ends for c, cell in cells if c in medians and (ends := pair(cell.get("ci_ms"))) is not None}
    bound = frozenset(str(r.get("config")) for r in rows if r.get("launch_bound") is True)
    return BenchRecord(run, t, valid, medians, workload, ci, bound, frozenset(suspect), decidable, why)


def apart(before: BenchRecord, now: BenchRecord) -> frozenset[str]:
    """The configs a comparison of the two leaves out: either's suspect configs, and those an old
    record found launch-bound."""
    return before.launch_bound | now.launch_bound | before.suspect_configs | now.suspect_configs


def speedup_interval(before: BenchRecord, now: BenchRecord) -> tuple[float, float, float, int] | None:
    """Geometric-mean speedup of `now` over `before` with its interval, over the configs both
    timed with an interval and neither left `apart` (each config's ratio at its worst and best:
    conservative); None when they share no such config (records from before intervals)."""
    out = apart(before, now)
    shared = [c for c in now.ours_ci if c in before.ours_ci and c not in out
              and before.ours_ms.get(c, 0) > 0 and now.ours_ms.get(c, 0) > 0]
    if not shared:
        return None
    mid = geomean([before.ours_ms[c] / now.ours_ms[c] for c in shared])
    lo = geomean([before.ours_ci[c][0] / now.ours_ci[c][1] for c in shared])
    hi = geomean([before.ours_ci[c][1] / now.ours_ci[c][0] for c in shared])
    return mid, lo, hi, len(shared)


def geomean_speedup(reference: dict[str, float], now: dict[str, float]) -> tuple[float, int]:
    shared = [c for c in now if c in reference and reference[c] > 0 and now[c] > 0]
    if not shared:
        return 0.0, 0
    return math.exp(sum(math.log(reference[c] / now[c]) for c in shared) / len(shared)), len(shared)


def rows_geomean(rows: Sequence[JsonObject], key: str) -> tuple[float, int] | None:
    """The geometric mean of one speedup column of a bench result's rows ("speedup_vs_torch.softmax"),
    and over how many configs; None when no row has a usable value. Every
    config counts: each time is the device's (the host's launch cost out of the way), so a small
    shape is the kernel's number like a big one (a host that cannot keep up in eager use is a note)."""
    values = [v for r in valued_rows(rows, key) if (v := as_number(r.get(key))) is not None]
    return (geomean(values), len(values)) if values else None


def valued_rows(rows: Sequence[JsonObject], key: str) -> list[JsonObject]:
    """The rows with a positive value in `key`."""
    return [r for r in rows if (v := as_number(r.get(key))) is not None and v > 0]


def rows_interval(rows: Sequence[JsonObject], key: str) -> tuple[float, float] | None:
    """The headline's interval: the geometric means of the rows' interval ends (`key`_ci, each
    config at its worst and its best: conservative); None when a row has none."""
    kept = valued_rows(rows, key)
    ends = [pair(r.get(f"{key}_ci")) for r in kept]
    found = [e for e in ends if e is not None]
    if not kept or len(found) != len(ends):
        return None
    return geomean([e[0] for e in found]), geomean([e[1] for e in found])


def decide_keep(current: BenchRecord, history: Iterable[BenchRecord], objective: str,
                keep_improvement: float = 0.2) -> KeepResult:
    """KEEP, REVERT, or BASELINE (no earlier valid run of these configs to compare with). Runs
    suspect of named configs compare on the others, and the summary says how many were left out.
    The decision names its reference run; the gate adds the paths git may touch."""
    if not current.decides:
        return KeepResult("baseline", "this run is suspect (see validity): re-measure on a "
                          "quiet GPU before deciding to keep or revert", shared_configs=0)
    candidates = []
    for record in history:
        if (record.run == current.run or not record.decides or record.t >= current.t
                or record.measured != current.measured):
            continue  # only an earlier valid (or decidable) run of the same workload is a reference
        out = apart(record, current)
        speedup, shared = geomean_speedup({c: v for c, v in record.ours_ms.items() if c not in out},
                                          {c: v for c, v in current.ours_ms.items() if c not in out})
        if shared:
            candidates.append((speedup, shared, record))
    if not candidates:
        return KeepResult("baseline", "first valid measurement of these configs: it is the "
                          "reference the next change is compared with", shared_configs=0)
    # The best earlier run is the one this run gains least on.
    speedup, shared, best = min(candidates, key=lambda c: c[0])
    improvement = speedup - 1.0
    versus = best.run
    left = _left_out(best, current)
    measured = speedup_interval(best, current)
    ends = (measured[1], measured[2]) if measured is not None else None
    if ends is not None and improvement >= keep_improvement and ends[0] <= 1.0:
        return KeepResult(
            "revert", f"REVERT: {improvement:+.0%} vs the best earlier run ({versus}) but not beyond the "
            f"noise (its interval [{ends[0]:.3f}, {ends[1]:.3f}] reaches 1): re-measure, or try "
            "a different fix", improvement, shared, reference=versus, interval=ends)
    if improvement >= keep_improvement:
        return KeepResult(
            "keep", f"KEEP: {improvement:+.0%} vs the best earlier run ({versus}) over {shared} "
            f"configs{left}",
            improvement, shared,
            f"{current.measured}: {objective} ({improvement:+.0%} geomean over {shared} configs vs {versus})",
            versus, interval=ends)
    return KeepResult(
        "revert", f"REVERT: {improvement:+.0%} vs the best earlier run ({versus}) over {shared} configs"
        f"{left}, under the {keep_improvement:.0%} bar: restore the last kept version and try a "
        "different fix",
        improvement, shared, reference=versus, interval=ends)


def _left_out(before: BenchRecord, now: BenchRecord) -> str:
    """'; 6 left out: blocks never clean': the configs both measured that a suspect verdict kept
    out of the comparison (empty when none)."""
    both = now.ours_ms.keys() & before.ours_ms.keys()
    out = both & (before.suspect_configs | now.suspect_configs)
    if not out:
        return ""
    if out & now.suspect_configs:
        why = now.left_out_why or "suspect"
    else:
        why = f"{before.left_out_why or 'suspect'} in the earlier run"
    return f"; {len(out)} left out: {why}"
