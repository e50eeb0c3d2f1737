"""`cockpit screenshot`: SVGs of the main screens, rendered headless with a fixed clock.

Without `--session` the screens show a demo session scripted through the real core (timer
intents and composed status lines at fixed times), so `screenshots/` is reproducible.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.clock import FakeClock
from cockpit.config import Config, GateConfig, load_config
from cockpit.config.gates import Gates
from cockpit.errors import CockpitError
from cockpit.session import events as ev
from cockpit.session import timer
from cockpit.session.journal import Event
from cockpit.session.live import LiveSession
from cockpit.session.state import SessionState
from cockpit.session.status import Activity, compose_status
from cockpit.session.workspace import (
    SessionRef,
    Workspace,
    create_session,
    load_state,
    resolve_session,
)

if TYPE_CHECKING:
    from cockpit.ui.app import CockpitApp

DEMO_START = 1_795_000_000.0  # a fixed instant, so every render is identical


def parse_size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", text.strip())
    if not m or not (40 <= int(m.group(1)) <= 400 and 12 <= int(m.group(2)) <= 200):
        raise CockpitError(f"--size {text!r}: expected COLSxROWS such as 160x48 (40..400 x 12..200)")
    return int(m.group(1)), int(m.group(2))


def build_demo_session(ws: Workspace, config: Config) -> tuple[SessionRef, float]:
    """An optimize session 42 minutes in: Environment done, Baseline over budget, Profile running."""
    t = DEMO_START
    ref = create_session(ws, config, "Vectorize K loads in the QK^T loop", "optimize", t, tag="d3m0")
    live = LiveSession(ref)

    def at(offset_s: float, make: Callable[[SessionState, float], list[Event]]) -> None:
        live.append(make(live.state, t + offset_s))

    def status(offset_s: float, doing: str | None = None, auto: bool = True) -> None:
        now = t + offset_s
        view = timer.timer_view(live.state, now, config.phase_warn_fraction)
        line = compose_status(live.state, view, Activity(doing) if doing else None)
        live.append([ev.status(now, line, auto)])

    status(150)
    status(300, "nvcc 13.0 vs torch cu130: match; ninja ok", auto=False)
    at(492, timer.advance)
    for offset in (642, 792, 942, 1092, 1242):
        status(offset)
    at(1693, timer.overrun_events)
    status(1500, "SDPA 0.050 ms vs ours 0.500 ms at S=128: 0.10x, CRITICAL", auto=False)
    at(1792, timer.advance)
    status(1942)
    status(2092, "ncu on attn_fwd_kernel, waiting for the report", auto=False)
    status(2242)
    status(2392)
    live.close()
    return ref, t + 2543


# The GPU panel of the screenshots: a real H200 under load (tests/fixtures/telemetry).
DEFAULT_REPLAY = (Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "telemetry"
                  / "loaded-h200.jsonl")
REPLAY_TICKS = 18  # into the recording: the load has ramped up, the card is on its power cap


def screenshot_app(ws: Workspace, config: Config, ref: SessionRef, now: float,
                   replay: Path | None = DEFAULT_REPLAY) -> CockpitApp:
    """The app frozen at `now`: its clock never moves, no status of its own is posted, and the
    GPU panel shows `replay` after REPLAY_TICKS seconds (no NVML is touched)."""
    from cockpit.telemetry.history import History
    from cockpit.telemetry.recording import ReplaySampler, read_recording
    from cockpit.ui.app import CockpitApp

    quiet = dataclasses.replace(config, status_every_s=10**9)
    clock = FakeClock(now - REPLAY_TICKS)
    gpu: tuple[list[Any], History] | None = None
    if replay is not None and replay.exists():
        source, history = ReplaySampler(read_recording(replay), clock), History()
        snapshots = []
        for _ in range(REPLAY_TICKS):
            clock.advance(1)
            snapshots.append(source.tick())
            history.append(snapshots[-1])
        gpu = (snapshots, history)
    clock.set(now)
    return CockpitApp(ws, quiet, ref, clock=clock, tick_s=3600, gpu_every_s=0, initial_gpu=gpu,
                      typing_gap_s=0)  # keys are scripted, one at a time


async def _render(app: CockpitApp, size: tuple[int, int], out: Path) -> list[Path]:
    from cockpit.ui.dialogs import NewSessionDialog

    written = []
    async with app.run_test(size=size) as pilot:
        app.clear_notifications()
        await pilot.pause()
        written.append(_save(app.export_screenshot(title="cockpit"), out / "main.svg"))
        templates = sorted(app.config.templates)
        await app.push_screen(NewSessionDialog(templates, app.config.default_template))
        await pilot.pause()
        written.append(_save(app.export_screenshot(title="cockpit — new session"),
                             out / "new-session.svg"))
    return written


# The recorded sessions (two real H200 sessions, the report's fixture) and the real build log a
# running build replays; without them (an installed wheel) the scripted demo stands in.
RECORDED = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "sessions" / "ws"
BUILD_LOG = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "gpu" / "build" / "clean.log"


def mid_session(ws: Workspace, session_id: str, before: str | None = None) -> tuple[SessionRef, float]:
    """A copy of a recorded session as it stood while its last phase ran (or before the first
    event of type `before`): the journal is cut there, so the screen shows a running session."""
    source = RECORDED / "sessions" / session_id
    ref = SessionRef(session_id, None, ws.sessions_dir / session_id)
    shutil.copytree(source, ref.path)
    lines = ref.journal.read_text(encoding="utf-8").splitlines(keepends=True)
    types = [json.loads(line).get("type") for line in lines]
    if before is not None:
        cut = types.index(before)
    else:  # the session as it stood while its last phase ran
        cut = max(i for i, kind in enumerate(types) if kind == "phase_ended")
    kept = lines[:cut]
    ref.journal.write_text("".join(kept), encoding="utf-8")
    now = load_state(ref).last_event_t + 90
    return ref, now


async def _select_gate(app: CockpitApp, pilot: Any, gate: str) -> None:
    app.set_focus(app.gate_panel)
    while app.gate_panel.selected != gate:
        await pilot.press("down")
    await pilot.pause()


async def _shoot(app: CockpitApp, size: tuple[int, int], out: Path, name: str, title: str,
                 keys: tuple[str, ...] = (), gate: str | None = None) -> Path:
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        if gate is not None:
            await _select_gate(app, pilot, gate)
        if keys:
            await pilot.press(*keys)
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.clear_notifications()
        await pilot.pause()
        return _save(app.export_screenshot(title=title), out / name)


async def _shoot_running_build(app: CockpitApp, size: tuple[int, int], out: Path) -> Path:
    """The build gate replaying the first half of a real H200 build log, caught mid-build."""
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await _select_gate(app, pilot, "build")
        await pilot.press("r")
        for _ in range(100):  # the replay's lines arrive in the gate's 50 ms batches
            await pilot.pause(0.05)
            if any("[2/3]" in line for line in app.gate_detail.output_log.lines):
                break
        await pilot.pause(0.3)
        app.clear_notifications()
        await pilot.pause()
        path = _save(app.export_screenshot(title="cockpit — a build running"), out / "build-running.svg")
        app.gates.cancel()
        await app.gates.stop_for_quit()
        return path


async def _render_recorded(tmp: Path, size: tuple[int, int], out: Path) -> list[Path]:
    import sys

    sessions = sorted(p.name for p in (RECORDED / "sessions").iterdir() if p.is_dir())
    loop, bench_profile = sessions[0], sessions[-1]
    shots: list[Path] = []

    def app_for(folder: str, session_id: str, before: str | None = None,
                config: Config | None = None) -> CockpitApp:
        ws = Workspace(tmp / folder)
        ws.sessions_dir.mkdir(parents=True)
        shutil.copytree(RECORDED / "patterns", ws.patterns_dir)
        ref, now = mid_session(ws, session_id, before)
        return screenshot_app(ws, config or Config(), ref, now)

    shots.append(await _shoot(app_for("main", loop), size, out, "main.svg", "cockpit"))
    shots.append(await _shoot(app_for("bench", loop), size, out, "bench.svg",
                              "cockpit — benchmark and its validity", gate="bench"))
    shots.append(await _shoot(app_for("profile", bench_profile), size, out, "profile.svg",
                              "cockpit — the profile verdict", gate="profile"))
    shots.append(await _shoot(app_for("editor", loop), size, out, "editor.svg", "cockpit — the editor",
                              keys=("tab", *"- BN=64 keeps 2 blocks/SM; next: profile D=64")))
    shots.append(await _shoot(app_for("patterns", loop), size, out, "patterns.svg",
                              "cockpit — the pattern library", keys=("o", *"smem")))
    shots.append(await _shoot(app_for("main-80x24", loop), (80, 24), out, "main-80x24.svg",
                              "cockpit in an 80x24 pane"))
    replay = tmp / "replay_recorded_build.py"  # the real H200 log up to its step [2/3], then waits
    replay.write_text("import sys, time\n"
                      "print(*open(sys.argv[1]).read().splitlines()[2:46], sep='\\n', flush=True)\n"
                      "time.sleep(60)\n", encoding="utf-8")
    replayed = GateConfig(command=(sys.executable, str(replay), str(BUILD_LOG)))
    building = dataclasses.replace(Config(), gates=Gates({"build": replayed}))
    shots.append(await _shoot_running_build(app_for("build", loop, "gate_started", building), size, out))
    history_ws = Workspace(tmp / "history")
    shutil.copytree(RECORDED, history_ws.root)
    last = resolve_session(history_ws, sessions[-1])
    assert last is not None
    hist_app = screenshot_app(history_ws, Config(), last, load_state(last).last_event_t + 90)
    shots.append(await _shoot(hist_app, size, out, "history.svg", "cockpit — history", keys=("H",)))
    return shots


async def _render_dialog(app: CockpitApp, size: tuple[int, int], out: Path) -> Path:
    from cockpit.ui.dialogs import NewSessionDialog

    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await app.push_screen(NewSessionDialog(sorted(app.config.templates), app.config.default_template))
        await pilot.pause()
        return _save(app.export_screenshot(title="cockpit — new session"), out / "new-session.svg")


def _save(svg: str, path: Path) -> Path:
    path.write_text(svg, encoding="utf-8")
    return path


def take_screenshots(out: Path, size: tuple[int, int], workspace: Workspace | None = None,
                     session: str | None = None) -> list[Path]:
    """Render the main screens to `out/*.svg`; the demo session unless `session` is given."""
    os.environ["TZ"] = "UTC"  # clock times on screen must not depend on the machine
    time.tzset()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CockpitError(f"{out}: cannot create the screenshot folder ({exc.strerror})") from exc
    with tempfile.TemporaryDirectory(prefix="cockpit-shot-") as tmp:
        ws = Workspace(Path(tmp))
        if (session is None or workspace is None) and RECORDED.is_dir():
            shots = asyncio.run(_render_recorded(Path(tmp), size, out))
            ref, now = build_demo_session(ws, Config())
            dialog = asyncio.run(_render_dialog(screenshot_app(ws, Config(), ref, now), size, out))
            return [*shots, dialog]
        if session is None or workspace is None:
            config = Config()
            ref, now = build_demo_session(ws, config)
        else:
            # Render a copy: opening the cockpit journals app_opened/app_closed.
            original = resolve_session(workspace, session)
            if original is None:
                raise CockpitError("no open session to screenshot; pass --session ID")
            config = load_config(workspace.root)
            ref = SessionRef(original.id, original.number, ws.sessions_dir / original.id)
            shutil.copytree(original.path, ref.path)
            now = load_state(ref).last_event_t
        return asyncio.run(_render(screenshot_app(ws, config, ref, now), size, out))
