"""What ran before: every bench of the workspace as its session's journal records it, the one past
that keep/revert compares with, the report and `cockpit history` sum up, and a tune's confirmation
joins.

The journal is the record (session/results.py): a bench gate's `gate_finished` result, inline or
in the verdict file the event names, and a tune's confirmation in its `tune_finished` event, both
a bench result (gates/bench/result.py). Nothing else is read: a file beside the journal that no
event names is no run, and a bench whose verdict file was lost reads as its headline, which has no
per-config times and so is no reference.
"""

from __future__ import annotations

from pathlib import Path

from cockpit.analysis.keep import BenchRecord, bench_record
from cockpit.errors import CockpitError
from cockpit.gates.bench.result import BenchResult, read_bench_result
from cockpit.gates.catalog import measures
from cockpit.session.journal import read_journal
from cockpit.session.state import GateRunRecord, SessionState, fold
from cockpit.session.workspace import Workspace, list_sessions

BenchRun = tuple[GateRunRecord, BenchResult]
TUNE_FINISHED = "tune_finished"
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
    counts = bench.raw.get(COUNTS) is not False
    why = ", ".join(bench.validity.suspect_why) if bench.validity is not None else ""
    return bench_record(run, t, bench.raw_rows, bench.ours, bench.workload, bench.valid and counts,
                        bench.decidable and counts, bench.left_out, why)


def session_past(state: SessionState) -> list[BenchRecord]:
    """The session's benches, oldest first: its bench gate runs and its tunes' confirmations."""
    records = [as_record(f"{state.id}/{r.run_id}", r.finished_t or r.started_t, whole)
               for r, _ in finished_benches(state) if (whole := read_bench_result(r.result)) is not None]
    for event in state.tune_events:
        confirmed = read_bench_result(event.get("bench")) if event.get("type") == TUNE_FINISHED else None
        if confirmed is not None:
            records.append(as_record(f"{state.id}/{event.get('run')}", float(event["t"]), confirmed))
    return sorted(records, key=lambda r: r.t)


def past_benches(workspace: Path) -> list[BenchRecord]:
    """Every bench the workspace's journals record, oldest first; a journal that cannot be read,
    or does not begin as a session, holds none."""
    records: list[BenchRecord] = []
    for ref in list_sessions(Workspace(workspace)):
        try:
            state = fold(read_journal(ref.confined().journal).events, workspace)
        except CockpitError:
            continue
        records += session_past(state)
    return sorted(records, key=lambda r: r.t)
