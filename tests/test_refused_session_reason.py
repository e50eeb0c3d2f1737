"""A session folder the cockpit will not open is named with the true reason, the same in the TUI as
`cockpit export` says it: a journal that is a symlink out of the workspace, a folder where the
journal should be, a FIFO — not "its first line does not read" for all of them."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import Config
from cockpit.session.workspace import SessionRef, Workspace, create_session


def symlink_out(ref: SessionRef, outside: Path) -> None:
    target = outside / "their.jsonl"
    ref.journal.rename(target)
    ref.journal.symlink_to(target)


def folder_in_place(ref: SessionRef, outside: Path) -> None:
    ref.journal.rename(outside / "journal.jsonl")
    ref.journal.mkdir()


def fifo_in_place(ref: SessionRef, outside: Path) -> None:
    ref.journal.unlink()
    os.mkfifo(ref.journal)


async def toasts_of(ws: Workspace, clock: object) -> list[str]:
    """What the TUI, opened on the workspace with no session to resume, says in its first 30 s."""
    from cockpit.ui.app import CockpitApp

    app = CockpitApp(ws, Config(), None, clock=clock, tick_s=3600, typing_gap_s=0)
    toasts: list[str] = []
    app.notify = lambda message, **kw: toasts.append(message)  # type: ignore[method-assign]
    async with app.run_test(size=(140, 40)) as pilot:
        deadline = time.monotonic() + 30
        while not any("cannot be opened" in t for t in toasts) and time.monotonic() < deadline:
            await pilot.pause()
            await asyncio.sleep(0.01)
    return toasts


@pytest.mark.parametrize("break_it", [symlink_out, folder_in_place, fifo_in_place])
async def test_the_tui_says_why_a_session_cannot_be_opened_as_export_does(
        ws: Workspace, clock: object, tmp_path_factory: pytest.TempPathFactory,
        capsys: pytest.CaptureFixture[str], break_it: Callable[[SessionRef, Path], None]) -> None:
    ref = create_session(ws, Config(), "someone else's clone", "optimize", 1_795_300_000.0)
    break_it(ref, tmp_path_factory.mktemp("outside"))
    capsys.readouterr()
    assert main(["--workspace", str(ws.root), "export", ref.id]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and said.startswith("cockpit: ")
    reason = said.removeprefix("cockpit: ").strip()
    assert "first line" not in reason and f"sessions/{ref.id}/journal.jsonl" in reason

    named = [t for t in await toasts_of(ws, clock) if ref.id in t]
    assert named == [f"Session {ref.id} cannot be opened: {reason}"]


async def test_a_cut_first_line_is_named_as_such_and_export_still_reports_it(
        ws: Workspace, clock: object, capsys: pytest.CaptureFixture[str]) -> None:
    ref = create_session(ws, Config(), "cut in its first line", "optimize", 1_795_300_000.0)
    first, *rest = ref.journal.read_bytes().split(b"\n")
    ref.journal.write_bytes(b"\n".join([first[:40], *rest]))
    assert main(["--workspace", str(ws.root), "export", ref.id]) == 0  # what it holds is still reported
    [toast] = [t for t in await toasts_of(ws, clock) if ref.id in t]
    assert f"the first line of sessions/{ref.id}/journal.jsonl is not a cockpit session's start" in toast
    assert "restore that line to open it" in toast
