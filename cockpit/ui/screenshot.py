"""`cockpit screenshot`: SVGs of the main screens, rendered headless with a fixed clock.

Without `--session` the screens show a demo session scripted through the real core (timer
intents and composed status lines at fixed times), so `screenshots/` is reproducible.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.clock import FakeClock
from cockpit.config import Config, load_config
from cockpit.errors import CockpitError
from cockpit.session import events as ev
from cockpit.session import timer
from cockpit.session.journal import Event
from cockpit.session.live import LiveSession
from cockpit.session.state import SessionState
from cockpit.session.status import Activity, compose_status
from cockpit.workspace import (
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
