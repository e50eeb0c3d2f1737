"""A week-long session stays quick to look at: `cockpit status` and the TUI read a saved fold and
the journal's tail, a big gate result lives in results/ with the journal pointing at it, and the
journal reader decodes many lines at once without changing what it reports."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cockpit.clock import FakeClock
from cockpit.report.build import DETAILED_RUNS, build_report
from cockpit.session import events as ev
from cockpit.session import saved_state
from cockpit.session.journal import JournalWriter, read_journal
from cockpit.session.live import LiveSession
from cockpit.session.results import INLINE_MAX, gate_finished_event
from cockpit.session.saved_state import RECENT, cache_dir, open_recent, recent_state
from cockpit.session.state import SessionFold, fold
from cockpit.session.workspace import SessionRef, Workspace

BIG = {"rows": [{"config": f"B=1 H=8 S={s} D=64", "ours_ms": 0.1 + s / 1e6, "ref_ms": {"flash": 0.2}}
                for s in range(2000)], "geomean_speedup": 1.31, "level": "SUCCESS", "keep": True}


def _append(ref: SessionRef, events: list[dict]) -> None:
    with ref.journal.open("a", encoding="utf-8") as f:
        f.writelines(json.dumps(e) + "\n" for e in events)


def _statuses(t0: float, n: int) -> list[dict]:
    return [ev.status(t0 + i, f"status {i}", auto=True) for i in range(n)]


def test_a_result_too_big_for_a_line_goes_to_results_and_reads_back_whole(
        session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    assert len(json.dumps(BIG)) > INLINE_MAX
    finished = gate_finished_event(session.path, ws.root, clock.now(), "001-bench", "bench", "pass",
                                   "1.31x vs flash", 12.0, 0, "sessions/x/logs/001-bench.log", BIG)
    assert finished["result_file"] == f"sessions/{session.id}/results/001-bench.verdict.json"
    assert finished["result"] == {"geomean_speedup": 1.31, "level": "SUCCESS", "keep": True}
    _append(session, [ev.gate_started(clock.now(), "001-bench", "bench", ("x",), "l", 1), finished])
    assert max(len(line) for line in session.journal.read_bytes().splitlines()) < 2000
    run = fold(read_journal(session.journal).events, ws.root).gate_runs[-1]
    assert run.result == BIG  # the whole result, from its file

    (session.path / "results" / "001-bench.verdict.json").unlink()  # a clone that lost the file
    run = fold(read_journal(session.journal).events, ws.root).gate_runs[-1]
    assert run.result == {"geomean_speedup": 1.31, "level": "SUCCESS", "keep": True}


def test_a_stored_result_path_that_leads_out_of_the_workspace_is_not_read(
        session: SessionRef, ws: Workspace, tmp_path_factory: pytest.TempPathFactory, clock: FakeClock) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "secret.json"
    outside.write_text(json.dumps({"format": 1, "run_id": "001-bench", "result": {"secret": 1}}))
    finished = ev.gate_finished(clock.now(), "001-bench", "bench", "pass", "s", 1.0, 0, "l", {"level": "x"})
    _append(session, [ev.gate_started(clock.now(), "001-bench", "bench", ("x",), "l", 1),
                      {**finished, "result_file": str(outside)}])
    assert fold(read_journal(session.journal).events, ws.root).gate_runs[-1].result == {"level": "x"}


def test_the_headline_of_a_big_bench_keeps_its_intervals(
        session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    """A report leads with the speedup and its interval from the journal's headline: the interval
    and the keep decision's are kept there, the tables are not."""
    big = {**BIG, "interval": [1.29, 1.33], "keep": {"action": "keep", "interval": [7.76, 7.92],
                                                     "paths": ["workloads/softmax/"]}}
    finished = gate_finished_event(session.path, ws.root, clock.now(), "001-bench", "bench", "pass",
                                   "1.31x [1.29, 1.33] vs torch.softmax", 12.0, 0, "l", big)
    assert finished["result"] == {"geomean_speedup": 1.31, "level": "SUCCESS", "interval": [1.29, 1.33],
                                  "keep": {"action": "keep", "interval": [7.76, 7.92]}}


