"""Gates in the TUI: run with a key, watch the live log, cancel, queue, stall warnings, and
runs a crashed cockpit left behind. The gate commands are real child processes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.clock import FakeClock
from cockpit.config import Config, GateConfig
from cockpit.gates import catalog
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp
from cockpit.ui.widgets.gate_panel import GateDetail, GatePanel

from .waiting import until

SIZE = (150, 44)


def app_with(ws: Workspace, ref: SessionRef, code: str, *, also: dict[str, str] | None = None,
             **gate: object) -> CockpitApp:
    """The env gate runs `code` (and each gate in `also` its own), never the real probe: that one
    first asks every Python here whether torch imports, for many seconds on a loaded box."""
    commands = {name: GateConfig(command=(sys.executable, "-c", c)) for name, c in (also or {}).items()}
    config = Config(gates={"env": GateConfig(command=(sys.executable, "-c", code), **gate), **commands},
                    status_every_s=10**6)
    app = CockpitApp(ws, config, ref, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    app.toasts = []  # type: ignore[attr-defined]
    real = app.notify
    app.notify = lambda message, **kw: (app.toasts.append(message), real(message, **kw))  # type: ignore[method-assign,attr-defined]
    return app


async def finished(app: CockpitApp, pilot) -> None:  # type: ignore[no-untyped-def]
    """Wait for the running gate's child to end and its finish to be handled."""
    run = app.gates.run
    if run is not None:
        assert await asyncio.to_thread(run.wait, 30)
    await pilot.pause()


def gate_events(ref: SessionRef) -> list[dict]:
    events = [json.loads(line) for line in ref.journal.read_text().splitlines()]
    return [e for e in events if e["type"].startswith("gate_")]


async def test_r_runs_the_gate_and_its_log_streams_into_the_detail_view(ws, session) -> None:
    app = app_with(ws, session, "print('checking torch'); print('\\x1b[31m[red]all good[/red]')")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await finished(app, pilot)
        assert list(app.query_one(GateDetail).output_log.lines)[-2:] == ["checking torch",
                                                                  "[red]all good[/red]"]
        assert any("env: PASS — exit 0: [red]all good[/red]" in t for t in app.toasts)
    started, done = gate_events(session)
    assert (started["type"], started["gate"], started["run_id"]) == ("gate_started", "env", "001-env")
    assert (done["status"], done["exit_code"]) == ("pass", 0)
    assert done["log"] == f"sessions/{session.id}/logs/001-env.log"  # relative: the session moves
    assert "checking torch" in (ws.root / done["log"]).read_text()


async def test_x_cancels_a_hung_gate(ws, session) -> None:
    app = app_with(ws, session, "import time; print('hanging', flush=True); time.sleep(300)")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await pilot.press("x", "y")
        await finished(app, pilot)
        assert app.gates.run is None
    assert gate_events(session)[-1]["status"] == "cancelled"


async def test_a_silent_gate_is_flagged_but_left_running(ws, session, tmp_path) -> None:
    go = tmp_path / "go"  # the gate stays silent after its first line until the test has seen the flag
    code = (f"import os, time\nprint('a', flush=True)\nwhile not os.path.exists({str(go)!r}): "
            "time.sleep(0.01)\nprint('b', flush=True)")
    app = app_with(ws, session, code, stall_after_s=0.3)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        run = app.gates.run
        assert run is not None
        try:
            await until(pilot, lambda: run.progress.last_line == "a" and "(silent)" in app.status_line(),
                        "the status line to flag the gate silent since its line 'a'")
            assert any("no output for" in t and "preempted" in t for t in app.toasts)
        finally:
            go.touch()  # its next line, and its end: also when the flag never came
        await finished(app, pilot)
        assert list(app.query_one(GateDetail).output_log.lines)[-2:] == ["a", "b"]  # left running
    types = [e["type"] for e in gate_events(session)]
    # one flag for each silence: after 'a', and before it too where a busy box took over 0.3 s to
    # start the child's Python
    assert types[0] == "gate_started" and types[-1] == "gate_finished"
    assert types[1:-1] in (["gate_stalled"], ["gate_stalled"] * 2)
    assert gate_events(session)[-1]["status"] == "pass"


class _Second(catalog.CatalogGate):
    """The env gate's code under a second name: two gates that can queue behind each other."""

    @property
    def name(self) -> str:
        return "second"


async def test_gates_queue_behind_the_running_one(ws, session, tmp_path) -> None:
    saved = dict(catalog.GATES)  # restored in order afterwards: the panel lists gates in it
    catalog.GATES.clear()
    catalog.GATES.update({"env": saved["env"], "second": _Second(saved["env"].line)})
    try:
        await _queue_behind_the_running_one(ws, session, tmp_path)
    finally:
        for go in ("go", "go2"):  # a step that failed leaves no child waiting for ever
            (tmp_path / go).touch()
        catalog.GATES.clear()
        catalog.GATES.update(saved)


