"""Which session `cockpit status` (and the TUI, `cockpit new`, `gate`, `phase`) takes for the open one:
the newest that began as a session and has not ended — when the newest have ended, when two
machines' ids interleave, when folders are merged in later — found without reading every
journal of a workspace of thousands (tmux asks every few seconds)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cockpit import user_cache
from cockpit.cli import main
from cockpit.config import Config
from cockpit.errors import CockpitError
from cockpit.session import events as ev
from cockpit.session import last_open
from cockpit.session.ended import ended_file
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import (
    SessionRef,
    Workspace,
    cannot_open,
    create_session,
    latest_open_session,
    resolve_session,
)

DAY = 1_795_305_600.0  # 2026-11-22 00:00 UTC
HOUR = 3600.0


def session(ws: Workspace, objective: str, t: float, tag: str = "c0de", ended: bool = False) -> SessionRef:
    ref = create_session(ws, Config(), objective, None, t, tag=tag)
    if ended:
        end(ref, t + 60)
    return ref


def end(ref: SessionRef, t: float) -> None:
    writer = JournalWriter(ref.journal)
    writer.append(ev.session_ended(t, "done"))
    writer.close()


def status_of(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> str | None:
    capsys.readouterr()
    assert main(["--workspace", str(ws.root), "status", "--json"]) == 0
    shown: str | None = json.loads(capsys.readouterr().out)["session"]
    return shown


@pytest.fixture
def searched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The journals searched for a `session_ended`, by session folder, as they are searched."""
    from cockpit.session import workspace

    real = workspace.journal_ended
    calls: list[str] = []
    monkeypatch.setattr(user_cache, "SETTLED_S", float("inf"))  # the search is under test: nothing kept of it

    def counted(journal: Path, root: Path) -> bool:
        calls.append(journal.parent.name)
        return real(journal, root)

    monkeypatch.setattr(workspace, "journal_ended", counted)
    return calls


def test_status_shows_the_newest_session_when_it_is_open_and_reads_no_ended_one(
        ws: Workspace, capsys: pytest.CaptureFixture[str], searched: list[str]) -> None:
    for k in range(200):
        session(ws, f"run {k}", DAY + k * HOUR, ended=True)
    newest = session(ws, "the open one", DAY + 200 * HOUR)
    assert status_of(ws, capsys) == newest.id
    assert searched == [newest.id]  # 200 ended ones older than it: none of their journals opened


def test_an_older_open_session_behind_newer_ended_ones_is_found_and_the_ended_are_asked_once(
        ws: Workspace, capsys: pytest.CaptureFixture[str], searched: list[str]) -> None:
    old_open = session(ws, "left open last week", DAY)
    ended = [session(ws, f"teammate run {k}", DAY + (k + 1) * HOUR, ended=True) for k in range(50)]
    assert status_of(ws, capsys) == old_open.id
    assert set(searched) == {old_open.id, *(r.id for r in ended)}
    searched.clear()
    assert status_of(ws, capsys) == old_open.id
    assert searched == [ended[-1].id, old_open.id]  # the newest minute is always asked; the rest known
    end(old_open, DAY + 60 * HOUR)
    assert status_of(ws, capsys) is None  # it ended: no open session, whatever was kept of the others


