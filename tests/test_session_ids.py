"""Sessions are committed and merged through git: two GPU boxes starting "the next" session the
same minute get different ids, a merged sessions/ reads in start-time order, and a session moved
or cloned elsewhere still finds its logs (old journals with absolute paths too)."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path

import pytest

from cockpit.config import Config
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.paths import resolve_stored, stored_path
from cockpit.session.workspace import (
    Workspace,
    create_session,
    list_sessions,
    load_state,
    resolve_session,
)
from cockpit.session.workspace import session_tag as real_session_tag

DAY = 1_795_305_600.0  # 2026-11-22 00:00 UTC


def test_two_machines_the_same_minute_never_clash_and_merge_in_start_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cockpit.session.workspace.session_tag", real_session_tag)
    box_a, box_b, merged = (Workspace(tmp_path / n) for n in ("a", "b", "merged"))
    a1 = create_session(box_a, Config(), "tile the softmax", None, DAY + 9 * 3600 + 5)
    b1 = create_session(box_b, Config(), "tile the softmax", None, DAY + 9 * 3600 + 20)
    a2 = create_session(box_a, Config(), "vectorize K loads", None, DAY + 11 * 3600)
    b2 = create_session(box_b, Config(), "fuse the rescale", None, DAY + 10 * 3600)
    assert a1.id != b1.id and a1.id[:14] == b1.id[:14] == "20261122-0900-"
    assert re.fullmatch(r"20261122-0900-[0-9a-f]{4}-tile-the-softmax", a1.id)
    for ref in (a1, a2, b1, b2):
        shutil.copytree(ref.path, merged.sessions_dir / ref.id)
    assert [r.id for r in list_sessions(merged)] == [a1.id, b1.id, b2.id, a2.id]
    latest = resolve_session(merged, "latest")
    assert latest is not None and latest.id == a2.id


def test_a_drawn_tag_already_taken_this_minute_is_drawn_again(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    draws = itertools.chain(["beef", "beef"], itertools.repeat("cafe"))
    monkeypatch.setattr("cockpit.session.workspace.session_tag", lambda: next(draws))
    first = create_session(ws, Config(), "x", None, DAY)
    second = create_session(ws, Config(), "x", None, DAY + 30)
    assert (first.id, second.id) == ("20261122-0000-beef-x", "20261122-0000-cafe-x")


def test_real_tags_are_four_hex_digits_and_rarely_repeat(monkeypatch: pytest.MonkeyPatch) -> None:
    tags = {real_session_tag() for _ in range(200)}
    assert all(re.fullmatch(r"[0-9a-f]{4}", t) for t in tags)
    assert len(tags) >= 195  # 200 draws from 65,536: a handful of repeats at most


def old_style_session(ws: Workspace, number: int, objective: str, t: float) -> Path:
    """A session as versions before stamped ids made it: NNN-slug, absolute log paths."""
    folder = ws.sessions_dir / f"{number:03d}-{objective.replace(' ', '-')}"
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / "001-env.log").write_text("PASS  python 3.12.3\n")
    writer = JournalWriter(folder / "journal.jsonl")
    writer.append(ev.session_started(t, folder.name, objective, "baseline", (), 0.0))
    old_log = f"/home/someone/kernel-work/sessions/{folder.name}/logs/001-env.log"
    writer.append(ev.gate_started(t + 10, "001-env", "env", ("python3",), old_log, 42))
    writer.append(ev.gate_finished(t + 15, "001-env", "env", "pass", "ok", 5.0, 0, old_log, {}))
    writer.close()
    return folder


def test_old_numbered_sessions_still_read_and_sort_by_their_start(ws: Workspace) -> None:
    new = create_session(ws, Config(), "after the upgrade", None, DAY + 7200)
    old = old_style_session(ws, 7, "before the upgrade", DAY)
    refs = list_sessions(ws)
    assert [r.id for r in refs] == [old.name, new.id]
    by_number = resolve_session(ws, "7")
    assert by_number is not None and by_number.id == old.name
    # the old journal's absolute log path, from another machine, maps onto this workspace
    [run] = load_state(by_number).gate_runs
    assert Path(run.log) == old / "logs" / "001-env.log" and Path(run.log).read_text()


def test_paths_are_stored_relative_and_a_moved_session_still_finds_its_logs(tmp_path: Path) -> None:
    here = tmp_path / "here"
    log = here / "sessions" / "s1" / "logs" / "001-build.log"
    assert stored_path(log, here) == "sessions/s1/logs/001-build.log"
    assert stored_path(Path("/opt/elsewhere/x.log"), here) == "/opt/elsewhere/x.log"
    assert resolve_stored("sessions/s1/logs/001-build.log", tmp_path / "clone") == (
        tmp_path / "clone" / "sessions" / "s1" / "logs" / "001-build.log")
    # an absolute path from before, whose file is gone: mapped by its sessions/<ID>/ tail
    assert resolve_stored("/gone/ws/sessions/s1/results/001-bench.json", tmp_path / "clone") == (
        tmp_path / "clone" / "sessions" / "s1" / "results" / "001-bench.json")


def test_a_session_created_now_journals_no_absolute_path(ws: Workspace) -> None:
    ref = create_session(ws, Config(), "relative paths", None, DAY)
    text = ref.journal.read_text()
    assert str(ws.root) not in text and json.loads(text.splitlines()[0])["id"] == ref.id
