"""What a session's journal says before it is opened: when the session started (its first line),
whether it has ended (a `session_ended` event), or why the folder cannot be opened at all.

Listing sessions asks this of every folder under `sessions/`, which is someone else's input once
committed and cloned: a folder where the journal should be, a FIFO (which would hang a plain
open), a file that is not a cockpit journal. Each gets one line saying what is wrong and what to
do; the TUI and `cockpit export` say the same line.
"""

from __future__ import annotations

import json
import mmap
import os
from dataclasses import dataclass
from pathlib import Path

from cockpit.files import RefusedFile, regular_fd
from cockpit.session import events as ev
from cockpit.session.bounds import MAX_EVENT_BYTES, MAX_FIRST_LINE_BYTES
from cockpit.session.journal import parse_bounded
from cockpit.session.saved_state import saved_end


@dataclass(frozen=True)
class CannotOpen:
    """Why a session folder cannot be opened, in one line that says what to do."""

    why: str
    journal_reads: bool
    """Its journal reads, only its first line is no session's start: a report still says what it holds."""


def journal_start(journal: Path, shown: str) -> float | CannotOpen:
    """When the session started, from the journal's first line; or why it cannot be opened as a
    session (`shown`: how the journal is named to the user)."""
    line = _first_line(journal)
    if isinstance(line, str):
        return CannotOpen(f"{shown} {line}", False)
    try:
        first = json.loads(line)
        if first.get("type") == ev.SESSION_STARTED:
            return float(first["t"])
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    return CannotOpen(f"the first line of {shown} is not a cockpit session's start (cut off mid-write?); "
                      "its files are kept: restore that line to open it", True)


def _first_line(journal: Path) -> bytes | str:
    """The journal's first line, or what is wrong with the journal (said after its name)."""
    try:
        fd = _open_regular(journal)
    except _NotAFile as exc:
        return str(exc)
    except FileNotFoundError:
        return "is missing: the folder is not a cockpit session; put its journal back to open it"
    except OSError as exc:
        return f"cannot be read ({exc.strerror}): fix its permissions to open the session"
    try:
        with open(fd, "rb", closefd=False) as f:
            return f.readline(MAX_FIRST_LINE_BYTES)
    except OSError as exc:
        return f"cannot be read ({exc.strerror}): fix its permissions to open the session"
    finally:
        os.close(fd)


class _NotAFile(OSError):
    """Something other than a regular file where the journal should be."""


def _open_regular(journal: Path) -> int:
    """A descriptor of the journal through the workspace's door (cockpit/files.py: opened without
    blocking, a FIFO in its place never hangs a reader); _NotAFile, saying what is there, when it
    is no regular file."""
    try:
        return regular_fd(journal)
    except RefusedFile as exc:
        if os.path.isdir(journal):
            raise _NotAFile("is a folder where the session's journal should be; its files are kept: put "
                            "the journal file back in its place to open it") from None
        raise _NotAFile(f"is {exc.strerror}") from None


def journal_ended(journal: Path, workspace: Path) -> bool:
    """Whether the journal holds a `session_ended` event: a saved fold says so for what it read,
    the bytes after it are searched (a 280 MB journal in a fraction of a second, never folded)."""
    ended, start = saved_end(journal, workspace)
    if ended:
        return True
    try:
        fd = _open_regular(journal)
    except OSError:  # missing, unreadable, or no file: no end to find
        return False
    try:
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
            return _holds_an_end(data, start)
    except (OSError, ValueError):  # unreadable, or empty (mmap refuses 0 bytes)
        return False
    finally:
        os.close(fd)


_END_MARK = f'"{ev.SESSION_ENDED}"'.encode()


def _holds_an_end(data: mmap.mmap, start: int) -> bool:
    """Whether a line from `start` (a line's start) on is a `session_ended` event. Each line that
    holds the word is parsed once however often it holds it, and one longer than an event may be
    (session/bounds.py: the journal's reader skips it too) is never copied or parsed: a crafted
    journal costs one pass over its bytes, not a parse per copy of the word."""
    pos = start
    while (at := data.find(_END_MARK, pos)) >= 0:
        low = max(pos, at - MAX_EVENT_BYTES - 1)
        newline = data.rfind(b"\n", low, at)
        line_start = newline + 1 if newline >= 0 else low
        line_end = data.find(b"\n", at)
        line_end = len(data) if line_end < 0 else line_end
        fits = (newline >= 0 or low == pos) and line_end - line_start <= MAX_EVENT_BYTES
        if fits and isinstance(event := parse_bounded(data[line_start:line_end]), dict) \
                and event.get("type") == ev.SESSION_ENDED:
            return True
        pos = line_end + 1
    return False
