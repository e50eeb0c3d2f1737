"""`cockpit status` carries the last status's "now:" (issue 36): a tmux status bar shows what the
engineer said they are doing, with how long ago; the engineer's own stands until they post another,
a gate's until the next automatic status."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.cli.session import last_now, now_of
from cockpit.config import Config
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.state import StatusEntry
from cockpit.session.workspace import Workspace, create_session

BASE = "1:29 elapsed · ENVIRONMENT 1:29/10:00"


def test_the_now_part_of_a_status_line() -> None:
    assert now_of(f"{BASE} · now: ncu on flash_fwd, waiting") == "ncu on flash_fwd, waiting"
    assert now_of(f"{BASE} · now: bench 40% · ~2:00 left") == "bench 40%"
    assert now_of(f"{BASE} · 8:30 left in phase") is None


def test_which_now_still_stands() -> None:
    mine = StatusEntry(10.0, f"{BASE} · now: try stages", auto=False)
    gate = StatusEntry(20.0, f"{BASE} · now: bench 40% · ~2:00 left", auto=True)
    plain_auto = StatusEntry(30.0, f"{BASE} · 8:30 left in phase", auto=True)
    plain_mine = StatusEntry(40.0, BASE, auto=False)
    assert last_now([mine, plain_auto]) == (mine, "try stages")  # mine stands through automatic ones
    assert last_now([mine, gate]) == (gate, "bench 40%")
    assert last_now([mine, gate, plain_auto]) == (mine, "try stages")  # the gate's is over
    assert last_now([mine, plain_mine]) is None  # I said nothing is being done now
    assert last_now([]) is None


def test_cockpit_status_prints_the_last_now(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = Workspace(tmp_path)
    ref = create_session(ws, Config(), "try stages", "optimize", time.time() - 1000)
    JournalWriter(ref.journal).append(ev.status(time.time() - 720, f"{BASE} · now: ncu on flash_fwd", False))
    assert main(["--workspace", str(tmp_path), "status"]) == 0
    line = capsys.readouterr().out.strip()
    assert "\n" not in line and line.endswith(" · now: ncu on flash_fwd (12m ago)")
    assert main(["--workspace", str(tmp_path), "status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["line"].endswith("now: ncu on flash_fwd (12m ago)")
    assert data["now"]["text"] == "ncu on flash_fwd" and data["now"]["auto"] is False
