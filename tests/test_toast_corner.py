"""Toasts stay off the gate pane (issue 36): a gate's result and the toast that says it arrive
together, and the toast no longer covers the result; it sits in the top right, under the header."""

from __future__ import annotations

import pytest

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48)])
async def test_a_toast_never_covers_the_gate_pane(ws: Workspace, session: SessionRef, size: tuple[int, int]) -> None:
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=FakeClock(), tick_s=3600,
                     gpu_every_s=0, typing_gap_s=0)
    async with app.run_test(size=size, notifications=True) as pilot:
        app.notify("0:12 elapsed · ENVIRONMENT 0:12/10:00 · now: env", title="Status", timeout=30)
        app.notify("env queued after build.", timeout=30)
        app.notify("env: pass — all 16 checks passed", timeout=30)
        await pilot.pause()
        toasts = [t.region for t in app.screen.query("Toast")]
        pane = app.gate_detail.region
        assert len(toasts) == 3 and pane.area
        for toast in toasts:
            assert toast.area and not toast.overlaps(pane), (toast, pane)
            assert toast.y >= 1 and toast.right >= size[0] - 2  # under the header, at the right edge (the rack's gutter)
