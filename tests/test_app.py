"""The TUI, driven with Pilot: keys move the timer, statuses are posted on cadence and by hand,
and whatever happens lands in the journal first."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace, list_sessions
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.commands import COMMANDS
from cockpit.ui.screens.dialogs import NewSessionDialog
from cockpit.ui.shims import hangup

from .waiting import until

SIZE = (140, 40)


def journal(ref: SessionRef) -> list[dict]:
    return [json.loads(line) for line in ref.journal.read_text().splitlines()]


def make_app(ws: Workspace, ref: SessionRef | None, clock: FakeClock, **config) -> CockpitApp:
    app = CockpitApp(ws, Config(**config), ref, clock=clock, tick_s=3600, typing_gap_s=0)
    app.toasts: list[str] = []  # type: ignore[misc]
    real_notify = app.notify

    def notify(message: str, **kwargs) -> None:  # type: ignore[no-untyped-def]
        app.toasts.append(message)  # type: ignore[attr-defined]
        real_notify(message, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    return app


def phase_line(app: CockpitApp, phase: str) -> str:
    return next(line for line in app.phase_panel.plain.splitlines() if f" {phase} " in line)


def header(app: CockpitApp) -> str:
    from cockpit.ui.widgets.header import SessionHeader

    return app.query_one(SessionHeader).text.plain


async def test_keys_advance_skip_and_pause_the_phase_timer(ws, session, clock) -> None:
    app = make_app(ws, session, clock, status_every_s=10**6)
    async with app.run_test(size=SIZE) as pilot:
        assert "ENVIRONMENT 0/10 min · 10 min left" in header(app)
        assert "Environment" in phase_line(app, "Environment") and "0:00/10:00" in phase_line(app, "Environment")
        clock.advance(125)
        await pilot.press("n", "y")
        assert "BASELINE 0/20 min · 20 min left" in header(app)
        clock.advance(60)
        await pilot.press("p")
        clock.advance(600)
        app.tick()
        await pilot.pause()
        assert "BASELINE 1/20 min PAUSED · 19 min left" in header(app)
        assert "Baseline" in phase_line(app, "Baseline") and "1:00/20:00" in phase_line(app, "Baseline")  # the pause stopped it
        await pilot.press("p")
        await pilot.press("K", "y")
        assert "PROFILE 0/30 min · 30 min left" in header(app)
    # what the GPUs did in a phase (gpu_summary) is journaled only where NVML sees one
    types = [e["type"] for e in journal(session) if e["type"] != "gpu_summary"]
    assert types == ["session_started", "phase_started", "app_opened", "phase_ended",
                     "phase_started", "timer_paused", "timer_resumed", "phase_ended",
                     "phase_started", "app_closed"]
    ended = [e for e in journal(session) if e["type"] == "phase_ended"]
    assert [(e["phase"], e["outcome"], e["elapsed_s"]) for e in ended] == [
        ("Environment", "done", 125.0), ("Baseline", "skipped", 60.0)]


async def test_a_status_is_posted_every_cadence_period(ws, session, clock) -> None:
    app = make_app(ws, session, clock, status_every_s=2)
    async with app.run_test(size=SIZE) as pilot:
        clock.advance(1.9)
        app.tick()
        assert [e for e in journal(session) if e["type"] == "status"] == []
        clock.advance(0.1)
        app.tick()
        clock.advance(2)
        app.tick()
        await pilot.pause()
        statuses = [e for e in journal(session) if e["type"] == "status"]
        assert [(s["text"], s["auto"]) for s in statuses] == [
            ("0:02 elapsed · ENVIRONMENT 0:02/10:00 · 9:58 left in phase", True),
            ("0:04 elapsed · ENVIRONMENT 0:04/10:00 · 9:56 left in phase", True)]
        assert session.status_txt.read_text() == statuses[-1]["text"] + "\n"
        assert statuses[-1]["text"] in app.toasts
        from cockpit.ui.widgets.status_history import StatusHistory

        assert app.query_one(StatusHistory).border_subtitle == "2 posted"


async def test_a_manual_status_says_what_the_engineer_is_doing(ws, session, clock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        clock.advance(135)
        await pilot.press("s")
        await pilot.press(*"ncu on [red]flash_fwd")
        await pilot.press("enter")
        await pilot.pause()
    status = [e for e in journal(session) if e["type"] == "status"][-1]
    assert status["auto"] is False
    assert status["text"] == ("2:15 elapsed · ENVIRONMENT 2:15/10:00 · now: ncu on [red]flash_fwd")
    assert session.status_txt.read_text().startswith("2:15 elapsed")


async def test_escape_cancels_a_manual_status(ws, session, clock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s", "x", "escape")
    assert [e for e in journal(session) if e["type"] == "status"] == []


async def test_an_overrun_is_journaled_and_shown_once(ws, session, clock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        clock.advance(601)
        app.tick()
        app.tick()
        await pilot.pause()
        assert "Environment is over its budget — wrap up, or move on with n." in app.toasts
    overruns = [e for e in journal(session) if e["type"] == "phase_over_budget"]
    assert [(e["phase"], e["budget_s"]) for e in overruns] == [("Environment", 600.0)]


async def test_go_to_phase_and_end_session(ws, session, clock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await pilot.press("down", "enter")  # the current phase is disabled: Baseline, then Profile
        assert "PROFILE" in header(app)
        await pilot.press("E", "y")
        await pilot.pause()
        assert "ENDED" in header(app)
        assert not app.live.state.is_open
    kinds = [e["type"] for e in journal(session) if e["type"] != "gpu_summary"]  # only with a GPU
    assert kinds[-2] == "session_ended"


async def test_reopening_after_a_crash_shows_the_same_state(ws, session, clock) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    writer = JournalWriter(session.journal)
    for event in (ev.app_opened(clock.now(), dead.pid), ev.phase_ended(clock.now() + 300,
                  "Environment", "done", 300, 600), ev.phase_started(clock.now() + 300, "Baseline"),
                  ev.status(clock.now() + 310, "before the crash", auto=False)):
        writer.append(event)
    writer.close()
    with session.journal.open("ab") as f:
        f.write(b'{"t": 1795000320, "type": "sta')  # killed mid-write
    clock.advance(400)
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "BASELINE 1/20 min · 19 min left" in header(app)
        assert "Baseline" in phase_line(app, "Baseline") and "1:40/20:00" in phase_line(app, "Baseline")
        assert any(f"pid {dead.pid}) did not close cleanly" in t for t in app.toasts)
        assert any("torn last line" in t for t in app.toasts)
        assert app.live.state.statuses[-1].text == "before the crash"


async def test_without_a_session_the_cockpit_offers_to_create_one(ws, clock) -> None:
    app = make_app(ws, None, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, NewSessionDialog)
        await pilot.press(*"tile the softmax", "enter")
        await pilot.pause()
        assert "tile the softmax" in header(app)
    [ref] = list_sessions(ws)
    assert ref.id.endswith("-tile-the-softmax") and ref.id.startswith("20261118-")


async def test_cancelling_the_first_session_dialog_leaves_the_cockpit_up_for_browsing(ws, clock) -> None:
    app = make_app(ws, None, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.live is None
        assert app.toasts[-1].startswith("No session open: H shows every session")  # type: ignore[attr-defined]
        await pilot.press("H")
        assert type(app.screen).__name__ == "HistoryScreen"
        await pilot.press("escape")
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, NewSessionDialog)
        await pilot.press("escape")
        await pilot.press("q", "y")
        await pilot.pause()
    assert list_sessions(ws) == []


async def test_a_session_in_the_cockpits_own_repository_is_asked_about_first(clock, monkeypatch) -> None:
    from cockpit.ui.controllers import session_actions
    from cockpit.ui.screens.dialogs import ConfirmDialog

    monkeypatch.setattr(session_actions, "shipped_with_the_cockpit", lambda root: "repository")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp))
        app = make_app(ws, None, clock)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDialog)
            assert "the cockpit's own repository" in str(app.screen.query_one("Label").render())
            await pilot.press("y")
            assert isinstance(app.screen, NewSessionDialog)


def test_the_cockpits_own_checkout_is_known_and_a_kernel_repository_is_not(tmp_path) -> None:
    import cockpit
    from cockpit.session.workspace import shipped_with_the_cockpit

    checkout = Path(cockpit.__file__).resolve().parents[1]
    assert shipped_with_the_cockpit(checkout) == "repository"
    assert shipped_with_the_cockpit(checkout / "examples") == "examples"
    assert shipped_with_the_cockpit(tmp_path) is None


async def test_the_command_palette_lists_and_runs_every_action(ws, session, clock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        titles = " ".join(c.title for c in app.get_system_commands(app.screen))
        for command in COMMANDS:
            assert command.title in titles
        await pilot.press("ctrl+p")
        await pilot.press(*"Skip phase")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("y")  # skipping a phase asks first, from the palette too
        assert "BASELINE" in header(app)


async def test_the_palette_finds_a_pattern_by_title_and_reads_the_library_only_then(
        ws, session, clock) -> None:
    import shutil
    from pathlib import Path

    from textual.command import CommandList

    shutil.copytree(Path(__file__).parent.parent / "patterns", ws.patterns_dir)
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        assert app.pattern_desk._patterns is None  # an idle cockpit has not read it
        assert "patterns 0/14" in header(app)  # the header counts the files
        await pilot.press("ctrl+p")
        await pilot.press(*"decision tree")

        def found() -> list[str]:  # the palette searches in a worker, as the keys come
            return [str(o.prompt) for o in app.screen.query_one(CommandList).options]

        await until(pilot, lambda: any(f.startswith("Pattern 10: Let the profiling decision tree")
                                       for f in found()), "pattern 10 among the palette's finds")
        assert len(app.pattern_desk.patterns) == 14


async def test_sigterm_journals_the_close_and_exits(ws, session, clock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        hangup.on_signal(signal.SIGTERM, asyncio.get_running_loop(), app.close_for_signal,
                         lambda: app.exit(0))
        await pilot.pause()
    closes = [e for e in journal(session) if e["type"] == "app_closed"]
    assert [c["reason"] for c in closes] == ["SIGTERM"]
    # SIGHUP (an SSH drop) is exercised for real in tests/test_tmux.py.


async def test_a_first_run_is_one_enter_away_from_a_session(ws, clock) -> None:
    app = make_app(ws, None, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        # pre-filled about the workspace's own kernel (none named here), never the shipped example
        assert app.live is not None and app.live.state.objective == (
            "Measure my kernel against its baseline and find its bottleneck")
    assert len(list_sessions(ws)) == 1


async def test_an_ended_session_opens_for_reading_without_a_journal_write(ws, session, clock) -> None:
    writer = JournalWriter(session.journal)
    writer.append(ev.session_ended(clock.now() + 60, "done"))
    writer.close()
    before = session.journal.read_bytes()
    clock.advance(3600)
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "ENDED" in header(app) and app.sub_title.endswith("(ended: read only)")
        app.tick()
        await pilot.pause()
    assert session.journal.read_bytes() == before  # no app_opened, no app_closed, no status
    assert not (session.path / "telemetry.jsonl").exists()


async def test_an_ended_session_offers_reading_only_and_says_so(ws, session, clock) -> None:
    """r, n, s and the rest would change a session that has ended: they are off the key bar and do
    nothing but say why; history, patterns, the report and a new session stay; quit asks nothing
    (nothing is left open)."""
    writer = JournalWriter(session.journal)
    writer.append(ev.session_ended(clock.now() + 60, "done"))
    writer.close()
    before = session.journal.read_bytes()
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        for key in ("r", "n", "s", "E", "K", "p"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is app.main_screen and app.gates.run is None, key
        assert app.toasts.count("This session has ended: it is read-only (H history, o patterns, R its "
                                "report). ctrl+n starts a new one.") == 6
        enabled = {b.action: on for _, b, on, _ in app.screen.active_bindings.values()}
        assert "app.run_gate" not in enabled and "app.next_phase" not in enabled
        assert enabled["app.open_patterns"] and enabled["app.export_report"] and enabled["app.new_session"]
        await pilot.press("H")
        assert type(app.screen).__name__ == "HistoryScreen"
        await pilot.press("escape")
        await pilot.press("q")
        await pilot.pause()
    assert session.journal.read_bytes() == before
