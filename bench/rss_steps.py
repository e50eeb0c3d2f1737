"""Resident memory of the cockpit TUI, step by step in one process: the stack's floor first, then
the cockpit's modules in groups, then the app itself running headless with its GPU panel.

    python3 bench/rss_steps.py [--seconds 10] [--replay FILE.jsonl]

Without --replay it needs a GPU and its driver (the NVML steps say so in one line elsewhere, and
the panel then shows "no GPU telemetry"). Numbers are cumulative MiB from /proc/self/status, with
each step's increase, the anonymous and file-backed parts, and the threads. The floor is
Python + Textual + psutil + pynvml + nvmlInit + the panel's device queries, after handing free
memory back (as the cockpit does once its screen is up); the cockpit's share is the rest.
Run it with bytecode cached (no PYTHONDONTWRITEBYTECODE): compiling at import leaves the
compiler's memory resident and inflates every step.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cockpit.memory import limit_malloc_arenas, release_free_memory

if TYPE_CHECKING:
    from textual.pilot import Pilot

SHARE_MAX_MIB, RSS_MAX_MIB = 10.0, 72.0

# The cockpit's modules in the order the TUI's first frame needs them, grouped by what they are.
COCKPIT_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("config + session core", ("cockpit.config", "cockpit.session.live", "cockpit.session.status",
                               "cockpit.session.timer", "cockpit.session.workspace",
                               "cockpit.telemetry.track")),
    ("gates (parsers, hardware)", ("cockpit.gates.catalog",)),
    ("TextArea + markdown marks", ("textual.widgets._text_area", "cockpit.ui.editor.markdown_marks")),
    ("ui panels + editor", ("cockpit.ui.editor.pane", "cockpit.ui.controllers.gate_board",
                            "cockpit.ui.widgets.gpu_panel", "cockpit.ui.widgets.header",
                            "cockpit.ui.screens.main_screen", "cockpit.ui.widgets.status_history",
                            "cockpit.ui.controllers.gpu_feed")),
    ("yaml", ("yaml",)),
    ("patterns", ("cockpit.patterns.library", "cockpit.ui.screens.patterns",
                  "cockpit.ui.controllers.pattern_desk")),
    ("tune panel", ("cockpit.ui.widgets.tune_feed", "cockpit.ui.widgets.tune_panel")),
    ("ui app + cli + telemetry", ("cockpit.ui.app", "cockpit.cli", "cockpit.telemetry.recording",
                                  "cockpit.telemetry.history", "cockpit.telemetry.sampler",
                                  "cockpit.telemetry.nvml", "cockpit.telemetry.poller")),
)


def rss() -> tuple[float, float, float, int]:
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)

    def mib(key: str) -> float:
        return int(fields[key].split()[0]) / 1024

    return mib("VmRSS"), mib("RssAnon"), mib("RssFile"), int(fields["Threads"])


def step(name: str, fn: Callable[[], object]) -> float:
    before = rss()[0]
    try:
        fn()
    except Exception as exc:  # no driver here: say so and go on
        print(f"   {name} failed: {exc}")
    total, anon, file, threads = rss()
    print(f"{name:<34} {total:7.1f} MiB ({total - before:+5.1f})  anon {anon:6.1f} file {file:6.1f}  "
          f"threads {threads}")
    return total


def nvml_init() -> None:
    import pynvml

    pynvml.nvmlInit()


def device_queries() -> None:
    import pynvml

    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        pynvml.nvmlDeviceGetName(h)
        pynvml.nvmlDeviceGetUtilizationRates(h)
        pynvml.nvmlDeviceGetMemoryInfo(h)
        pynvml.nvmlDeviceGetComputeRunningProcesses(h)
        pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)


def import_all(modules: tuple[str, ...]) -> None:
    for name in modules:
        importlib.import_module(name)


def run_app(seconds: float, replay: Path | None) -> None:
    """The TUI headless at 160x48 for `seconds`, its GPU panel at 1 Hz (NVML, or a recording)."""
    from cockpit.clock import SystemClock
    from cockpit.config import Config
    from cockpit.session.workspace import Workspace, create_session
    from cockpit.telemetry.recording import ReplaySampler
    from cockpit.ui.app import CockpitApp

    ws = Workspace(Path(tempfile.mkdtemp(prefix="rss-steps-")))
    clock = SystemClock()
    ref = create_session(ws, Config(), "idle panel", "optimize", clock.now())
    source = ReplaySampler.from_path(replay, clock) if replay else None
    app = CockpitApp(ws, Config(), ref, clock=clock, telemetry=source)

    async def idle(pilot: Pilot[object]) -> None:
        await pilot.pause(seconds)
        app.exit()

    app.run(headless=True, size=(160, 48), auto_pilot=idle)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=10.0, help="how long the app runs")
    p.add_argument("--replay", type=Path, help="feed the GPU panel from a recording (no GPU)")
    args = p.parse_args()
    limit_malloc_arenas()  # as `cockpit` does before Textual's threads start
    step("python", lambda: None)
    step("rich", lambda: importlib.import_module("rich.console"))
    step("textual app", lambda: importlib.import_module("textual.app"))
    step("psutil", lambda: importlib.import_module("psutil"))
    step("pynvml import", lambda: importlib.import_module("pynvml"))
    step("nvmlInit", nvml_init)
    step("device queries", device_queries)
    floor = step("floor: gc + malloc_trim", release_free_memory)
    for name, modules in COCKPIT_GROUPS:
        step(f"+ {name}", partial(import_all, modules))
    step(f"+ the app running {args.seconds:.0f} s (160x48)", lambda: run_app(args.seconds, args.replay))
    total = step("gc + malloc_trim", release_free_memory)
    share = total - floor
    print(f"floor {floor:.1f} MiB; cockpit {total:.1f} MiB (target <= {RSS_MAX_MIB:.0f}); its share "
          f"{share:.1f} MiB (target <= {SHARE_MAX_MIB:.0f}: {'PASS' if share <= SHARE_MAX_MIB else 'FAIL'})")


if __name__ == "__main__":
    main()
