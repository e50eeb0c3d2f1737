"""`cockpit`: the TUI on a session of the workspace (with `cockpit screenshot`, the only verbs that
load Textual)."""

from __future__ import annotations

import argparse
import sys

from cockpit.cli.parser import session_named, workspace_of
from cockpit.clock import SystemClock
from cockpit.config import load_config
from cockpit.memory import limit_malloc_arenas
from cockpit.session.workspace import resolve_session
from cockpit.ui.app import CockpitApp
from cockpit.ui.shims.quiet_input import quiet_driver


def run_tui(args: argparse.Namespace) -> int:
    """`cockpit`: the TUI on the latest open session (or a new one)."""
    limit_malloc_arenas()  # before Textual's threads start
    app = tui_app(args)
    app.driver_class = quiet_driver(app.driver_class)  # an idle key reader wakes 2x/s, not 10x
    app.run()
    return app.return_code or 0


def tui_app(args: argparse.Namespace) -> CockpitApp:
    """The cockpit app for these arguments; `--replay FILE.jsonl` drives its GPU panel from a
    recording instead of NVML (a bad recording is a one-line error before the screen opens)."""
    ws = workspace_of(args)
    config = load_config(ws.root)
    ref = resolve_session(ws, session_named(args))
    clock = SystemClock()
    telemetry = None
    if getattr(args, "replay", None) is not None:
        from cockpit.telemetry.recording import ReplaySampler  # a live cockpit never loads it

        telemetry = ReplaySampler.from_path(args.replay, clock)
        for problem in telemetry.recording.problems[:3]:
            print(f"cockpit: {problem}", file=sys.stderr)
    return CockpitApp(ws, config, ref, clock=clock, telemetry=telemetry)
