"""`cockpit screenshot`: SVGs of the main screens, rendered headless with a fixed clock.

In a workspace the screens show its latest session (or `--session ID`) as it stood at its last
event. Looking is read-only: the cockpit opens a copy of the session folder, for reading, so the
session gets no journal event, no telemetry track and no status.txt, and no process of its is
stopped. `--demo` shows sessions recorded on a lent H200 and one scripted through the real core
(timer intents and composed status lines at fixed times), so `screenshots/` is reproducible.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.config import Config, load_config
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
    list_sessions,
    load_state,
    resolve_session,
)
from cockpit.ui.pictures.frozen_cockpit import DEFAULT_REPLAY as DEFAULT_REPLAY
from cockpit.ui.pictures.frozen_cockpit import RECORDED, mid_session
from cockpit.ui.pictures.frozen_cockpit import screenshot_app as screenshot_app

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


async def _render(app: CockpitApp, size: tuple[int, int], out: Path) -> list[Path]:
    from cockpit.ui.screens.dialogs import NewSessionDialog

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
        for _ in range(100):  # the replay's lines arrive as the runner looks at its log (5 times a second)
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


async def _render_recorded(tmp: Path, size: tuple[int, int], out: Path, replay: Path) -> list[Path]:
    sessions = sorted(p.name for p in (RECORDED / "sessions").iterdir() if p.is_dir())
    loop, bench_profile = sessions[0], sessions[-1]
    shots: list[Path] = []

    def app_for(folder: str, session_id: str, before: str | None = None,
                config: Config | None = None) -> CockpitApp:
        ws = Workspace(tmp / folder)
        ws.sessions_dir.mkdir(parents=True)
        shutil.copytree(RECORDED / "patterns", ws.patterns_dir)
        ref, now = mid_session(ws, session_id, before)
        return screenshot_app(ws, config or Config(), ref, now, replay)

    shots.append(await _shoot(app_for("main", loop), size, out, "main.svg", "cockpit"))
    shots.append(await _shoot(app_for("bench", loop), size, out, "bench.svg",
                              "cockpit — benchmark and its validity", gate="bench"))
    shots.append(await _shoot(app_for("profile", bench_profile), size, out, "profile.svg",
                              "cockpit — the profile verdict", gate="profile"))
    shots.append(await _shoot(app_for("editor", loop), size, out, "editor.svg", "cockpit — the editor",
                              keys=("tab", *"- BN=64 keeps 2 blocks/SM; next: profile D=64")))
    shots.append(await _shoot(app_for("patterns", loop), size, out, "patterns.svg",
                              "cockpit — the pattern library", keys=("o", *"smem")))
    from cockpit.ui.pictures.screenshot_busy import replayed_build, shoot_busy

    shots += await shoot_busy(tmp, out, replay)  # main-80x24.svg, main-120x40.svg, main-160x48.svg
    building = replayed_build(tmp)
    shots.append(await _shoot_running_build(app_for("build", loop, "gate_started", building), size, out))
    history_ws = Workspace(tmp / "history")
    shutil.copytree(RECORDED, history_ws.root)
    last = resolve_session(history_ws, sessions[-1])
    assert last is not None
    hist_app = screenshot_app(history_ws, Config(), last, load_state(last).last_event_t + 90, replay)
    shots.append(await _shoot(hist_app, size, out, "history.svg", "cockpit — history", keys=("H",)))
    return shots


async def _render_dialog(app: CockpitApp, size: tuple[int, int], out: Path) -> Path:
    from cockpit.ui.screens.dialogs import NewSessionDialog

    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await app.push_screen(NewSessionDialog(sorted(app.config.templates), app.config.default_template))
        await pilot.pause()
        return _save(app.export_screenshot(title="cockpit — new session"), out / "new-session.svg")


def _save(svg: str, path: Path) -> Path:
    path.write_text(svg, encoding="utf-8")
    return path


def session_to_shoot(ws: Workspace, spec: str | None) -> SessionRef:
    """The session named by `spec` (id or number); None or "latest": the newest by start, open or
    ended (not `resolve_session`'s latest open one: an ended session is worth a picture too)."""
    if spec is not None and spec != "latest":
        ref = resolve_session(ws, spec)  # an unknown id raises, naming the latest ones
        assert ref is not None
        return ref
    sessions = list_sessions(ws)
    if not sessions:
        raise CockpitError(f'no session in {ws.root}: start one with `cockpit new "OBJECTIVE"`, '
                           "or pass --demo for the demo sessions")
    return sessions[-1]


def copy_session(original: SessionRef, source: Workspace, into: Workspace) -> SessionRef:
    """`original`'s folder, and `source`'s patterns (the pattern hints), copied into `into`: the
    cockpit writes into the folder of a session it opens, so a screenshot opens the copy."""
    ref = SessionRef(original.id, original.number, into.sessions_dir / original.id)
    try:
        shutil.copytree(original.path, ref.path)
        if source.patterns_dir.is_dir():
            shutil.copytree(source.patterns_dir, into.patterns_dir)
    except OSError as exc:  # shutil.Error too
        raise CockpitError(f"{original.path}: cannot copy the session to render it ({exc})") from exc
    return ref


@contextlib.contextmanager
def _cache_in(folder: Path) -> Iterator[None]:
    """Folds saved while rendering (session/saved_state.py) go to `folder`, removed with it: the
    copies rendered live in a temporary folder, so the user's cache would only keep strays."""
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = before


def _render_demo(tmp: Path, size: tuple[int, int], out: Path, replay: Path) -> list[Path]:
    ws = Workspace(tmp)
    ref, now = build_demo_session(ws, Config())
    if not RECORDED.is_dir():
        return asyncio.run(_render(screenshot_app(ws, Config(), ref, now, replay), size, out))
    shots = asyncio.run(_render_recorded(tmp, size, out, replay))
    dialog = asyncio.run(_render_dialog(screenshot_app(ws, Config(), ref, now, replay), size, out))
    return [*shots, dialog]


def take_screenshots(out: Path, size: tuple[int, int], workspace: Workspace | None = None,
                     session: str | None = None, replay: Path | None = None) -> list[Path]:
    """Render the main screens to `out/*.svg`: `workspace`'s session `session` (default: its
    newest, open or ended), never written to; without a workspace, the demo sessions. `replay`:
    the GPU panel's recording (default: the recorded H200 for the demo, none for a session)."""
    os.environ["TZ"] = "UTC"  # clock times on screen must not depend on the machine
    time.tzset()
    if replay is not None and not replay.is_file():
        raise CockpitError(f"--replay {replay}: no such file; record one with "
                           "`cockpit telemetry record --seconds 60 -o FILE.jsonl`")
    shown = None  # what to show is settled (or refused in one line) before anything is written
    if workspace is not None:
        shown = (workspace, session_to_shoot(workspace, session), load_config(workspace.root))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CockpitError(f"{out}: cannot create the screenshot folder ({exc.strerror})") from exc
    with tempfile.TemporaryDirectory(prefix="cockpit-shot-") as tmp, _cache_in(Path(tmp) / "cache"):
        if shown is None:
            return _render_demo(Path(tmp), size, out, replay or DEFAULT_REPLAY)
        source, original, config = shown
        looking = Workspace(Path(tmp) / "workspace")
        ref = copy_session(original, source, looking)
        app = screenshot_app(looking, config, ref, load_state(ref).last_event_t, replay, read_only=True)
        return asyncio.run(_render(app, size, out))
