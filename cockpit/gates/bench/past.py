"""What ran before: every bench of the workspace as its session's journal records it, the one past
that keep/revert compares with, the report and `cockpit history` sum up, and a tune's confirmation
joins.

The journal is the record (session/results.py): a bench gate's `gate_finished` result, inline or
in the verdict file the event names, and a tune's confirmation in its `tune_finished` event, both
a bench result (gates/bench/result.py). Nothing else is read: a file beside the journal that no
event names is no run, and a bench whose verdict file was lost reads as its headline, which has no
per-config times and so is no reference. One upgrade where it is read: a tune finished before its
confirmation was journaled (no `bench` in its `tune_finished`) wrote it as `results/bench-*.json`
within a second of the event, and that file is read as its confirmation.

A workspace of 2,000 sessions took 51 s to fold for every bench gate run. A session's records are
kept in the user's cache beside its journal's look (cockpit/user_cache.py: device, inode, size,
mtime, ctime): a journal that still looks so is not folded again, and an open session, whose
journal grows, is folded as it grows.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from cockpit import before_workloads
from cockpit.analysis.keep import BenchRecord, bench_record, record_json, record_of
from cockpit.errors import CockpitError
from cockpit.gates.bench.result import BenchResult, read_bench_result
from cockpit.gates.catalog import measures
from cockpit.json_fields import as_number, objects, strings, text
from cockpit.session.journal import read_journal
from cockpit.session.results import read_result_json
from cockpit.session.state import GateRunRecord, SessionState, fold
from cockpit.session.workspace import Workspace, list_sessions
from cockpit.user_cache import keep, kept, look

BenchRun = tuple[GateRunRecord, BenchResult]
TUNE_FINISHED = "tune_finished"
KIND = "past"
"""The user cache's folder of kept session pasts."""
CONFIRMATION_WITHIN_S = 1.0
"""How long before its `tune_finished` event an old tune wrote its confirmation's file."""
CRASHED_REFERENCE = "a reference that crashes decides nothing"
"""How the gate's BASELINE of a run whose reference crashed ends (gates/bench/gate.py)."""
COUNTS = "counts"
"""A bench result's flag, false when the run decides nothing whatever its validity (a candidate
crashed, or a time the card cannot reach): never a reference."""


def finished_benches(state: SessionState) -> list[BenchRun]:
    """The session's finished bench gate runs, each read from the journal's headline (its
    speedups, validity and references; `run.result` has its tables)."""
    return [(r, b) for r in state.gate_runs if measures(r.gate) and r.finished
            and (b := read_bench_result(r.result_inline)) is not None]


def as_record(run: str, t: float, bench: BenchResult) -> BenchRecord:
    """A bench result (whole: its rows) as keep/revert compares it."""
    counts = _counts(bench)
    why = ", ".join(bench.validity.suspect_why) if bench.validity is not None else ""
    return bench_record(run, t, bench.raw_rows, bench.ours, bench.workload, bench.valid and counts,
                        bench.decidable and counts, bench.left_out, why)


def _counts(bench: BenchResult) -> bool:
    """Whether the bench may be a reference. A result journaled before the `counts` flag says it by
    its keep decision: the gate's own REVERT of a refused or crashed run is the only one without an
    improvement (the keep rule's always has one), and a crashed reference's BASELINE says so."""
    flag = bench.raw.get(COUNTS)
    if isinstance(flag, bool):
        return flag
    keep = bench.keep
    if keep is None:
        return True
    crashed_reference = keep.action == "baseline" and keep.summary.endswith(CRASHED_REFERENCE)
    return not ((keep.action == "revert" and keep.improvement is None) or crashed_reference)


def session_past(state: SessionState, results: Path | None = None) -> tuple[list[BenchRecord], bool]:
    """The session's benches, oldest first: its bench gate runs and its tunes' confirmations
    (`results`: the session's results folder, where an old tune's confirmation is read); and
    whether each was read whole (a result file that could not be read leaves its bench as its
    headline, no reference: that answer is not kept, so the next bench reads it again)."""
    records: list[BenchRecord] = []
    whole_read = True
    for r, _ in finished_benches(state):
        whole = read_bench_result(r.result)
        whole_read &= not r.result_file or r.result is not r.result_inline
        if whole is not None:
            records.append(as_record(f"{state.id}/{r.run_id}", r.finished_t or r.started_t, whole))
    for event in state.tune_events:
        if event.get("type") != TUNE_FINISHED:
            continue
        run, at = f"{state.id}/{event.get('run')}", float(event["t"])
        confirmed = read_bench_result(event["bench"]) if "bench" in event else None
        record = (as_record(run, at, confirmed) if confirmed is not None
                  else _old_confirmation(results, run, at))
        if record is not None:
            records.append(record)
    return sorted(records, key=lambda r: r.t), whole_read


def _old_confirmation(results: Path | None, run: str, at: float) -> BenchRecord | None:
    """A tune's confirmation from before it was journaled: the bench record (`bench-*.json`: its
    rows, validity and workload) its tune wrote within a second before the `tune_finished` event."""
    if results is None:
        return None
    for path in sorted(results.glob("bench-*.json")):
        try:
            data = read_result_json(path)
        except (CockpitError, OSError, ValueError):
            continue
        if not isinstance(data, dict) or (wrote := as_number(data.get("t"))) is None:
            continue
        if 0.0 <= at - wrote <= CONFIRMATION_WITHIN_S:
            decidable = data.get("decidable")
            return bench_record(run, at, objects(data.get("rows")), "ours",
                                text(data.get("workload")) or before_workloads.WORKLOAD,
                                data.get("valid") is True, decidable if isinstance(decidable, bool) else None,
                                strings(data.get("suspect_configs")))
    return None


def past_benches(workspace: Path) -> list[BenchRecord]:
    """Every bench the workspace's journals record, oldest first; a journal that cannot be read,
    or does not begin as a session, holds none."""
    records: list[BenchRecord] = []
    for ref in list_sessions(Workspace(workspace)):
        records += _kept_past(ref.confined().journal, workspace)
    return sorted(records, key=lambda r: r.t)


def _kept_past(journal: Path, workspace: Path) -> list[BenchRecord]:
    """One session's records: kept ones while its journal looks as it did, else folded and kept."""
    answer = kept(KIND, journal)
    if answer is not None:
        try:
            found = [record_of(value) for value in json.loads(answer)]
        except ValueError:
            found = [None]
        if all(record is not None for record in found):
            return [record for record in found if record is not None]
    seen, read_t = look(journal), time.time()
    try:
        state = fold(read_journal(journal).events, workspace)
    except CockpitError:
        return []
    records, whole_read = session_past(state, journal.parent / "results")
    if whole_read:
        kept_line = json.dumps([record_json(r) for r in records], separators=(",", ":"))
        keep(KIND, journal, kept_line, seen, read_t)
    return records
