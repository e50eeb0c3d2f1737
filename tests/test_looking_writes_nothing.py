"""Looking writes nothing: opening the cockpit on a workspace, or asking `cockpit status` about it,
leaves the workspace as it was until the user starts something. What the cockpit keeps to be
quick next time (which Python has the CUDA torch, the saved folds) goes to the user's cache; the
team's example sessions ask before a session lands among them, as the cockpit's own clone does."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.cli.parser import build_parser
from cockpit.cli.tui import tui_app
from cockpit.gates.interpreter import forget
from cockpit.session.workspace import Workspace, list_sessions
from cockpit.ui.screens.dialogs import ConfirmDialog, NewSessionDialog
from cockpit.user_cache import user_cache
from tests.trusted import trust

ROOT = Path(__file__).resolve().parent.parent
DEADLINE_S = 30.0

Tree = dict[str, tuple[int, int]]


def tree(root: Path) -> Tree:
    """Every file and folder under `root` with its size and modification time: a file written,
    created or removed anywhere changes it."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def fake_python(folder: Path) -> Path:
    """An interpreter that answers the gates' "which torch?" at once, as a CUDA torch would."""
    exe = folder / "python-with-torch"
    exe.write_text("#!/bin/sh\necho 2.5.0 12.4 3.11.9\n")
    exe.chmod(0o755)
    return exe


def fresh_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "my-kernels"
    ws.mkdir()
    assert main(["init", str(ws), "--workload", "triton"]) == 0
    return ws


def example_sessions(tmp_path: Path) -> Path:
    ws = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", ws)
    return ws


async def until(pilot, holds: Callable[[], bool]) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + DEADLINE_S
    while not holds():
        assert time.monotonic() < deadline, "the state never came"
        await pilot.pause()


@pytest.mark.parametrize("made", [fresh_workspace, example_sessions])
async def test_opening_the_cockpit_and_its_status_write_nothing_into_the_workspace(
        tmp_path: Path, made: Callable[[Path], Path]) -> None:
    ws = made(tmp_path)
    with (ws / "cockpit.toml").open("a", encoding="utf-8") as f:
        f.write(f'\n[gates]\npython = "{fake_python(tmp_path)}"\n')
    trust(ws)  # the user's own edit, trusted as `cockpit trust allow` does (kept outside the workspace)
    forget()
    before = tree(ws)
    app = tui_app(build_parser().parse_args(["--workspace", str(ws)]))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, NewSessionDialog))  # Enter would start one
        # what the terminal app does in a thread as it opens: find the gates' Python, asking it
        await asyncio.to_thread(app.gates.find_python)
        await pilot.press("escape")  # looked, started nothing
        await until(pilot, lambda: app.screen is app.main_screen)
    assert tree(ws) == before
    assert (user_cache("pythons", ws) / "pythons.json").is_file()  # asked once, kept outside it
    assert main(["--workspace", str(ws), "status"]) == 0
    assert main(["--workspace", str(ws), "status", "--json"]) == 0
    assert tree(ws) == before


def test_status_on_an_open_session_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = fresh_workspace(tmp_path)
    assert main(["--workspace", str(ws), "new", "fuse the bias add"]) == 0  # the user started it
    before = tree(ws)
    capsys.readouterr()
    assert main(["--workspace", str(ws), "status"]) == 0
    assert main(["--workspace", str(ws), "status", "--json"]) == 0
    assert "ENVIRONMENT" in capsys.readouterr().out
    assert tree(ws) == before


async def test_the_example_sessions_ask_before_a_new_session_lands_among_them() -> None:
    examples = ROOT / "examples"
    before = [r.id for r in list_sessions(Workspace(examples))]
    app = tui_app(build_parser().parse_args(["--workspace", str(examples)]))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))  # not the form: one Enter away
        said = str(app.screen.query_one("Label").render())
        assert said.startswith("This folder is the cockpit's example sessions")
        assert "cockpit init DIR" in said
        await pilot.press("enter", "n")  # Enter answers nothing; n keeps them the team's
        await until(pilot, lambda: app.screen is app.main_screen)
    assert [r.id for r in list_sessions(Workspace(examples))] == before