async def _queue_behind_the_running_one(ws, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    go, go2 = tmp_path / "go", tmp_path / "go2"  # each run holds until the test lets it end

    def held(until: Path) -> str:
        return f"import os, time\nwhile not os.path.exists({str(until)!r}): time.sleep(0.01)\nprint('done')"

    app = app_with(ws, session, held(go), also={"second": held(go2)})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")  # env runs
        await pilot.press("r")  # env again: refused, it is running
        assert any("already running or queued" in t for t in app.toasts)
        await pilot.press("down", "r")  # second: queued behind env
        assert app.gates.queue == ["second"]
        assert any("second queued after env" in t for t in app.toasts)
        go.touch()
        await finished(app, pilot)  # env ends, second starts
        assert app.gates.run is not None and app.gates.run.gate.name == "second"
        go2.touch()
        await finished(app, pilot)
    assert [(e["type"], e["gate"]) for e in gate_events(session)] == [
        ("gate_started", "env"), ("gate_finished", "env"),
        ("gate_started", "second"), ("gate_finished", "second")]


async def test_the_status_line_says_which_gate_runs(ws, session) -> None:
    app = app_with(ws, session, "import time; print('x', flush=True); time.sleep(300)")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await pilot.pause()
        assert "now: env gate" in app.status_line()
        await pilot.press("x", "y")
        await finished(app, pilot)


async def test_a_run_left_by_a_crashed_cockpit_shows_as_interrupted(ws, session) -> None:
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        writer = JournalWriter(session.journal)
        writer.append(ev.gate_started(FakeClock().now(), "001-env", "env", ("probe",),
                                      str(session.path / "logs" / "001-env.log"), orphan.pid))
        writer.close()
        app = app_with(ws, session, "print(1)")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            row = app.gates.rows()[0]
            assert row.state == "interrupted"
            assert row.summary == f"interrupted: its process (pid {orphan.pid}) is still running"
    finally:
        orphan.kill()
        orphan.wait()


async def test_selecting_a_finished_gate_loads_its_log_from_disk(ws, session) -> None:
    app = app_with(ws, session, "print('from the first run')")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await finished(app, pilot)
    reopened = app_with(ws, session, "print(1)")
    async with reopened.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "from the first run" in list(reopened.query_one(GateDetail).output_log.lines)
        assert reopened.query_one(GatePanel).selected == "env"


@pytest.mark.parametrize("argv", [("no-such-tool-xyz",)])
async def test_a_gate_command_that_cannot_start_is_an_error_row(ws, session, argv) -> None:
    config = Config(gates={"env": GateConfig(command=argv)}, status_every_s=10**6)
    app = CockpitApp(ws, config, session, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await pilot.pause()
        row = app.gates.rows()[0]
        assert row.state == "error" and "cannot start 'no-such-tool-xyz'" in row.summary


async def test_a_running_gate_shows_what_it_does_not_its_command_line(ws, session) -> None:
    app = app_with(ws, session, "import time; print('checking', flush=True); time.sleep(30)")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await pilot.pause()
        head = str(app.query_one("#gate-head").render())
        assert head.startswith("RUNNING env gate") and sys.executable not in head and "time.sleep" not in head
        app.gates.run.cancel()  # type: ignore[union-attr]
        await finished(app, pilot)


async def test_the_pane_follows_a_run_started_from_another_shell(ws, session) -> None:
    """`cockpit gate env` in another shell while the TUI shows env: the pane switches to that run
    and shows its result once it ends, not the run it showed before."""
    app = app_with(ws, session, "print('ok')")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await finished(app, pilot)
        detail = app.query_one(GateDetail)
        assert detail.run_id == "001-env"
        log = session.path / "logs" / "002-env.log"
        log.write_text("headless output\n")
        writer = JournalWriter(session.journal)
        writer.append(ev.gate_started(app.clock.now(), "002-env", "env", ("x",), str(log), 1))
        writer.append(ev.gate_finished(app.clock.now(), "002-env", "env", "fail", "FAILED headless",
                                       1.0, 1, str(log), {}))
        writer.close()
        app.tick()
        await pilot.pause()
        assert detail.run_id == "002-env"
        assert str(app.query_one("#gate-head").render()).startswith("✗ FAIL FAILED headless")


async def test_a_finished_result_fills_the_pane_its_log_path_in_the_border_and_l_shows_the_raw_log(ws, session) -> None:
    """The H200's recorded bench at 80x24: its result (headline, table) fills the pane, the log's
    path sits in the border instead of wrapping over the head, and l shows the raw log."""
    from pathlib import Path

    report = json.loads((Path(__file__).parent / "fixtures" / "gpu" / "gates" / "gate-bench.json").read_text())
    log = session.path / "logs" / "001-bench.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text("the raw log\n")
    writer = JournalWriter(session.journal)
    from .conftest import T0

    writer.append(ev.gate_started(T0 + 60, "001-bench", "bench", ("x",), str(log), 1))
    writer.append(ev.gate_finished(T0 + 100, "001-bench", "bench", report["status"], report["summary"], 40.0, 0,
                                   str(log), report["result"]))
    writer.close()
    app = app_with(ws, session, "print('ok')")
    async with app.run_test(size=(80, 24)) as pilot:
        app.set_focus(app.gate_panel)
        await pilot.press("j", "j", "j")
        await pilot.pause()
        detail = app.query_one(GateDetail)
        assert app.live is not None and app.live.state.last_run("bench") is not None, [r.run_id for r in app.live.state.gate_runs]
        assert app.gate_panel.selected == "bench" and detail.run_id == "001-bench"
        assert str(detail.border_subtitle) == f"log sessions/{session.id}/logs/001-bench.log"
        assert "log sessions" not in str(app.query_one("#gate-head").render())
        assert detail.has_class("result-only") and not detail.output_log.display
        await pilot.press("l")
        assert detail.output_log.display and list(detail.output_log.lines) == ["the raw log"]
        await pilot.press("l")
        assert not detail.output_log.display
