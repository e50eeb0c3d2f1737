"""One past: what ran before is what the sessions' journals record, and keep/revert, the report's
history and a tune's confirmation all read it there (cockpit/gates/bench/past.py). A bench record
file beside the journal is no run: lost or torn, it changes nothing; the journal's bench stays the
reference. The keep decision is one type, and the shapes journaled before it still read."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

from cockpit import before_workloads
from cockpit.analysis.keep import KeepResult
from cockpit.config import Config
from cockpit.gates.bench.gate import BenchGate
from cockpit.gates.bench.past import past_benches
from cockpit.gates.bench.result import SCHEMA, BenchResult
from cockpit.gates.bench.validity import BenchValidity
from cockpit.gates.gate import GateContext, Verdict, result_json
from cockpit.report.history_reader import workspace_summaries
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.results import gate_finished_event
from cockpit.session.workspace import SessionRef, Workspace, create_session
from cockpit.tune import events as tev

GPU = Path(__file__).parent / "fixtures" / "gpu"


def probe(scale: float, spread: float | None = None) -> dict:
    """The H100 bench a probe wrote on a clean window, ours `scale` times as long (`spread`: every
    config given an interval of ± that share)."""
    data = json.loads(gzip.decompress((GPU / "comparable" / "probe-bench.json.gz").read_bytes()))
    for row in data["rows"]:
        ours = row["impl"]["ours"]
        ours["median_ms"] *= scale
        if spread is not None:
            ours["ci_ms"] = [ours["median_ms"] * (1 - spread), ours["median_ms"] * (1 + spread)]
        elif "ci_ms" in ours:
            ours["ci_ms"] = [v * scale for v in ours["ci_ms"]]
    return data  # type: ignore[no-any-return]


def session(ws: Path, t: float, objective: str) -> SessionRef:
    return create_session(Workspace(ws), Config(), objective, None, t, start_timer=False)


def bench(ws: Path, ref: SessionRef, run_id: str, scale: float, t: float | None = None,
          spread: float | None = None) -> Verdict:
    """The bench gate on `ref`'s workspace, and (`t` given) its finish journaled as the runner does."""
    ctx = GateContext(ws, ref.path, run_id, objective="tile the rows")
    ctx.result_path.parent.mkdir(parents=True, exist_ok=True)
    ctx.result_path.write_text(json.dumps(probe(scale, spread)))
    verdict = BenchGate().verdict(ctx, 0, [])
    if t is not None:
        writer = JournalWriter(ref.journal)
        writer.append(ev.gate_started(t - 60, run_id, "bench", ("python",), f"logs/{run_id}.log", 1))
        writer.append(gate_finished_event(ref.path, ws, t, run_id, "bench", verdict.status, verdict.summary,
                                          60.0, 0, f"logs/{run_id}.log", result_json(verdict)))
        writer.close()
    return verdict


def test_a_bench_whose_record_file_is_lost_or_torn_is_still_the_reference_its_journal_holds(
        tmp_path: Path) -> None:
    now = time.time()
    first = session(tmp_path, now - 7200, "baseline the rows")
    bench(tmp_path, first, "002-bench", 1.0, now - 3600)
    results = first.path / "results"
    assert not list(results.glob("bench-*.json"))  # the journal is the record: no second copy
    (results / "bench-20261121-232939.json").write_text('{"session": "x", "t": 1, "valid": tr')  # torn
    second = session(tmp_path, now - 600, "tile the rows")
    verdict = bench(tmp_path, second, "003-bench", 0.8)
    keep = KeepResult.from_json(result_json(verdict)["keep"])
    assert keep is not None and keep.action == "keep", result_json(verdict)["keep"]
    assert keep.reference == f"{first.id}/002-bench"
    assert keep.summary.startswith(f"KEEP: +25% vs the best earlier run ({first.id}/002-bench) over ")


def test_keep_and_the_history_read_the_same_past(tmp_path: Path) -> None:
    now = time.time()
    a = session(tmp_path, now - 9000, "baseline the rows")
    bench(tmp_path, a, "002-bench", 1.0, now - 8000)
    b = session(tmp_path, now - 5000, "tile the rows")
    bench(tmp_path, b, "002-bench", 0.8, now - 4000)
    bench(tmp_path, b, "003-bench", 0.9, now - 3000)
    past = past_benches(tmp_path)
    assert [r.run for r in past] == [f"{a.id}/002-bench", f"{b.id}/002-bench", f"{b.id}/003-bench"]
    summaries, problems = workspace_summaries(Workspace(tmp_path), now)
    assert not problems
    best = {s.id: s.best_run for s in summaries}
    fastest = min((r for r in past if r.decides), key=lambda r: sum(r.ours_ms.values()))
    assert fastest.run == f"{b.id}/002-bench" == f"{b.id}/{best[b.id]}"  # the history's best is keep's
    assert dict(next(s for s in summaries if s.id == b.id).best_ms) == \
        {c: ms for c, ms in fastest.ours_ms.items() if c not in fastest.suspect_configs}


