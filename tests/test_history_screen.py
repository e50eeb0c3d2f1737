"""The History screen and the end-of-session report from the TUI, on the report's fixture
workspace (two real H200 sessions)."""

from __future__ import annotations

import shutil
from pathlib import Path

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session.workspace import Workspace, list_sessions
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.history_screen import HistoryScreen

from .waiting import until

FIXTURE = Path(__file__).parent / "fixtures" / "sessions" / "ws"


def fixture_app(tmp_path: Path) -> tuple[CockpitApp, Workspace]:
    """The cockpit on a copy of the fixture workspace, its latest session open."""
    ws = Workspace(tmp_path / "ws")
    shutil.copytree(FIXTURE, ws.root)
    ref = list_sessions(ws)[-1]
    return CockpitApp(ws, Config(status_every_s=10**6), ref, clock=FakeClock(1_795_400_000.0),
                      tick_s=3600, gpu_every_s=0, typing_gap_s=0), ws


async def test_the_history_screen_lists_every_session_and_the_trend(tmp_path: Path) -> None:
    app, ws = fixture_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("H")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: screen.table is not None, "the History screen's sessions, read")
        await pilot.pause()
        assert [s.id for s in screen.table.sessions] == [r.id for r in list_sessions(ws)]
        grid = screen.query_one("DataTable")
        assert grid.row_count == 2
        comparison = str(screen.query_one("#comparison").render())
        assert "latest vs 20261121-2318-7a3e-build-loop" in comparison and "trend:" in comparison
        await pilot.press("escape")
        assert not isinstance(app.screen, HistoryScreen)


async def test_ending_the_session_writes_its_report_and_says_where(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    shutil.copytree(FIXTURE, ws.root)
    ref = list_sessions(ws)[-1]
    journal_before = ref.journal.read_bytes()
    app = CockpitApp(ws, Config(status_every_s=10**6), ref, clock=FakeClock(1_795_400_000.0),
                     tick_s=3600, gpu_every_s=0, typing_gap_s=0)
    toasts: list[str] = []
    real_notify = app.notify
    app.notify = lambda message, **kw: (toasts.append(message), real_notify(message, **kw))[1]  # type: ignore[method-assign]
    async with app.run_test(size=(160, 48)) as pilot:
        if not app.live.state.is_open:  # the fixture's last session may be ended already
            await pilot.press("R")
        else:
            await pilot.press("E", "y")
        await until(pilot, lambda: any("report written to" in t for t in toasts),
                    "the toast saying where the report went")  # written by a worker
    for name in ("REPORT.md", "report.html", "report.json"):
        assert (ref.path / name).is_file(), name
    assert any("report written to sessions/" in t and "REPORT.md" in t for t in toasts), toasts
    assert ref.journal.read_bytes().startswith(journal_before)  # appended to, never rewritten
