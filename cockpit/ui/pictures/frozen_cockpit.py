"""The cockpit frozen for a picture: the app at a fixed instant with a recorded GPU, and the
recorded sessions cut mid-run (what `screenshot.py`, `screenshot_busy.py` and the snapshot tests
set up; it imports neither of them).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session.workspace import SessionRef, Workspace, load_state

if TYPE_CHECKING:
    from cockpit.ui.app import CockpitApp


# The GPU panel of the screenshots: a real H200 under load (tests/fixtures/telemetry).
DEFAULT_REPLAY = (Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "telemetry"
                  / "loaded-h200.jsonl")
REPLAY_TICKS = 18  # into the recording: the load has ramped up, the card is on its power cap


NO_GPU_DRAWN = "not drawn (see --replay)"  # the panel says "No GPU telemetry: " first


DEMO_WORKLOAD = "workloads/attention/attention.py"
"""The example workload the demo and recorded sessions ran (cockpit.toml at the clone's root)."""


def screenshot_app(ws: Workspace, config: Config, ref: SessionRef, now: float,
                   replay: Path | None = DEFAULT_REPLAY, read_only: bool = False,
                   example_workload: bool = True) -> CockpitApp:
    """The app frozen at `now`: its clock never moves, no status of its own is posted, and the
    GPU panel shows `replay` after REPLAY_TICKS seconds (no NVML is touched; without a recording
    it says that it draws none). `read_only`: the session is opened as an ended one is, open or not.
    `example_workload`: a config that names no workload names the example's."""
    from cockpit.telemetry.history import History
    from cockpit.telemetry.recording import ReplaySampler, read_recording
    from cockpit.telemetry.sample import Snapshot
    from cockpit.ui.app import CockpitApp

    quiet = dataclasses.replace(config, status_every_s=10**9)
    if example_workload and not quiet.workload.named:  # the recorded sessions are the example's
        quiet = dataclasses.replace(quiet, workload=dataclasses.replace(quiet.workload, module=DEMO_WORKLOAD))
    clock = FakeClock(now - REPLAY_TICKS)
    gpu: tuple[list[Any], History] = ([Snapshot(now, available=False, reason=NO_GPU_DRAWN)], History())
    if replay is not None and replay.exists():
        source, history = ReplaySampler(read_recording(replay), clock), History()
        snapshots = []
        for _ in range(REPLAY_TICKS):
            clock.advance(1)
            snapshots.append(source.tick())
            history.append(snapshots[-1])
        gpu = (snapshots, history)
    clock.set(now)
    app_class = _read_only_cockpit() if read_only else CockpitApp
    app = app_class(ws, quiet, ref, clock=clock, tick_s=3600, gpu_every_s=0, initial_gpu=gpu,
                    typing_gap_s=0)  # keys are scripted, one at a time
    # The editor's autosave clock stands still too: keys typed into a capture stay "unsaved"
    # however slowly a loaded machine delivers them (it read "saved 05:16:59" once on 2 cores).
    app.editor.now = clock.now
    return app


def _read_only_cockpit() -> type[CockpitApp]:
    from cockpit.ui.app import CockpitApp

    class ReadOnlyCockpit(CockpitApp):
        """The cockpit reading its session as it reads an ended one (CockpitApp._attach_session): no
        app_opened/app_closed, no telemetry track, and no orphaned gate of the session stopped,
        whether the session is open or not."""

        _reading = property(lambda self: True, lambda self, value: None)

    return ReadOnlyCockpit


# The recorded sessions (two real H200 sessions, the report's fixture) and the real build log a
# running build replays; without them (an installed wheel) the scripted demo stands in.
RECORDED = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "sessions" / "ws"
BUILD_LOG = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "gpu" / "build" / "clean.log"


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