def test_a_session_opened_or_merged_in_after_the_ended_ones_were_kept_is_found(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    for k in range(20):
        session(ws, f"run {k}", DAY + (k + 10) * HOUR, ended=True)
    assert status_of(ws, capsys) is None
    merged = session(ws, "pulled from the other box", DAY, tag="beef")  # older than every kept one
    assert status_of(ws, capsys) == merged.id
    newer = session(ws, "started here now", DAY + 40 * HOUR)
    assert status_of(ws, capsys) == newer.id


def test_two_machines_sessions_of_one_minute_are_ordered_by_their_start_not_their_tags(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    later = session(ws, "tile the softmax", DAY + 9 * HOUR + 50, tag="0000")
    earlier = session(ws, "tile the softmax", DAY + 9 * HOUR + 5, tag="ffff")
    assert earlier.id > later.id and earlier.id[:13] == later.id[:13]  # the name sorts it last
    assert status_of(ws, capsys) == later.id


def test_interleaved_ids_of_two_machines_the_newest_ended_the_next_open(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    session(ws, "box a at nine", DAY + 9 * HOUR, tag="aaaa")
    b = session(ws, "box b at ten", DAY + 10 * HOUR, tag="bbbb")
    session(ws, "box a at eleven", DAY + 11 * HOUR, tag="aaaa", ended=True)
    session(ws, "box b at eleven", DAY + 11 * HOUR + 30, tag="bbbb", ended=True)
    assert status_of(ws, capsys) == b.id


def test_old_numbered_sessions_take_their_place_by_start(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    stamped = session(ws, "after the upgrade", DAY, ended=True)
    folder = ws.sessions_dir / "007-before-the-upgrade"
    folder.mkdir()
    writer = JournalWriter(folder / "journal.jsonl")
    writer.append(ev.session_started(DAY - HOUR, folder.name, "before the upgrade", "baseline", (), 0.0))
    writer.close()
    assert status_of(ws, capsys) == folder.name  # the stamped one ended: the numbered one is open
    reopened = session(ws, "the next one", DAY + HOUR)
    assert status_of(ws, capsys) == reopened.id
    ref = resolve_session(ws, "7")
    assert ref is not None and ref.id == folder.name
    with pytest.raises(CockpitError, match="no session '20261122'"):
        resolve_session(ws, stamped.id[:8])  # a stamped id's date is no session number


def test_a_damaged_list_of_ended_sessions_is_read_past(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    open_one = session(ws, "still open", DAY)
    session(ws, "ended", DAY + HOUR, ended=True)
    path = ended_file(ws.sessions_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff\xfe not a list\n" + open_one.id.encode() + b"\n")
    assert status_of(ws, capsys) == open_one.id
    path.write_text(f"cockpit ended sessions v1 {ws.root / 'elsewhere'}\n{open_one.id}\n")  # another folder's
    assert status_of(ws, capsys) == open_one.id


def test_a_fifo_where_the_newest_journal_should_be_hangs_nothing_and_is_named(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    open_one = session(ws, "still open", DAY)
    odd = session(ws, "someone's pipe", DAY + HOUR)
    odd.journal.unlink()
    os.mkfifo(odd.journal)
    assert latest_open_session(ws) == open_one
    refused = cannot_open(odd)
    assert refused is not None and "is a FIFO, not a file" in refused.why
    assert status_of(ws, capsys) == open_one.id


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every sessions folder reads as settled, however recently it changed (a test runs in less
    than user_cache.SETTLED_S): what the search finds is kept."""
    monkeypatch.setattr(user_cache, "SETTLED_S", -1e9)


@pytest.fixture
def unlisted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How often the sessions folder is listed."""
    from cockpit.session import workspace

    listed: list[int] = []
    real = workspace.os.listdir

    def counted(path: object) -> list[str]:
        listed.append(1)
        return real(path)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(workspace.os, "listdir", counted)
    return listed


def test_tmux_asking_again_finds_the_kept_open_session_without_listing_the_folder(
        ws: Workspace, capsys: pytest.CaptureFixture[str], settled: None, unlisted: list[int]) -> None:
    for k in range(30):
        session(ws, f"run {k}", DAY + k * HOUR, ended=True)
    open_one = session(ws, "the open one", DAY + 30 * HOUR)
    assert status_of(ws, capsys) == open_one.id and len(unlisted) == 1
    assert status_of(ws, capsys) == open_one.id and status_of(ws, capsys) == open_one.id
    assert len(unlisted) == 1  # asked twice more: the folder was not listed again


def test_a_session_made_since_or_the_kept_one_ending_is_seen_at_once(
        ws: Workspace, capsys: pytest.CaptureFixture[str], settled: None) -> None:
    older = session(ws, "left open", DAY)
    kept = session(ws, "the open one", DAY + HOUR)
    assert status_of(ws, capsys) == kept.id
    end(kept, DAY + 2 * HOUR)  # its folder's journal changed, the sessions folder did not
    assert status_of(ws, capsys) == older.id
    newer = session(ws, "started now", DAY + 3 * HOUR)  # the sessions folder changed
    assert status_of(ws, capsys) == newer.id
    end(newer, DAY + 4 * HOUR)
    end(older, DAY + 4 * HOUR)
    assert status_of(ws, capsys) is None


def test_a_folder_whose_times_were_put_back_is_listed_again(
        ws: Workspace, capsys: pytest.CaptureFixture[str], settled: None) -> None:
    kept = session(ws, "the open one", DAY)
    assert status_of(ws, capsys) == kept.id
    before = os.stat(ws.sessions_dir)
    copied = session(ws, "copied in by rsync -a", DAY + HOUR, tag="beef")
    os.utime(ws.sessions_dir, ns=(before.st_atime_ns, before.st_mtime_ns))  # its mtime as it was: not its ctime
    assert status_of(ws, capsys) == copied.id


def test_a_folder_changed_just_before_it_was_listed_is_not_kept(ws: Workspace) -> None:
    ref = session(ws, "the open one", DAY)
    look = last_open.folder_look(ws.sessions_dir)
    changed_t = os.stat(ws.sessions_dir).st_ctime
    last_open.keep_open(ws.sessions_dir, ref.id, look, changed_t + 0.5)  # a coarse clock: a session made now could
    assert last_open.kept_open(ws.sessions_dir) is None                 # keep this mtime
    last_open.keep_open(ws.sessions_dir, ref.id, look, changed_t + user_cache.SETTLED_S + 0.1)
    assert last_open.kept_open(ws.sessions_dir) == ref.id


def test_what_is_kept_is_read_with_suspicion(
        ws: Workspace, capsys: pytest.CaptureFixture[str], settled: None) -> None:
    older = session(ws, "open", DAY)
    newest = session(ws, "open and newest", DAY + HOUR)
    assert status_of(ws, capsys) == newest.id
    kept = next((Path(os.environ["XDG_CACHE_HOME"]) / "cockpit" / "open").iterdir())
    title, look, _ = kept.read_text().splitlines()
    for forged in ("../../elsewhere", older.id + "/..", "not-a-session"):
        kept.write_text(f"{title}\n{look}\n{forged}\n")
        assert status_of(ws, capsys) == newest.id  # not a session name: the folder is listed
    kept.write_bytes(b"\xff\xfe damaged\n")
    assert status_of(ws, capsys) == newest.id
