"""The journal keeps everything the engineer did, even across crashes and bad lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cockpit.errors import CockpitError
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter, read_journal
from cockpit.session.live import LiveSession
from cockpit.session.workspace import SessionRef


def test_each_event_is_one_line_written_and_fsynced(tmp_path: Path, monkeypatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    path = tmp_path / "journal.jsonl"
    writer = JournalWriter(path)
    writer.append(ev.note(1.0, "first"))
    writer.append(ev.note(2.0, "second, with ünïcode and [red]markup[/red]"))
    writer.close()
    assert len(synced) == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["text"] for line in lines] == [
        "first", "second, with ünïcode and [red]markup[/red]"]


def test_a_torn_last_line_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b'{"t":1,"type":"note","text":"kept"}\n{"t":2,"type":"no')
    read = read_journal(path)
    assert [e["text"] for e in read.events] == ["kept"]
    assert [(p.line, p.kind) for p in read.problems] == [(2, "torn")]
    assert "torn last line" in read.problems[0].describe(path)


def test_garbage_lines_are_reported_with_their_line_number(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(
        b'{"t":1,"type":"note","text":"a"}\n'
        b"\xff\xfe binary garbage\n"
        b"[1, 2, 3]\n"
        b'{"type":"note"}\n'
        b"\n"
        b'{"t":5,"type":"note","text":"b"}\n'
    )
    read = read_journal(path)
    assert [e["text"] for e in read.events] == ["a", "b"]
    assert [(p.line, p.kind) for p in read.problems] == [(2, "garbage"), (3, "garbage"),
                                                         (4, "garbage")]


def test_an_empty_or_missing_journal_reads_as_no_events(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert read_journal(empty).events == ()
    assert read_journal(tmp_path / "missing.jsonl").events == ()


def test_appending_after_a_torn_line_never_rewrites_it(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    original = b'{"t":1,"type":"note","text":"a"}\n{"t":2,"type":"not'
    path.write_bytes(original)
    writer = JournalWriter(path)
    writer.append(ev.note(3.0, "after the crash"))
    writer.close()
    data = path.read_bytes()
    assert data.startswith(original)  # the torn bytes are still there, untouched
    read = read_journal(path)
    assert [e["text"] for e in read.events] == ["a", "after the crash"]
    assert [p.kind for p in read.problems] == ["garbage"]


def test_reading_never_changes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    content = b'garbage\n{"t":1,"type":"note","text":"a"}\n{"t":2,'
    path.write_bytes(content)
    read_journal(path)
    assert path.read_bytes() == content


def test_a_live_session_sees_events_another_process_appended(session: SessionRef) -> None:
    live = LiveSession(session)
    other = JournalWriter(session.journal)  # e.g. a headless `cockpit gate` in another pane
    other.append(ev.status(2e9, "from elsewhere", auto=False))
    other.close()
    assert live.refresh() is True
    assert live.state.statuses[-1].text == "from elsewhere"
    assert live.refresh() is False


def test_a_live_session_folds_a_partly_written_line_once_complete(session: SessionRef) -> None:
    live = LiveSession(session)
    line = json.dumps(ev.note(2e9, "slow writer")).encode()
    with session.journal.open("ab") as f:
        f.write(line[:10])
    live.refresh()
    assert live.state.notes == ()
    with session.journal.open("ab") as f:
        f.write(line[10:] + b"\n")
    live.refresh()
    assert [n.text for n in live.state.notes] == ["slow writer"]


def test_a_failed_write_keeps_the_event_and_retries(session: SessionRef, monkeypatch) -> None:
    live = LiveSession(session)
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    with pytest.raises(CockpitError, match="No space left"):
        live.append([ev.note(2e9, "precious words")])
    assert live.unsaved == 1
    monkeypatch.setattr(os, "write", real_write)
    live.append([ev.note(2e9 + 1, "next")])
    assert [n.text for n in live.state.notes] == ["precious words", "next"]
    assert live.unsaved == 0