def test_a_small_result_stays_in_the_journal(session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    finished = gate_finished_event(session.path, ws.root, clock.now(), "001-env", "env", "pass", "ok", 1.0,
                                   0, "l", {"checks": [{"name": "driver", "value": "580"}]})
    assert "result_file" not in finished and finished["result"]["checks"][0]["value"] == "580"
    assert not (session.path / "results").exists()


def test_the_bounded_fold_keeps_the_latest_and_counts_everything(
        session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    t = clock.now()
    _append(session, [*_statuses(t, 3 * RECENT + 7), ev.note(t + 9999, "last note")])
    for i in range(70):
        _append(session, [ev.gate_started(t + i, f"{i + 1:03d}-env", "env", ("x",), "l", 1),
                          ev.gate_finished(t + i, f"{i + 1:03d}-env", "env", "pass", f"run {i}", 1, 0, "l", {})])
    whole = fold(read_journal(session.journal).events, ws.root)
    opened = open_recent(session.journal, ws.root)
    bounded = opened.fold.state
    assert len(opened.fold._fold.statuses) <= 2 * RECENT  # memory stays bounded while reading
    assert bounded.status_count == whole.status_count == 3 * RECENT + 7
    assert bounded.statuses == whole.statuses[-RECENT:]
    assert bounded.gate_run_count == 70 and bounded.gate_runs == whole.gate_runs[-RECENT:]
    assert bounded.notes[-1].text == "last note" and bounded.event_count == whole.event_count
    assert bounded.last_run("env") == whole.last_run("env")


def test_status_reads_only_the_tail_after_a_saved_fold(
        session: SessionRef, ws: Workspace, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(saved_state, "SAVE_AFTER", 1000)
    _append(session, _statuses(clock.now(), 500))
    first = open_recent(session.journal, ws.root)
    assert (cache_dir(session.journal) / "state.json").exists()
    assert first.fold.state.status_count == 500
    _append(session, [ev.status(clock.now() + 600, "after the save", auto=False)])
    read_from: list[int] = []
    real = saved_state.read_journal

    def spy(path: Path, offset: int = 0, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        read_from.append(offset)
        return real(path, offset, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(saved_state, "read_journal", spy)
    again = open_recent(session.journal, ws.root)
    assert read_from == [first.offset]  # the saved fold, then only what was appended
    assert again.fold.state.status_count == 501 and again.fold.state.statuses[-1].text == "after the save"
    assert again.fold.state == SessionFold(read_journal(session.journal).events, ws.root, RECENT).state


def test_a_saved_fold_of_another_journal_is_never_trusted(
        session: SessionRef, ws: Workspace, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(saved_state, "SAVE_AFTER", 1000)
    _append(session, _statuses(clock.now(), 500))
    open_recent(session.journal, ws.root)
    # the journal replaced under the same name (a checkout of another version of the session)
    lines = session.journal.read_bytes().splitlines(keepends=True)
    other = [ev.status(clock.now() + i, f"another {i}", auto=True) for i in range(600)]
    session.journal.write_bytes(b"".join(lines[:2]) + b"".join((json.dumps(e) + "\n").encode() for e in other))
    state = recent_state(session.journal, ws.root)
    assert state.status_count == 600
    assert [s.text for s in state.statuses] == [f"another {i}" for i in range(600 - RECENT, 600)]


def test_a_damaged_cache_is_read_past(session: SessionRef, ws: Workspace, clock: FakeClock,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(saved_state, "SAVE_AFTER", 1000)
    _append(session, _statuses(clock.now(), 500))
    open_recent(session.journal, ws.root)
    (cache_dir(session.journal) / "state.json").write_text('{"version": 1, "journal": 3')
    assert recent_state(session.journal, ws.root).status_count == 500


def test_the_tui_session_goes_on_from_the_saved_fold(session: SessionRef, ws: Workspace, clock: FakeClock,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(saved_state, "SAVE_AFTER", 1000)
    _append(session, _statuses(clock.now(), 500))
    recent_state(session.journal, ws.root)
    live = LiveSession(session)
    try:
        live.append([ev.note(clock.now() + 700, "typed in the TUI")])
        live.append(_statuses(clock.now() + 800, 100))
        assert live.state.note_count == 1 and live.state.status_count == 600
    finally:
        live.close()
    assert saved_state.unread_bytes(session.journal, ws.root) == 0  # a day of appends, saved on close


def test_many_lines_decode_at_once_and_garbage_is_still_found_by_line(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    good = [json.dumps(ev.status(100.0 + i, f"s{i}", auto=True)) for i in range(5000)]
    lines = list(good)
    lines[10] = '{"t": 1, "type": "status"}, {"t": 2, "type": "status"}'  # two values on one line
    lines[2500] = "not json"
    lines[3000] = '{"t": 1e400, "type": "status"}'  # would overflow
    lines[4000] = '{"t": 1, "type": "x", "deep": ' + "[" * 40 + "]" * 40 + "}"
    lines[4001] = ""
    lines[4002] = '{"t": 1, "type": "status", "n": ' + "7" * 400 + "}"  # no float holds it
    lines[4003] = '{"t": 1, "type": "status", "n": -' + "7" * 400 + "}"
    lines[4004] = '{"t": 1, "type": "status", "gpu": "GPU-b819e133", "x": 2.5e-7}'  # a UUID, not 9e133
    journal.write_text("\n".join(lines) + "\n")
    read = read_journal(journal)
    assert [p.line for p in read.problems] == [11, 2501, 3001, 4001, 4003, 4004]
    assert len(read.events) == 5000 - 7
    skipped = (10, 2500, 3000, 4000, 4001, 4002, 4003)
    one_by_one = [json.loads(line) for i, line in enumerate(lines) if i not in skipped]
    assert list(read.events) == one_by_one


def test_the_report_of_many_runs_details_the_latest(session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    writer = JournalWriter(session.journal)
    t = clock.now()
    for i in range(DETAILED_RUNS + 30):
        run_id = f"{i + 1:03d}-correctness"
        writer.append(ev.gate_started(t + i, run_id, "correctness", ("x",), "l", 1))
        writer.append(ev.gate_finished(t + i + 0.5, run_id, "correctness", "pass", "ok", 0.5, 0, "l",
                                       {"rows": [{"config": "S=128", "ok": True, "max_abs_err": 0.001}]}))
    writer.close()
    report = build_report(ws, session, t + 999)
    detailed = [g.run_id for g in report.gates if g.tables]
    assert len(report.gates) == DETAILED_RUNS + 30
    assert detailed == [g.run_id for g in report.gates[-DETAILED_RUNS:]]


async def test_the_tui_draws_at_once_and_reads_a_long_journal_in_the_background(
        session: SessionRef, ws: Workspace, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    from cockpit.ui.controllers import session_open
    from tests.test_app import header, make_app

    _append(session, _statuses(clock.now(), 3000))
    monkeypatch.setattr(session_open, "LONG_READ_BYTES", 1000)
    monkeypatch.setattr(saved_state, "SAVE_AFTER", 1000)
    app = make_app(ws, session, clock, status_every_s=10**6)
    async with app.run_test(size=(140, 40)) as pilot:
        assert any("Reading" in t and "journal" in t for t in app.toasts)  # type: ignore[attr-defined]
        assert app.reading is not None
        await asyncio.get_running_loop().run_in_executor(None, app.reading.join)
        await pilot.pause()
        assert app.live is not None and app.live.state.status_count == 3000
        assert "ENVIRONMENT" in header(app)
    # the fold the TUI read is saved: the next opening reads only what came after
    assert saved_state.unread_bytes(session.journal, ws.root) < 1000


def test_the_latest_open_session_is_found_without_reading_the_journal_again(
        session: SessionRef, ws: Workspace, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    from cockpit.session.workspace import latest_open_session

    monkeypatch.setattr(saved_state, "SAVE_AFTER", 1000)
    _append(session, _statuses(clock.now(), 500))
    recent_state(session.journal, ws.root)  # saved: open
    assert (found := latest_open_session(ws)) is not None and found.id == session.id
    _append(session, [ev.session_ended(clock.now() + 600, "done")])  # after the saved offset
    assert latest_open_session(ws) is None
    assert saved_state.saved_end(session.journal, ws.root)[0] is False  # found in the bytes after it
