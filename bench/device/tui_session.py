"""A session driven through the TUI on a GPU box: the real app (headless, Textual's Pilot) with live
NVML in its GPU panel and telemetry track, its own gate runner running the gates in order, the
phase timer moved by its intents, notes typed into SESSION.md, then End session, which writes
the report. For the device tool (no terminal there):

    python3 bench/device/tui_session.py WORKSPACE "OBJECTIVE" GATE[,GATE...] [NOTE ...]

A step `tune` runs `cockpit tune` (TUNE_BUDGET minutes, default 1) in a second process, as an
engineer would in another pane, while the TUI follows the journal and its tune panel updates.
Each step says how much CPU the TUI process used meanwhile (% of one core: its own user + system
time over the step's wall time). Prints one line per step and leaves the session in
WORKSPACE/sessions/.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from cockpit.config import load_config
from cockpit.session import timer
from cockpit.session.workspace import Workspace, create_session
from cockpit.ui.app import CockpitApp


def tui_cpu(cpu0: float, wall0: float) -> str:
    """This process's CPU since (cpu0, wall0): its user + system time over the wall time."""
    wall = time.monotonic() - wall0
    return f"TUI CPU {100 * (sum(os.times()[:2]) - cpu0) / wall:.1f} % of one core over {wall:.0f} s"


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


async def drive(root: Path, objective: str, gates: list[str], notes: list[str]) -> int:
    ws = Workspace(root)
    config = load_config(root)
    ref = create_session(ws, config, objective, "optimize", time.time())
    app = CockpitApp(ws, config, ref, typing_gap_s=0)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(2.0)  # the first NVML polls
        say(f"session {ref.id}; GPU panel: {app.gpu_panel.border_subtitle or 'no NVML'}")
        phase_for = {"env": "Environment", "build": "Baseline", "correctness": "Baseline",
                     "bench": "Baseline", "profile": "Profile"}
        for gate in gates:
            cpu0, wall0 = sum(os.times()[:2]), time.monotonic()
            if gate == "tune":
                tune = subprocess.Popen([sys.executable, "-m", "cockpit", "--workspace", str(root), "tune",
                                         "--budget", os.environ.get("TUNE_BUDGET", "1"), "--json"],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                while tune.poll() is None:
                    await pilot.pause(0.5)
                out = (tune.stdout.read() if tune.stdout else "").strip()
                panel = app.tune.progress.activity() if app.tune.progress else "no tune panel"
                say(f"tune: exit {tune.returncode}; panel: {panel}; {tui_cpu(cpu0, wall0)}; "
                    f"{len(out)} bytes of JSON")
                continue
            want = phase_for.get(gate)
            state = app.live.state
            if want and state.current_run and state.current_run.phase != want:
                app.intent(lambda s, now, p=want: timer.goto(s, now, p))
            app.gates.request(gate)
            while app.gates.run is not None or app.gates.queue:
                await pilot.pause(0.5)
            run = app.live.state.last_run(gate, finished=True)
            say(f"{gate}: {run.status if run else '?'} - {run.summary if run else ''}; "
                f"{tui_cpu(cpu0, wall0)}")
            app.post_status(auto=False, doing=f"{gate} gate: {run.summary if run else 'no result'}")
        app.set_focus(app.editor.area)
        for note in notes:
            app.editor.insert(f"\n- {time.strftime('%H:%M')} {note}")
        app.editor.flush()
        app.intent(timer.end_session)
        from cockpit.ui.controllers.report_actions import export_report

        export_report(app, "Session ended")
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        track = app.track.rows_written if app.track else 0
        written = sorted(p.name for p in ref.path.iterdir() if p.name.lower().startswith("report"))
        say(f"ended; telemetry rows written {track}; report files: {written}")
    return 0


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    root, objective, gates = Path(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
    return asyncio.run(drive(root, objective, gates, sys.argv[4:]))


if __name__ == "__main__":
    sys.exit(main())
