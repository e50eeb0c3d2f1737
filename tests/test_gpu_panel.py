"""The GPU panel: driven by a real H200 recording, by a fake at the pynvml boundary for the
states a live card rarely shows (no driver, a GPU off the bus), and the phase summaries."""

from __future__ import annotations

import json
from pathlib import Path

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.telemetry.fake import FakeGpu, FakePynvml
from cockpit.telemetry.nvml import NVML_ERROR_LIBRARY_NOT_FOUND, Nvml
from cockpit.telemetry.recording import ReplaySampler, read_recording
from cockpit.telemetry.sampler import Sampler
from cockpit.ui.app import CockpitApp

LOADED = Path(__file__).parent / "fixtures" / "telemetry" / "loaded-h200.jsonl"
SIZE = (160, 48)


def app_with(ws: Workspace, ref: SessionRef, source, clock: FakeClock) -> CockpitApp:  # type: ignore[no-untyped-def]
    return CockpitApp(ws, Config(status_every_s=10**6), ref, clock=clock, tick_s=3600, typing_gap_s=0,
                      telemetry=source, gpu_every_s=3600)


async def polled(app: CockpitApp, pilot, times: int = 1) -> str:  # type: ignore[no-untyped-def]
    """Poll the GPU `times` times (as the 1 Hz timer would) and return the panel's text."""
    for i in range(times):
        if i:
            app.gpu.poll()
        await app.gpu_polled()
        await pilot.pause()
    return "\n".join(line.plain for line in app.gpu_panel.lines)


async def test_replay_of_a_loaded_h200_shows_load_power_cap_and_the_foreign_process(ws, session) -> None:
    clock = FakeClock()
    app = app_with(ws, session, ReplaySampler(read_recording(LOADED), clock), clock)
    async with app.run_test(size=SIZE) as pilot:
        text = await polled(app, pilot, times=15)
        assert "GPU0 H200" in text and "/143771 MiB" in text and "/1980 MHz" in text
        assert "clocks: power cap" in text  # the recording's busy samples are power-capped
        assert "⚠ pid 445 python3 1002 MiB: not ours" in text
        assert app.gpu_history is not None
        assert len(app.gpu_history.values(0, "util_gpu")) == 15
        assert app.gpu_panel.border_subtitle.startswith("NVML ") and app.gpu_panel.border_subtitle.endswith(" µs/tick")


async def test_without_nvml_the_panel_says_why_in_one_line(ws, session) -> None:
    clock = FakeClock()
    source = Sampler(Nvml(FakePynvml(init_error=NVML_ERROR_LIBRARY_NOT_FOUND)), clock)
    app = app_with(ws, session, source, clock)
    async with app.run_test(size=SIZE) as pilot:
        text = await polled(app, pilot)
        assert text == "No GPU telemetry: NVML library not found (no NVIDIA driver on this machine)"
        assert "ENVIRONMENT" in app.header.text.plain  # everything else works


async def test_a_gpu_that_falls_off_the_bus_is_a_red_row(ws, session) -> None:
    clock = FakeClock()
    lib = FakePynvml([FakeGpu(), FakeGpu(name="NVIDIA L4")])
    app = app_with(ws, session, Sampler(Nvml(lib), clock), clock)
    async with app.run_test(size=SIZE) as pilot:
        await polled(app, pilot)
        lib.gpus[1].lost = True
        text = await polled(app, pilot, times=2)
        assert "GPU0 H200" in text
        assert "GPU1 L4: fell off the bus (NVML: GPU is lost)" in text


async def test_each_phase_end_journals_what_the_gpu_did(ws, session, clock) -> None:
    app = app_with(ws, session, ReplaySampler(read_recording(LOADED), clock), clock)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(20):
            clock.advance(1)
            await polled(app, pilot)
            app.gpu.poll()
        await app.gpu_polled()
        await pilot.press("n", "y")
    events = [json.loads(line) for line in session.journal.read_text().splitlines()]
    [summary] = [e for e in events if e["type"] == "gpu_summary"]
    assert summary["phase"] == "Environment"
    [gpu] = summary["gpus"]
    assert gpu["samples"] >= 15 and gpu["util_max"] >= 99 and gpu["power_max_w"] > 600
    assert gpu["throttled_s"].get("power cap", 0) > 5


