"""Keep or revert: after ONE change, compare with the best earlier valid run of the same configs.

At least `keep_improvement` faster (20 % by default, geometric mean over the shared configs)
→ KEEP and commit the kernel's files; otherwise REVERT them to the last kept version. A run suspect
of named configs alone (blocks never clean there, a foreign process over their blocks: the
validity verdict's `suspect_configs`) still decides, on the other configs, and says how many it
left out; a run suspect window-wide decides nothing. This module decides and runs nothing: git is
cockpit/gates/kernel_git.py's, which commits or restores the kernel's files after the engineer
confirms.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cockpit import before_workloads
from cockpit.analysis.stats import geomean
from cockpit.json_fields import JsonObject, as_number, obj, pair, strings, texts
from cockpit.session.results import read_result_json

Action = Literal["keep", "revert", "baseline"]


@dataclass(frozen=True)
class BenchRecord:
    """A saved bench run: our median per config, whether the GPU was clean, and where it was."""

    path: Path
    session: str
    t: float
    valid: bool
    ours_ms: dict[str, float]
    commit: str | None = None
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


@dataclass(frozen=True)
class KeepDecision:
    action: Action
    summary: str
    improvement: float | None = None
    """Geometric-mean speedup of ours over the reference run, minus 1 (0.23 = 23 % faster)."""
    reference: BenchRecord | None = None
    shared_configs: int = 0
    commit_message: str = ""


def read_bench_record(path: Path) -> BenchRecord | None:
    try:
        data = read_result_json(path)
        data = before_workloads.bench_record(data) if isinstance(data, dict) else data
        ours = {row["config"]: float(row["impl"]["ours"]["median_ms"])
                for row in data["rows"] if "ours" in row.get("impl", {})}
        ci = {row["config"]: (float(c[0]), float(c[1])) for row in data["rows"]
              if isinstance(c := row.get("impl", {}).get("ours", {}).get("ci_ms"), list) and len(c) == 2}
        bound = frozenset(row["config"] for row in data["rows"] if row.get("launch_bound") is True)
        workload = data.get("workload")
        decidable = data.get("decidable")
        return BenchRecord(path, str(data.get("session", "")), float(data.get("t", 0.0)),
                           bool(data.get("valid")), ours, data.get("commit"),
                           workload if isinstance(workload, str) else None, ci, bound,
                           frozenset(strings(data.get("suspect_configs"))),
                           decidable if isinstance(decidable, bool) else None,
                           ", ".join(texts(obj(data.get("validity")).get("suspect_why"))))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not a bench result (or a torn one): never a reference


def bench_history(sessions_dir: Path) -> list[BenchRecord]:
    """Every saved bench run in every session, oldest first."""
    records = [r for p in sorted(sessions_dir.glob("*/results/bench-*.json"))
               if (r := read_bench_record(p)) is not None]
    return sorted(records, key=lambda r: r.t)


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
                keep_improvement: float = 0.2) -> KeepDecision:
    """KEEP, REVERT, or BASELINE (no earlier valid run of these configs to compare with). Runs
    suspect of named configs compare on the others, and the summary says how many were left out."""
    if not current.decides:
        return KeepDecision("baseline", "this run is suspect (see validity): re-measure on a "
                            "quiet GPU before deciding to keep or revert")
    candidates = []
    for record in history:
        if (record.path == current.path or not record.decides or record.t >= current.t
                or record.measured != current.measured):
            continue  # only an earlier valid (or decidable) run of the same workload is a reference
        out = apart(record, current)
        speedup, shared = geomean_speedup({c: v for c, v in record.ours_ms.items() if c not in out},
                                          {c: v for c, v in current.ours_ms.items() if c not in out})
        if shared:
            candidates.append((speedup, shared, record))
    if not candidates:
        return KeepDecision("baseline", "first valid measurement of these configs: it is the "
                            "reference the next change is compared with")
    # The best earlier run is the one this run gains least on.
    speedup, shared, best = min(candidates, key=lambda c: c[0])
    improvement = speedup - 1.0
    versus = f"{best.session}/{best.path.name}"
    left = _left_out(best, current)
    measured = speedup_interval(best, current)
    if measured is not None and improvement >= keep_improvement and measured[1] <= 1.0:
        return KeepDecision(
            "revert", f"REVERT: {improvement:+.0%} vs the best earlier run ({versus}) but not beyond the "
            f"noise (its interval [{measured[1]:.3f}, {measured[2]:.3f}] reaches 1): re-measure, or try "
            "a different fix", improvement, best, shared)
    if improvement >= keep_improvement:
        return KeepDecision(
            "keep", f"KEEP: {improvement:+.0%} vs the best earlier run ({versus}) over {shared} "
            f"configs{left}",
            improvement, best, shared,
            f"{current.measured}: {objective} ({improvement:+.0%} geomean over {shared} configs vs {versus})")
    return KeepDecision(
        "revert", f"REVERT: {improvement:+.0%} vs the best earlier run ({versus}) over {shared} configs"
        f"{left}, under the {keep_improvement:.0%} bar: restore the last kept version and try a "
        "different fix",
        improvement, best, shared)


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


def bench_record_json(rows: Sequence[JsonObject], session: str, t: float, valid: bool,
                      validity: JsonObject, commit: str | None, decidable: bool | None = None,
                      suspect_configs: Sequence[str] = ()) -> dict[str, object]:
    """The record keep/revert reads back (`read_bench_record`): `decidable` defaults to `valid`."""
    return {"session": session, "t": t, "valid": valid, "validity": validity, "commit": commit,
            "decidable": valid if decidable is None else decidable,
            "suspect_configs": list(suspect_configs), "rows": rows}