def test_a_tunes_confirmation_in_the_journal_is_the_next_benchs_reference(tmp_path: Path) -> None:
    now = time.time()
    ref = session(tmp_path, now - 7200, "tune the rows")
    rows = [{**r, "impl": {"ours": r["impl"]["ours"]}} for r in probe(1.0)["rows"]]
    confirmed = BenchResult(schema=SCHEMA, workload=before_workloads.WORKLOAD, ours="ours", candidates=("ours",),
                            baseline="sdpa", labels={}, speedup=None, configs=None, vs={},
                            validity=BenchValidity.from_json({"valid": True}), raw_rows=tuple(rows))
    writer = JournalWriter(ref.journal)
    writer.append(tev.tune_finished(now - 3600, "tune-1", "revert", "REVERT: nothing beat it",
                                    keep=KeepResult("revert", "REVERT: nothing beat it").to_json(),
                                    bench=confirmed.to_json()))
    writer.close()
    assert [r.run for r in past_benches(tmp_path)] == [f"{ref.id}/tune-1"]
    verdict = bench(tmp_path, ref, "002-bench", 1.0)
    keep = KeepResult.from_json(result_json(verdict)["keep"])
    assert keep is not None and keep.action == "revert" and keep.reference == f"{ref.id}/tune-1"


def test_the_keep_decisions_journaled_before_the_one_type_still_read() -> None:
    tune = {"action": "keep", "summary": "KEEP: N=4096 ROWS=4 1.30x vs current", "improvement": 0.3,
            "header": "workloads/softmax/softmax.tuned.json", "paths": ["workloads/softmax/softmax.tuned.json"],
            "commit_message": "softmax: knob values tuned"}  # a tune's, before: no shared_configs, no reference
    kept = KeepResult.from_json(tune)
    assert kept is not None and kept.decides and kept.header == tune["header"]
    assert kept.touched == ("workloads/softmax/softmax.tuned.json",) and kept.shared_configs is None
    bench_before = {"action": "revert", "summary": "REVERT: +3% vs the best earlier run (s/bench-1.json)",
                    "improvement": 0.03, "shared_configs": 56, "commit_message": "",
                    "reference": "sessions/s/results/bench-20261121-232939.json"}  # a record's path, no paths
    old = KeepResult.from_json(before_workloads.keep(bench_before))  # as a bench result reads it
    assert old is not None and old.reference == bench_before["reference"] and old.touched == ("csrc/",)
    assert KeepResult.from_json(old.to_json()) == old


def test_the_examples_tunes_confirmed_before_they_were_journaled_are_still_references() -> None:
    """The example sessions' two tunes wrote their confirmations as bench-*.json beside the journal:
    keep reads each as the confirmation of the tune that finished within a second of it."""
    examples = Path(__file__).resolve().parent.parent / "examples"
    runs = [r.run.split("/")[1] for r in past_benches(examples)]
    assert [run for run in runs if run.startswith("tune-")] == ["tune-20261123-085213", "tune-20261123-111122"]


def test_a_sessions_past_is_kept_until_its_journal_changes(tmp_path: Path, monkeypatch) -> None:
    """A bench in a workspace of thousands of sessions folded each journal (51 s at 2,000): a
    session's records are kept beside its journal's look, and folded again only when it grows."""
    from cockpit.gates.bench import past

    ref = session(tmp_path, time.time() - 3600, "tile")
    bench(tmp_path, ref, "001-bench", 1.0, t=time.time() - 600)
    later = time.time() + 60  # read a minute after its last line (a journal just written is not kept)
    monkeypatch.setattr(past.time, "time", lambda: later)
    first = past_benches(tmp_path)
    assert [r.run for r in first] == [f"{ref.id}/001-bench"]

    def no_fold(*args: object, **kwargs: object) -> None:
        raise AssertionError("a journal that did not change was folded again")

    monkeypatch.setattr(past, "fold", no_fold)
    assert past_benches(tmp_path) == first  # kept: not folded
    monkeypatch.undo()
    monkeypatch.setattr(past.time, "time", lambda: later)
    bench(tmp_path, ref, "002-bench", 0.8, t=time.time())  # the journal grows: folded again
    assert [r.run for r in past_benches(tmp_path)] == [f"{ref.id}/001-bench", f"{ref.id}/002-bench"]