async def test_cockpit_dash_dash_replay_drives_the_panel_from_the_recording(ws, session) -> None:
    from cockpit.cli.parser import build_parser
    from cockpit.cli.tui import tui_app

    args = build_parser().parse_args(["--workspace", str(ws.root), "--replay", str(LOADED)])
    app = tui_app(args)
    async with app.run_test(size=SIZE) as pilot:
        await app.gpu_polled()
        await pilot.pause()
        text = app.gpu_panel.plain
        assert "GPU0 H200" in text and "/143771 MiB" in text  # the recording, not this machine


def test_a_replay_that_is_not_a_recording_is_one_line_before_the_screen_opens(
        ws, session, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from cockpit import cli

    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"hello": 1}\n')
    assert cli.main(["--workspace", str(ws.root), "--replay", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "not a cockpit telemetry recording" in err


async def test_the_tick_cost_shown_is_a_median_not_the_slow_lane_tick(ws) -> None:
    from cockpit.ui.pictures.screenshot import build_demo_session, screenshot_app

    ref, now = build_demo_session(ws, Config())
    app = screenshot_app(ws, Config(), ref, now)  # 18 recorded H200 ticks; the 18th is a slow one
    async with app.run_test(size=(160, 48)):
        cost = int(app.gpu_panel.border_subtitle.split()[1])
    assert 200 < cost < 600  # the recording's fast ticks, not its 55191 µs slow-lane tick


async def test_an_idle_gpu_redraws_only_what_changed_and_its_sparklines_every_two_seconds(ws, session) -> None:
    clock = FakeClock(1_780_000_000.0)
    lib = FakePynvml([FakeGpu()])
    app = app_with(ws, session, Sampler(Nvml(lib), clock), clock)
    async with app.run_test(size=SIZE) as pilot:
        await polled(app, pilot)
        clock.advance(1)  # the same numbers a second later, inside the same 2 s of sparklines
        shown = list(app.gpu_panel.lines)
        await polled(app, pilot, times=2)
        assert all(a is b for a, b in zip(shown, app.gpu_panel.lines, strict=True))  # nothing repainted
        lib.gpus[0].power_w = 312.0  # a number moved: redrawn at once
        clock.advance(0.5)
        text = await polled(app, pilot, times=2)
        assert "312/700 W" in text and app.gpu_panel.lines[0] is not shown[0]
        spark = app.gpu_panel.lines[3]
        assert app.gpu_panel.lines[3].plain.startswith("util")
        clock.advance(1)  # into the next 2 s: the sparklines move on
        await polled(app, pilot, times=2)
        assert app.gpu_panel.lines[3] is not spark


def test_a_busy_gpus_processes_take_two_lines_the_foreign_first_and_the_rest_counted() -> None:
    """A shared box lists dozens of processes: two lines at most (an 80x24 pane keeps its status
    history on screen), those not ours first, the rest counted with where to see them all."""
    from cockpit.telemetry.sample import GpuProcess
    from cockpit.ui.widgets.gpu_panel import process_lines

    own = 4242
    procs = (GpuProcess(4243, "python3", 518, (own,)), GpuProcess(725, "python3", 518),
             GpuProcess(731, "torchrun", 2048), GpuProcess(4244, "ncu", 12, (own,)))
    lines = [t.plain for t in process_lines(procs, own, gate_gpu=True)]
    assert lines == ["⚠ pid 725 python3 518 MiB: not ours, bench suspect",
                     "⚠ +3 more processes (1 not ours): cockpit gpu lists them"]
    two = [t.plain for t in process_lines(procs[:2], own, gate_gpu=True)]
    assert two == ["⚠ pid 725 python3 518 MiB: not ours, bench suspect", "  pid 4243 python3 518 MiB (ours)"]
