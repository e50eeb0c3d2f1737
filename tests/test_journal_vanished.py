"""The journal deleted under a running cockpit: noticed at the next tick (or the next append),
written again from the cockpit's state with a warning, and nothing typed afterwards is lost."""

from __future__ import annotations

import json

from cockpit.clock import FakeClock
from cockpit.session import events as ev
from cockpit.session.journal import read_journal
from cockpit.session.live import LiveSession
from cockpit.session.state import fold
from cockpit.session.workspace import SessionRef, Workspace
from tests.test_app import make_app


def _types(ref: SessionRef) -> list[str]:
    return [json.loads(line)["type"] for line in ref.journal.read_text().splitlines()]


def test_an_append_after_the_journal_was_deleted_lands_in_a_journal_written_again(
        session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    live = LiveSession(session)
    try:
        live.append([ev.phase_started(clock.now() + 60, "Baseline"), ev.status(clock.now() + 70, "timed it", False),
                     ev.gate_started(clock.now() + 80, "001-env", "env", ("x",), "sessions/x/logs/001-env.log", 7),
                     ev.gate_finished(clock.now() + 90, "001-env", "env", "pass", "ok", 10, 0,
                                      "sessions/x/logs/001-env.log", {"checks": []})])
        before = live.state
        session.journal.unlink()
        assert live.vanished()
        live.append([ev.note(clock.now() + 100, "typed after the delete")])
        told = live.heal(clock.now() + 101)
        assert told is not None and "was deleted" in told
        assert live.heal(clock.now() + 102) is None  # said once
    finally:
        live.close()
    again = fold(read_journal(session.journal).events, ws.root)
    assert [r.phase for r in again.runs] == [r.phase for r in before.runs] == ["Environment", "Baseline"]
    assert [s.text for s in again.statuses] == ["timed it"]
    assert again.gate_runs[0].summary == "ok" and again.gate_runs[0].status == "pass"
    assert [n.text for n in again.notes][-2:][0].startswith("journal.jsonl was deleted")
    assert again.notes[-1].text == "typed after the delete"
    assert again.id == before.id and again.objective == before.objective


async def test_the_tui_notices_a_deleted_journal_within_a_tick_and_warns(
        session: SessionRef, ws: Workspace, clock: FakeClock) -> None:
    app = make_app(ws, session, clock, status_every_s=10**6)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("s", *"profiled flash_fwd", "enter")  # a status, journaled
        await pilot.pause()
        session.journal.unlink()
        app.tick()
        await pilot.pause()
        assert any("was deleted" in t for t in app.toasts)  # type: ignore[attr-defined]
        assert session.journal.exists()
        types = _types(session)
        assert types[0] == "session_started" and "status" in types and types[-1] == "note"
        assert "profiled flash_fwd" in session.journal.read_text()
    # quitting appends app_closed to the journal written again, not to the deleted one
    assert _types(session)[-1] == "app_closed"
