"""An edit to cockpit.toml applies to the next gate run in a running TUI (issue 36): that run and
the app from then on use it, with one line saying so (a new command is shown and asked about
first: workspace trust); an edit that no longer loads is one line and the run keeps the config it
had."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from cockpit.clock import FakeClock
from cockpit.config import load_config
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.dialogs import TrustDialog
from tests.trusted import trust


def env_printing(word: str) -> str:
    return (f"[cadence]\nstatus_every_s = 1000000\n[gates.env]\n"
            f"command = [{json.dumps(sys.executable)}, \"-c\", \"print('{word}')\"]\n")


async def run_env(app: CockpitApp, pilot: object, asked: bool = False) -> str:
    await pilot.press("r")  # type: ignore[attr-defined]
    if asked:  # a command the user has not trusted yet: listed, and y runs it
        for _ in range(3000):
            if isinstance(app.screen, TrustDialog):
                break
            await pilot.pause(0.01)  # type: ignore[attr-defined]
        assert isinstance(app.screen, TrustDialog)
        await pilot.press("y")  # type: ignore[attr-defined]
    run = app.gates.run
    if run is not None:
        assert await asyncio.to_thread(run.wait, 60)
    await pilot.pause()  # type: ignore[attr-defined]
    record = app.live.state.last_run("env") if app.live else None
    assert record is not None and record.log
    return (app.workspace.root / record.log).read_text()


def toasts(app: CockpitApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_an_edited_cockpit_toml_applies_to_the_next_gate_run(ws: Workspace, session: SessionRef) -> None:
    toml = ws.root / "cockpit.toml"
    toml.write_text(env_printing("first"))
    trust(ws.root)
    app = CockpitApp(ws, load_config(ws.root), session, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=(150, 44), notifications=True) as pilot:
        assert "first" in await run_env(app, pilot)
        assert not any("cockpit.toml" in t for t in toasts(app))  # unchanged: nothing said

        toml.write_text(env_printing("second"))
        os.utime(toml, ns=(toml.stat().st_mtime_ns + 10**9,) * 2)  # a coarse clock still sees it
        assert "second" in await run_env(app, pilot, asked=True)
        assert "cockpit.toml changed: this env run uses it." in toasts(app)
        assert app.config.gate("env").command is not None and "print('second')" in app.config.gate("env").command

        toml.write_text(env_printing("third") + "[gates.env\n")  # no longer loads
        os.utime(toml, ns=(toml.stat().st_mtime_ns + 2 * 10**9,) * 2)
        log = await run_env(app, pilot)
        assert "second" in log and "third" not in log  # the config it had
        broken = [t for t in toasts(app) if "runs with the config loaded before" in t]
        assert len(broken) == 1 and "\n" not in broken[0] and "cockpit.toml" in broken[0]
