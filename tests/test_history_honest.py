"""History is honest for no data and short sessions (issue 36): a duration under 10 minutes is
shown to the second ("1:40 min", within `cockpit history`'s column) and its change computed on what is shown ("2 min (was 2 min) +44 %" never
again); a trend line is drawn only from two measured sessions, never a full bar for one value or
a floor for none."""

from __future__ import annotations

import shutil
from pathlib import Path

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.report.trend import duration_change, minutes
from cockpit.session.workspace import SessionRef, Workspace, list_sessions
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.history_screen import HistoryScreen

from .waiting import until

FIXTURE = Path(__file__).parent / "fixtures" / "sessions" / "ws"


def test_short_durations_are_shown_to_the_second_and_compared_as_shown() -> None:
    assert [minutes(s) for s in (None, 0, 40, 100, 120, 173, 599.4, 599.6, 725, 10800)] == [
        "—", "0 s", "40 s", "1:40 min", "2:00 min", "2:53 min", "9:59 min", "10 min", "12 min", "180 min"]
    assert duration_change(173, 120) == "+44% (worse)"  # "2:53 min (was 2:00 min)"
    assert duration_change(120.3, 119.8) == "same"  # both "2 min"
    assert duration_change(745, 730) == "same"  # both "12 min"
    assert duration_change(None, 730) == "—"


async def open_history(app: CockpitApp) -> HistoryScreen:
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("H")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: screen.table is not None, "the History screen's sessions, read")
        await pilot.pause()
        screen.notes = {  # type: ignore[attr-defined]
            name: (screen.query_one(f"#{name}").display, str(screen.query_one(f"#{name}-note").render()),
                   screen.query_one(f"#{name}-note").display, list(screen.query_one(f"#{name}").data or []))
            for name in ("durations", "speedups")}
        return screen


async def test_one_session_without_a_bench_draws_no_bar_and_says_why(ws: Workspace, session: SessionRef) -> None:
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=FakeClock(), tick_s=3600,
                     gpu_every_s=0, typing_gap_s=0)
    notes = (await open_history(app)).notes  # type: ignore[attr-defined]
    drawn, note, shown, _ = notes["durations"]
    assert not drawn and shown and "in one session: the line starts with the next one" in note
    drawn, note, shown, _ = notes["speedups"]
    assert not drawn and shown and note == "no valid bench in these sessions yet"


async def test_two_measured_sessions_draw_their_lines(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    shutil.copytree(FIXTURE, ws.root)
    app = CockpitApp(ws, Config(status_every_s=10**6), list_sessions(ws)[-1], clock=FakeClock(1_795_400_000.0),
                     tick_s=3600, gpu_every_s=0, typing_gap_s=0)
    screen = await open_history(app)
    drawn, _, shown, data = screen.notes["durations"]  # type: ignore[attr-defined]
    assert drawn and not shown and len(data) == 2
