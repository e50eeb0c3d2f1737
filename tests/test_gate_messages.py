"""A gate run reaches the screen as typed Textual messages posted from its thread: a bench's end
arrives as one `GateFinished` carrying its `BenchResult` (the object, never a dict) and the pane
shows it; a message posted after the cockpit closed is dropped, never raised. The gates' Python is
found in a thread when it is not known yet (a workspace just trusted): keys are answered meanwhile
and the gate starts once it answers; known, the gate starts at the key press itself."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

from cockpit.clock import FakeClock
from cockpit.config import Config, GateConfig, load_config
from cockpit.gates.bench.result import BenchResult
from cockpit.gates.gate import Verdict
from cockpit.gates.interpreter import (
    Interpreter,
    PythonCache,
    candidates,
    forget,
    gates_python,
    known_python,
)
from cockpit.gates.run import GateRun
from cockpit.session.workspace import SessionRef, Workspace, create_session, latest_open_session
from cockpit.ui.app import CockpitApp
from cockpit.ui.controllers.gate_messages import GateFinished, GateOutputArrived
from cockpit.ui.screens.dialogs import TrustDialog
from cockpit.ui.widgets.gate_panel import GateDetail
from tests.test_structured_result import BENCH
from tests.test_workspace_trust import clone
from tests.waiting import until

SIZE = (150, 44)


class Watched(CockpitApp):
    """The cockpit, keeping each GateFinished it handled (Textual runs this handler and the app's)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.finished: list[GateFinished] = []
        self.handled_on: set[int] = set()

    def on_gate_finished(self, message: GateFinished) -> None:
        self.finished.append(message)
        self.handled_on.add(threading.get_ident())


@pytest.fixture(autouse=True)
def fresh() -> None:
    forget()  # the gates' Python of another test's workspace is not this one's


async def test_a_benchs_end_reaches_the_screen_as_one_message_with_its_typed_result(
        ws: Workspace, session: SessionRef) -> None:
    script = f"print('cockpit-result: ' + {json.dumps(json.dumps(BENCH))})"
    config = Config(gates={"bench": GateConfig(command=(sys.executable, "-c", script))}, status_every_s=10**6)
    app = Watched(ws, config, session, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=SIZE) as pilot:
        app.set_focus(app.gate_panel)
        while app.gate_panel.selected != "bench":
            await pilot.press("down")
        await pilot.press("r")
        await until(pilot, lambda: app.finished and app.gates.run is None, "the bench's end, handled")
        (message,) = app.finished
        assert message.run.gate.name == "bench" and message.verdict.status == "warn"
        result = message.verdict.result
        assert isinstance(result, BenchResult)  # the object the gate judged, not its JSON
        assert (result.workload, result.baseline_label) == ("my-softmax", "torch.softmax")
        assert app.handled_on == {threading.get_ident()}  # handled on the UI thread
        record = app.live.state.last_run("bench") if app.live else None
        assert record is not None and record.status == "warn"  # journaled before the screen acted
        shown = str(app.query_one("#gate-head").render()) + str(app.query_one("#gate-result").render())
        headline = result.headline()
        assert headline is not None and headline.figure == "1.30x" and "1.30x" in shown
        assert "my-softmax" in shown or "torch.softmax" in shown
        assert app.query_one(GateDetail).run_id == message.run.run_id


async def test_a_message_posted_after_the_cockpit_closed_is_dropped(ws: Workspace, session: SessionRef) -> None:
    app = Watched(ws, Config(status_every_s=10**6), session, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=SIZE):
        pass
    from cockpit.ui.controllers.gate_messages import MessagePosting

    posting, errors = MessagePosting(app), []

    def late() -> None:  # as a run's thread would, its child ending after the quit
        try:
            posting.gate_finished(None, Verdict("pass", "late"))  # type: ignore[arg-type]
            posting.gate_output(None, None)  # type: ignore[arg-type]
        except Exception as exc:
            errors.append(exc)

    thread = threading.Thread(target=late)
    thread.start()
    thread.join(30)
    assert not thread.is_alive() and errors == [] and app.finished == []
    assert not app.post_message(GateOutputArrived(None, None))  # type: ignore[arg-type]


@pytest.mark.usefixtures("no_gpu")
async def test_after_y_keys_are_answered_while_the_gates_python_is_found_and_the_gate_starts_once_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stranger's clone, trusted with y: its Python was never looked up (the warm-up skips an
    untrusted workspace), and looking asks every interpreter to import torch. That goes to a thread:
    the key after y moves the selection while the lookup is out, the env gate waits at the queue's
    head, and starts once the lookup answers."""
    ws = clone(tmp_path)
    (ws / "cockpit.toml").write_text('[gates]\npython = "tools/python"\n')  # env: its own probe
    answer, asked = threading.Event(), threading.Event()

    def slow_lookup(*args: object, **kwargs: object) -> Interpreter:
        asked.set()
        assert answer.wait(30), "the test never let the lookup answer"
        return Interpreter(sys.executable, "the test's lookup", None)

    monkeypatch.setattr("cockpit.gates.interpreter.gates_python", slow_lookup)
    root = Workspace(ws.resolve())
    assert known_python(load_config(root.root).gates, root.root) is None  # cold: nothing kept
    app = Watched(root, load_config(root.root), latest_open_session(root), clock=FakeClock(), tick_s=3600,
                  typing_gap_s=0)
    async with app.run_test(size=SIZE) as pilot:
        first = app.gate_panel.selected
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), "the trust question")
        await pilot.press("y")
        await until(pilot, asked.is_set, "the lookup, in its thread")
        await pilot.press("down")
        await until(pilot, lambda: app.gate_panel.selected != first, "the key after y")
        assert app.gates.queue == [first] and app.gates.run is None  # it keeps its place, not started
        assert app.live is not None and app.live.state.last_run(first) is None
        answer.set()
        await until(pilot, lambda: app.gates.run is not None or app.finished, f"{first} started")
        await until(pilot, lambda: app.finished and app.gates.run is None, f"{first} ended")
        assert app.gates.queue == [] and app.finished[0].run.gate.name == first
        assert app.finished[0].run.ctx.python_how == "the test's lookup"  # run in what the lookup found


@pytest.mark.usefixtures("no_gpu")
async def test_with_the_gates_python_known_r_starts_its_gate_at_the_key_press(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the start-up warm-up left in the user's cache (every interpreter's answer): the env probe
    starts within the key's own handling, no lookup thread between; nothing is asked again."""
    root = Workspace(tmp_path.resolve())
    ref = create_session(root, Config(), "known python", "optimize", FakeClock().now())
    cache = PythonCache(root.root)
    for path, _how in candidates(os.environ, sys.executable):
        cache.ask(path, lambda python: None)  # as the warm-up kept them: none imports torch here

    def never(python: str) -> str | None:
        raise AssertionError(f"{python} was asked again")

    assert known_python(Config().gates, root.root) == gates_python(Config().gates, root.root, asker=never)
    looked_up: list[str] = []
    monkeypatch.setattr("cockpit.gates.interpreter.gates_python",
                        lambda *args, **kwargs: looked_up.append("a lookup thread"))
    app = Watched(root, Config(status_every_s=10**6), ref, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    at_the_key: list[tuple[object, list[str]]] = []  # the board as the key's own handling left it
    pressed = Watched.action_run_gate

    def run_gate_and_look(self: Watched) -> None:
        pressed(self)
        at_the_key.append((self.gates.run, list(self.gates.queue)))

    monkeypatch.setattr(Watched, "action_run_gate", run_gate_and_look)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await until(pilot, lambda: at_the_key, "the key's handling")
        [(run, queue)] = at_the_key  # at once: not queued behind a lookup (a quick probe may end since)
        assert isinstance(run, GateRun) and run.gate.name == "env" and run.ctx.python == sys.executable
        assert queue == [] and looked_up == []
        app.gates.cancel()
        await until(pilot, lambda: app.finished and app.gates.run is None, "the env probe's end")


async def test_a_report_handled_while_the_cockpit_closes_is_drawn_nowhere(tmp_path: Path) -> None:
    """The key fuzzer closed the app while a gate still wrote: its output's message was handled
    after the panes were taken down, and drawing it raised NoMatches over the app's own exit."""
    from cockpit.gates.log_follow import GateOutput

    root = Workspace(tmp_path.resolve())
    ref = create_session(root, Config(), "closing", "optimize", FakeClock().now())
    loud = "import time\nwhile True:\n    print('still here', flush=True); time.sleep(0.01)"
    config = Config(gates={"env": GateConfig(command=(sys.executable, "-c", loud))}, status_every_s=10**6)
    app = Watched(root, config, ref, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await until(pilot, lambda: app.gates.run is not None and app.gate_detail.output_log.lines,
                    "the gate's first lines")
        run = app.gates.run
    assert not app.is_running and run is not None  # closed, its panes taken down
    app.gates.output_arrived(run, GateOutput(["a late line"]))  # drawn nowhere: it raised NoMatches
    run.cancel()  # the child a test app leaves (the cockpit's own quit cancels it first)