def _journal_finish(ref: SessionRef, ws: Path, run_id: str, t: float, verdict: Verdict,
                    result: dict[str, object]) -> None:
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(t - 60, run_id, "bench", ("python",), f"logs/{run_id}.log", 1))
    writer.append(gate_finished_event(ref.path, ws, t, run_id, "bench", "fail", verdict.summary, 60.0, 0,
                                      f"logs/{run_id}.log", result))
    writer.close()


def test_a_bench_the_last_cockpit_refused_is_no_reference_for_the_next(tmp_path: Path) -> None:
    """A bench refused for a time the card cannot reach, journaled before the `counts` flag: its own
    REVERT (no improvement: the keep rule's always has one) says it decides nothing. Read as counting,
    it told every later bench to revert, -100 %."""
    now = time.time()
    first = session(tmp_path, now - 7200, "baseline the rows")
    bench(tmp_path, first, "001-bench", 1.0, now - 5000)
    fast = bench(tmp_path, first, "002-bench", 1e-4)  # judged, journaled below as the last cockpit did
    old = {k: v for k, v in result_json(fast).items() if k != "counts"}
    old["keep"] = {"action": "revert", "summary": "REVERT: about 9999x faster than 32 MB can move",
                   "improvement": None, "shared_configs": 0, "commit_message": "", "reference": None,
                   "paths": ["csrc/"]}
    _journal_finish(first, tmp_path, "002-bench", now - 3600, fast, old)
    assert [(r.run.split("/")[1], r.decides) for r in past_benches(tmp_path)] == [
        ("001-bench", True), ("002-bench", False)]
    second = session(tmp_path, now - 600, "tile the rows")
    keep = KeepResult.from_json(result_json(bench(tmp_path, second, "003-bench", 0.8))["keep"])
    assert keep is not None and keep.action == "keep" and keep.reference == f"{first.id}/001-bench"


def test_an_old_tunes_confirmation_keeps_its_own_workload(tmp_path: Path) -> None:
    """A softmax tune finished by the last cockpit wrote its confirmation as a bench record naming
    softmax; read as a result from before workloads, it was attention's and no softmax reference."""
    now = time.time()
    ref = session(tmp_path, now - 7200, "tune softmax")
    rows = [{"config": f"M=4096 N={n} fp16", "impl": {"ours": {"median_ms": 0.01 * n / 1024}},
             "speedup_vs_torch.softmax": 1.2} for n in (1024, 2048)]
    (ref.path / "results").mkdir(exist_ok=True)
    (ref.path / "results" / "bench-20261129-070000.json").write_text(json.dumps(
        {"rows": rows, "session": ref.id, "t": now - 3600.3, "valid": True, "workload": "softmax"}))
    writer = JournalWriter(ref.journal)
    writer.append(tev.tune_finished(now - 3600, "tune-20261129-070000", "keep", "KEEP: tuned",
                                    keep={"action": "keep", "summary": "KEEP: tuned", "improvement": 0.3}))
    writer.close()
    [record] = past_benches(tmp_path)
    assert (record.run, record.workload, record.decides, len(record.ours_ms)) == (
        f"{ref.id}/tune-20261129-070000", "softmax", True, 2)


def test_a_bench_read_while_its_verdict_file_was_missing_is_read_again_when_it_is_back(
        tmp_path: Path, monkeypatch) -> None:
    """The kept past is not kept from a read that found a bench's verdict file missing (a partial
    rsync): that bench was its headline, no reference; once the file is back it is one."""
    from cockpit.gates.bench import past

    now = time.time()
    ref = session(tmp_path, now - 7200, "baseline the rows")
    bench(tmp_path, ref, "001-bench", 1.0, now - 3600)
    [verdict_file] = (ref.path / "results").glob("001-bench.verdict.json")
    later = time.time() + 60  # read a minute after its last line: a journal just written is not kept
    monkeypatch.setattr(past.time, "time", lambda: later)
    verdict_file.rename(verdict_file.with_suffix(".away"))
    assert [len(r.ours_ms) for r in past_benches(tmp_path)] == [0]
    verdict_file.with_suffix(".away").rename(verdict_file)
    assert [len(r.ours_ms) for r in past_benches(tmp_path)] == [56]
