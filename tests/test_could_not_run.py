"""A gate that could not run (no GPU, no torch, no ncu, a missing tool) is told apart from one that
found the kernel wrong: a new user in tmux read the same red ✗ for both. It has its own mark (⊘),
colour (magenta) and word (COULD NOT RUN) in the gate list, the pane's head and the toast, and the
report and the help say it too; the journal keeps its old word, `error`, so old journals read."""

from __future__ import annotations

import asyncio
import sys

import pytest
from rich.text import Text
from textual.widgets import Static

from cockpit.clock import FakeClock
from cockpit.config import Config, GateConfig
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp

from .conftest import T0

SIZE = (120, 40)
FAILS = (sys.executable, "-c", "import sys; print('max abs diff 3.1 > 1e-3'); sys.exit(1)")
MISSING_TOOL = ("no-such-sanitizer-xyz",)


def watched(ws: Workspace, ref: SessionRef, argv: tuple[str, ...]) -> CockpitApp:
    """The app with the env gate's command replaced, its toasts and their severities kept."""
    config = Config(gates={"env": GateConfig(command=argv)}, status_every_s=10**6)
    app = CockpitApp(ws, config, ref, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    app.toasted = []  # type: ignore[attr-defined]
    real = app.notify
    app.notify = lambda message, **kw: (app.toasted.append((message, kw.get("severity"))),  # type: ignore[method-assign,attr-defined]
                                        real(message, **kw))
    return app


def colour_at_start(app: CockpitApp, text: Text) -> str | None:
    colour = text.get_style_at_offset(app.console, 0).color
    return colour.name if colour is not None else None


def env_row(app: CockpitApp) -> Text:
    return next(line for line in app.gate_panel.lines if line.plain[2:].startswith("env"))


def head(app: CockpitApp) -> Text:
    content = app.gate_detail.query_one("#gate-head", Static).content
    assert isinstance(content, Text)
    return content


async def ran(app: CockpitApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("r")
    for _ in range(600):
        run = app.gates.run
        if run is not None:
            assert await asyncio.to_thread(run.wait, 30)
        await pilot.pause()
        if app.gates.run is None and app.gates.rows()[0].state not in ("running", "queued"):
            return
    raise AssertionError("the gate did not finish")


@pytest.mark.parametrize(("argv", "state", "mark", "colour", "word", "severity"), [
    (MISSING_TOOL, "error", "⊘", "magenta", "COULD NOT RUN", "warning"),
    (FAILS, "fail", "✗", "red", "FAIL", "error"),
], ids=["a missing tool", "a failed check"])
async def test_a_gate_that_could_not_run_is_marked_apart_from_one_that_failed_in_the_list_head_and_toast(
        ws, session, argv, state, mark, colour, word, severity) -> None:  # type: ignore[no-untyped-def]
    app = watched(ws, session, argv)
    async with app.run_test(size=SIZE) as pilot:
        await ran(app, pilot)
        assert app.gates.rows()[0].state == state
        row = env_row(app)
        assert row.plain.startswith(f"{mark} env") and colour_at_start(app, row) == colour
        shown = head(app)
        assert shown.plain.startswith(f"{mark} {word} ") and colour_at_start(app, shown) == colour
        [(toast, loud)] = [(t, s) for t, s in app.toasted if "env:" in t]  # type: ignore[attr-defined]
        assert toast.startswith(f"{mark} env: {word} — ") and loud == severity
        if state == "error":
            assert "cannot start 'no-such-sanitizer-xyz'" in toast and "✗" not in row.plain + shown.plain


async def test_a_run_an_older_cockpit_journaled_as_error_reads_as_could_not_run(ws, session) -> None:
    log = session.path / "logs" / "001-profile.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("cockpit-profile: ncu (Nsight Compute) not found on PATH\n")
    writer = JournalWriter(session.journal)
    writer.append(ev.gate_started(T0 + 5, "001-profile", "profile", ("python3", "probe"),
                                  str(log), 4242))
    writer.append(ev.gate_finished(T0 + 6, "001-profile", "profile", "error",
                                   "ncu (Nsight Compute) not found on PATH or in $CUDA_HOME/bin", 1.0, 2,
                                   str(log), {}))
    writer.close()
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=FakeClock(T0 + 60),
                     tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.set_focus(app.gate_panel)
        while app.gate_panel.selected != "profile":
            await pilot.press("down")
        await pilot.pause()
        row = next(line for line in app.gate_panel.lines if "profile" in line.plain)
        assert row.plain.startswith("⊘ profile") and colour_at_start(app, row) == "magenta"
        assert head(app).plain == "⊘ COULD NOT RUN ncu (Nsight Compute) not found on PATH or in $CUDA_HOME/bin"


def test_the_report_says_could_not_run_in_a_colour_of_its_own(ws, session, capsys) -> None:  # type: ignore[no-untyped-def]
    from cockpit.cli import main

    writer = JournalWriter(session.journal)
    for run_id, gate, status in (("001-correctness", "correctness", "error"), ("002-bench", "bench", "fail")):
        log = f"sessions/{session.id}/logs/{run_id}.log"
        writer.append(ev.gate_started(T0 + 5, run_id, gate, ("python3",), log, 1))
        writer.append(ev.gate_finished(T0 + 9, run_id, gate, status, f"{gate} said so", 4.0, 2,
                                       log, {}))
    writer.close()
    assert main(["--workspace", str(ws.root), "export", session.id]) == 0
    capsys.readouterr()
    md = (session.path / "REPORT.md").read_text()
    assert "### 001-correctness · correctness · COULD NOT RUN" in md
    assert "### 002-bench · bench · FAIL" in md
    html = (session.path / "report.html").read_text()
    assert '<span class="error">COULD NOT RUN</span>' in html and '<span class="fail">FAIL</span>' in html
    assert ".fail, .timeout { color: #c62828; } .error { color: #8e24aa; }" in html
