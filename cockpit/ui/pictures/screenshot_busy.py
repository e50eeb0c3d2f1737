"""The main screen mid-work, for `screenshots/` and the snapshot tests: the recorded H200 session
after its bench (the env gate's result and the bench's in the gate list, the bench's result and
headline in the pane) while a rebuild runs, replaying the recorded H200 build log up to its step
[2/3]. At 80x24, 120x40 and 160x48: what an engineer sees in a tmux pane, a laptop and a monitor.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.config import Config, GateConfig
from cockpit.config.gates import Gates
from cockpit.session.workspace import Workspace
from cockpit.ui.pictures.frozen_cockpit import (
    BUILD_LOG,
    DEFAULT_REPLAY,
    RECORDED,
    mid_session,
    screenshot_app,
)

if TYPE_CHECKING:
    from cockpit.ui.app import CockpitApp

BUSY_SIZES = ((80, 24), (120, 40), (160, 48))
BUSY_TITLE = "cockpit — a bench result, the env result and a build running"


def replayed_build(tmp: Path) -> Config:
    """A config whose build gate replays the real H200 build log up to its step [2/3], then waits."""
    script = tmp / "replay_recorded_build.py"
    script.write_text("import sys, time\n"
                      "print(*open(sys.argv[1]).read().splitlines()[2:46], sep='\\n', flush=True)\n"
                      "time.sleep(60)\n", encoding="utf-8")
    replayed = GateConfig(command=(sys.executable, str(script), str(BUILD_LOG)))
    return dataclasses.replace(Config(), gates=Gates({"build": replayed}))


def busy_app(tmp: Path, replay: Path | None = DEFAULT_REPLAY) -> CockpitApp:
    """The recorded build-loop session as it stood after its bench (env, build, correctness and
    bench finished), its build gate set to replay the recorded build."""
    loop = sorted(p.name for p in (RECORDED / "sessions").iterdir() if p.is_dir())[0]
    ws = Workspace(tmp / "busy")
    ws.sessions_dir.mkdir(parents=True)
    shutil.copytree(RECORDED / "patterns", ws.patterns_dir)
    ref, now = mid_session(ws, loop)
    return screenshot_app(ws, replayed_build(tmp), ref, now, replay)


async def start_build_show_bench(pilot: Any) -> None:
    """r on the build, its replayed log read up to [2/3], then the bench selected: its result in
    the pane, the build running in the list."""
    app: CockpitApp = pilot.app
    await pilot.pause()
    app.set_focus(app.gate_panel)
    await pilot.press("down")  # env -> build
    await pilot.press("r")
    for _ in range(200):  # the runner looks at the child's log 5 times a second
        run = app.gates.run
        if run is not None and any("[2/3]" in line for line in app.gate_detail.output_log.lines):
            break
        await pilot.pause(0.05)
    app.redraw()  # the clock's next frame: the gate list shows the build's [2/3] (its clock is frozen)
    await pilot.press("down", "down")  # build -> correctness -> bench
    await pilot.pause()
    app.clear_notifications()
    await pilot.pause()


def stop_build(app: CockpitApp) -> None:
    """The replayed build's child stopped (it waits a minute otherwise)."""
    run = app.gates.run
    if run is not None:
        run.cancel()
        run.wait(5.0)


async def shoot_busy(tmp: Path, out: Path, replay: Path) -> list[Path]:
    """screenshots/main-80x24.svg, main-120x40.svg and main-160x48.svg."""
    shots = []
    for cols, rows in BUSY_SIZES:
        folder = tmp / f"busy-{cols}x{rows}"
        folder.mkdir()
        app = busy_app(folder, replay)
        async with app.run_test(size=(cols, rows)) as pilot:
            try:
                await start_build_show_bench(pilot)
                path = out / f"main-{cols}x{rows}.svg"
                path.write_text(app.export_screenshot(title=BUSY_TITLE), encoding="utf-8")
                shots.append(path)
            finally:
                await asyncio.to_thread(stop_build, app)
    return shots
