"""The env gate's result in an 80x24 tmux pane: its headline whole (wrapped at words, never cut
with "…") and the first failing or warning check's fix on one row of its own, never broken, so it
is copied whole. A new user saw the H200's `export LD_LIBRARY_PATH=...` in pieces of 34 cells (25
in the zoom, between other columns' cells), and a no-GPU box's headline cut at the pane's edge."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from textual.containers import ScrollableContainer
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Static

from cockpit.config import Config
from cockpit.gates.env.gate import env_argv, env_verdict, read_env_result
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import Workspace, create_session
from cockpit.ui.app import CockpitApp
from cockpit.ui.pictures.screenshot import screenshot_app
from cockpit.ui.pictures.screenshot_busy import busy_app
from cockpit.ui.widgets.fix_line import FixLine
from tests.no_gpu import no_gpu_env

from .conftest import T0

SIZE = (80, 24)
H200_FIX = 'export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/torch/lib:$LD_LIBRARY_PATH"'


def drawn(widget: Widget) -> list[str]:
    """The rows a widget draws, as text."""
    width, height = widget.size
    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, width, height))]


def fix_row(app: CockpitApp) -> Static:
    return app.gate_detail.query_one(FixLine).query_one("#fix-line", Static)


async def shown(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    pilot.app.clear_notifications()
    await pilot.pause()


def test_snapshot_of_the_recorded_env_result_in_an_80x24_pane(snap_compare, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The recorded H200 session's env result: its headline whole, the fix on a row of its own."""
    assert snap_compare(busy_app(tmp_path), terminal_size=SIZE, run_before=shown)


async def test_the_recorded_h200_fix_is_one_row_that_a_double_click_copies_whole(tmp_path: Path) -> None:
    app = busy_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot)
        detail = app.gate_detail
        assert drawn(detail.query_one("#gate-head", Static)) == ["! WARN 3 warnings, 13 passed"]
        fix = detail.query_one(FixLine)
        assert drawn(fix.query_one("#fix-what", Static)) == ["fix first · torch_lib_on_loader_path"]
        row = fix_row(app)
        assert len(H200_FIX) > detail.content_region.width  # longer than the pane: it scrolls sideways
        assert row.size.height == 1 and drawn(row) == [H200_FIX]
        assert fix.query_one(ScrollableContainer).max_scroll_x == len(H200_FIX) - detail.content_region.width
        await pilot.click(row, times=2)
        await pilot.pause()
        assert app.screen.get_selected_text() == H200_FIX
        detail.query_one("#gate-result").focus()  # ctrl+f zooms the pane: the fix stays one row above
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert detail.zoomed and fix.display and row.size.height == 1 and drawn(row) == [H200_FIX]


def probed_without_a_gpu(workspace: Path) -> Path:
    """The env probe's real result on this box seen as one with no GPU and a CPU-only torch."""
    out = workspace / "env.json"
    subprocess.run(env_argv(sys.executable, out, workspace), capture_output=True, text=True, timeout=120,
                   env=no_gpu_env(), cwd=workspace)
    return out


async def test_a_box_without_a_gpu_shows_its_whole_headline_and_the_torch_install_line_in_one_row(
        tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws.sessions_dir.mkdir(parents=True)
    out = probed_without_a_gpu(tmp_path)
    status, summary = env_verdict(read_env_result(out))
    ref = create_session(ws, Config(), "bring up a new box", "optimize", T0)
    log = ref.path / "logs" / "001-env.log"
    log.parent.mkdir()
    log.write_text("env: the probe's output\n")
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(T0 + 5, "001-env", "env", ("python3", "env_probe.py"), str(log), 4242))
    writer.append(ev.gate_finished(T0 + 9, "001-env", "env", status, summary, 4.0, 1, str(log),
                                   json.loads(out.read_text())))
    writer.close()
    app = screenshot_app(ws, Config(), ref, T0 + 60)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.set_focus(app.gate_panel)
        await pilot.press("down", "up")  # env selected again, in the pane as laid out
        await shown(pilot)
        rows = drawn(app.gate_detail.query_one("#gate-head", Static))
        head = rows[:next((i for i, row in enumerate(rows) if row.startswith("⚑")), len(rows))]
        said = f"✗ FAIL {summary}"
        assert status == "fail" and len(said) > app.gate_detail.content_region.width
        assert len(head) > 1 and " ".join(r.strip() for r in head) == said  # whole, each row ends at a word
        assert "…" not in "".join(head)
        torch = next(c for c in read_env_result(out) if c.name == "torch")
        assert "pip install torch --index-url https://download.pytorch.org/whl/cu" in torch.fix
        assert drawn(fix_row(app)) == [torch.fix]


def test_the_env_checks_in_the_zoomed_80x24_pane_are_cards_each_path_whole_on_its_row() -> None:
    """Zoomed at 80x24 (75 cells) the table's value column was 17 cells: each path in pieces."""
    from rich.console import Console

    from cockpit.gates.catalog import read_result
    from cockpit.ui.widgets.gate_results import render_result

    env = json.loads((Path(__file__).parent / "fixtures" / "gpu" / "env-result-h200.json").read_text())
    console = Console(width=75, record=True, color_system=None)
    console.print(render_result("env", read_result("env", env)))
    text = console.export_text()
    assert "value /opt/torch/.venv/lib/python3.12/site-packages/torch/lib not in" in text
    assert "value 1.13.2.git.kitware.jobserver-pipe-1 (/opt/torch/.venv/bin/ninja)" in text
