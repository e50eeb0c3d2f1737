"""The phase panel: each phase's time against its budget with one format on both sides (a budget
in hours puts hours on the time spent too), and in a window under 30 rows (an 80x24 pane) the panel
is its border alone, the phase at hand on top and the total below, so the status history under the
gates keeps room for its newest line."""

from __future__ import annotations

import re
import time

from cockpit.clock import FakeClock
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.widgets.phases import PhasePanel
from tests.screen_rows import screen_rows
from tests.test_app import SIZE, make_app, phase_line


async def test_a_budget_in_hours_puts_hours_on_both_sides_of_the_time(
        ws: Workspace, session: SessionRef, clock: FakeClock) -> None:
    app = make_app(ws, session, clock, status_every_s=10**6)
    async with app.run_test(size=SIZE) as pilot:
        clock.advance(196)
        app.tick()
        await pilot.pause()
        total = phase_line(app, "Total")
        assert total.rstrip().endswith(" 0:03:16/3:10:00")  # "3:16/3:10:00" read as nearly three hours of it spent
        assert "0:00:00/1:30:00" in phase_line(app, "Fix")
        assert "3:16/10:00" in phase_line(app, "Environment") and "0:03:16/10:00" not in phase_line(app, "Environment")
        # the times right-aligned in one column
        ends = {m.end() for line in app.phase_panel.plain.splitlines() if (m := re.search(r"\d/[\d:]+", line))}
        assert len(ends) == 1


async def wait_for(pilot, done, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 30
    while not done():
        assert time.monotonic() < deadline, what
        await pilot.pause(0.05)


async def test_in_a_short_window_the_panel_is_its_border_with_the_phase_at_hand_and_the_total(
        ws: Workspace, session: SessionRef, clock: FakeClock) -> None:
    app = make_app(ws, session, clock, status_every_s=10**6)
    async with app.run_test(size=(80, 24)) as pilot:
        clock.advance(125)
        app.tick()
        panel = app.query_one(PhasePanel)
        await wait_for(pilot, lambda: panel.region.height == 2, "the panel is two rows high")
        await wait_for(pilot, lambda: any("Total 0:02:05/3:10:00" in r for r in screen_rows(app)), "the total")
        rows = screen_rows(app)
        assert any("╭─ ▶ Environment 2:05/10:00 ─" in row for row in rows), "\n".join(rows)
        assert panel.plain == ""
        await pilot.resize_terminal(120, 40)  # a taller window: every phase again
        await wait_for(pilot, lambda: len(panel.plain.splitlines()) == 7, "every phase and the total")
        assert panel.border_title == "Phases"
        assert phase_line(app, "Total").rstrip().endswith(" 0:02:05/3:10:00")
