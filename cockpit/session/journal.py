"""`sessions/<ID>/journal.jsonl`: the append-only record of everything a session did.

One JSON object per line, each with `t` (unix seconds) and `type`. Every append is one
`write` + `fsync`, so an SSH drop or a kill -9 loses at most the event being written.
Reading never fails on bad content: a torn last line, garbage lines and an empty file are
reported as `JournalProblem`s and skipped. Nothing here ever rewrites the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cockpit.errors import CockpitError
from cockpit.files import RefusedFile, open_file, regular_fd, size_words
from cockpit.session.bounds import MAX_EVENT_BYTES, time_refused
from cockpit.session.inside import confine_session_path
from cockpit.session.journal_numbers import suspect_lines

Event = dict[str, Any]

JOURNAL_NAME = "journal.jsonl"


@dataclass(frozen=True)
class JournalProblem:
    line: int
    kind: Literal["torn", "garbage"]
    excerpt: str
    why: str = ""
    """What is wrong with an event that otherwise reads (session/bounds.py); empty for garbage."""

    def describe(self, path: Path) -> str:
        if self.kind == "torn":
            return f"{path}:{self.line}: torn last line (a write was cut off), skipped: {self.excerpt}"
        if self.why:
            return f"{path}:{self.line}: skipped: {self.why}: {self.excerpt}"
        return f"{path}:{self.line}: not a journal event, skipped: {self.excerpt}"


@dataclass(frozen=True)
class JournalRead:
    events: tuple[Event, ...]
    problems: tuple[JournalProblem, ...]
    end_offset: int
    """Byte offset just past the last complete line: where the next incremental read starts."""
    end_line: int
    """Number of complete lines up to `end_offset`."""


def read_journal(
    path: Path, offset: int = 0, first_line: int = 1, include_tail: bool = True,
    on_event: Callable[[Event], None] | None = None,
) -> JournalRead:
    """Parse the journal from `offset`; a missing file reads as empty.

    `include_tail=False` leaves an unterminated last line for the next incremental read
    (it may be a write still in progress), so no event is ever folded twice. With `on_event`,
    each event is handed over as it is read and none are kept (`events` is empty): a journal of
    hundreds of megabytes is read in chunks, in bounded memory.
    """
    events: list[Event] = []
    sink = on_event if on_event is not None else events.append
    problems: list[JournalProblem] = []
    lines = _Lines(first_line - 1, offset)
    confine_session_path(path)
    try:
        with open_file(path) as f:
            f.seek(offset)
            while chunk := f.read(CHUNK):
                if complete := lines.feed(chunk, problems):
                    lines.number = _parse_lines(complete, lines.number, sink, problems)
    except RefusedFile:
        raise
    except FileNotFoundError:
        return JournalRead((), (), offset, first_line - 1)
    except OSError as exc:
        raise CockpitError(f"{path}: cannot read the journal ({exc.strerror})") from exc
    _last_line(lines, include_tail, sink, problems)
    return JournalRead(tuple(events), tuple(problems), lines.end_offset, lines.number)


def _last_line(lines: _Lines, include_tail: bool, sink: Callable[[Event], None],
               problems: list[JournalProblem]) -> None:
    """The journal's end: a line too long to hold is a problem (and read past, for good, even
    while it is being written); an unterminated last line is a write that was cut off, unless it
    happens to parse."""
    tail = lines.tail
    if lines.skipping:
        lines.number += 1
        problems.append(_too_long(lines.number, lines.skipping, lines.skipped))
        lines.end_offset += lines.skipped
    elif tail.strip():
        event = _as_event(tail)
        if event is None:
            problems.append(JournalProblem(lines.number + 1, "torn", _excerpt(tail)))
        elif include_tail:
            sink(event)


class _Lines:
    """A journal's bytes cut into complete lines, chunk by chunk, never holding more than one
    MAX_EVENT_BYTES line: a longer one is skipped as it streams by (its first bytes kept to name
    it) and becomes a problem once its end is found."""

    def __init__(self, number: int, offset: int) -> None:
        self.number, self.end_offset = number, offset
        """The last complete line's number and the offset just past it."""
        self.tail = b""
        self.skipping = b""
        """The first bytes of a line too long to hold, while its end is sought."""
        self.skipped = 0

    def feed(self, chunk: bytes, problems: list[JournalProblem]) -> list[bytes]:
        """The complete lines this chunk ends (numbered after `number`); a line too long to hold
        that it ends is counted in `number` and named in `problems` instead."""
        if self.skipping:
            end = chunk.find(b"\n")
            if end < 0:
                self.skipped += len(chunk)
                return []
            self.number += 1
            problems.append(_too_long(self.number, self.skipping, self.skipped + end))
            self.end_offset += self.skipped + end + 1
            self.skipping, self.skipped, chunk = b"", 0, chunk[end + 1:]
        data = self.tail + chunk
        complete, newline, self.tail = data.rpartition(b"\n")
        if not newline:
            self.tail = data
        if len(self.tail) > MAX_EVENT_BYTES:
            self.skipping, self.skipped, self.tail = self.tail[:EXCERPT_BYTES], len(self.tail), b""
        if not newline:
            return []
        self.end_offset += len(complete) + 1
        return complete.split(b"\n")


CHUNK = 8 << 20


BATCH = 2048
def _parse_lines(
    lines: list[bytes], number: int, sink: Callable[[Event], None], problems: list[JournalProblem]
) -> int:
    """Parse `lines` (numbered after `number`); returns the last line's number. Plain lines go to
    the JSON decoder a batch at a time, as one array (one C call, not one per line); a line that
    needs a closer look (a long exponent, not one object) goes alone, and so does every line of a
    batch that does not parse whole, so a garbage line is found and skipped as before."""
    for start in range(0, len(lines), BATCH):
        batch = lines[start:start + BATCH]
        first = number + start + 1
        by_line = _parsed_together(batch)
        for i, raw in enumerate(batch):
            if i in by_line:
                _take_value(raw, by_line[i], first + i, sink, problems)
            else:
                _parse_line(raw, first + i, sink, problems)
    return number + len(lines)


def _parsed_together(batch: list[bytes]) -> dict[int, Any]:
    """The plain lines of `batch` (no suspect number, not too long, one object), parsed as one
    JSON array, by index in the batch; none when the array does not parse whole."""
    suspect = suspect_lines(batch)
    plain = [i for i, raw in enumerate(batch)
             if i not in suspect and len(raw) <= MAX_EVENT_BYTES and _one_object(raw)]
    values = _array([batch[i] for i in plain])
    return dict(zip(plain, values, strict=True)) if values is not None else {}


def _take_value(raw: bytes, value: Any, number: int, sink: Callable[[Event], None],
                problems: list[JournalProblem]) -> None:
    """A parsed line: an event to the sink, else (nested too deep, not an event) a problem."""
    event = None if _bracketed(raw) and _too_deep(value) else _event_or_none(value)
    if event is None:
        problems.append(_garbage(number, raw, value))
    else:
        sink(event)


def _one_object(raw: bytes) -> bool:
    raw = raw.strip()
    return raw[:1] == b"{" and raw[-1:] == b"}"


def _array(lines: list[bytes]) -> list[Any] | None:
    """The values of `lines` decoded as one array, or None when that fails or does not give one
    value per line."""
    if not lines:
        return []
    try:
        values = json.loads(b"[" + b",".join(lines) + b"]", parse_constant=_no_constants)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return values if isinstance(values, list) and len(values) == len(lines) else None


def _parse_line(
    raw: bytes, number: int, sink: Callable[[Event], None], problems: list[JournalProblem]
) -> None:
    if not raw.strip():
        return
    if len(raw) > MAX_EVENT_BYTES:
        problems.append(_too_long(number, raw[:EXCERPT_BYTES], len(raw)))
        return
    value = parse_bounded(raw)
    event = _event_or_none(value)
    if event is None:
        problems.append(_garbage(number, raw, value))
    else:
        sink(event)


def _garbage(number: int, raw: bytes, value: Any) -> JournalProblem:
    """The problem of a line that is not an event; why, when it is one in all but its time."""
    why = time_refused(value.get("t")) if isinstance(value, dict) else None
    return JournalProblem(number, "garbage", _excerpt(raw), why or "")


MAX_DEPTH = 32
"""The deepest nesting an event may have: the cockpit writes at most a handful of levels. A line
nested deeper (a hand edit, a corrupted or hostile clone) is skipped and listed, never walked by
the code that folds, exports or draws it (which would die with RecursionError)."""


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range")
    return value


def _short_int(text: str) -> int:
    if len(text.lstrip("-")) >= 300:
        raise ValueError("an integer too long for a float")
    return int(text)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a number the cockpit writes")


def parse_bounded(raw: bytes) -> Any:
    """The JSON value in `raw`, or None: not JSON, NaN/Infinity or a float out of range (a later
    read would overflow), an integer too long to read, or nested too deep.

    The checks cost little: only a text with a 3-digit exponent or a 300-digit number (found by
    byte searches) goes through the slow float check, and only a value with more brackets than
    MAX_DEPTH has its containers walked (a bench result of 57 KB: 2 ms in all)."""
    try:
        if suspect_lines([raw]):
            value = json.loads(raw.decode("utf-8"), parse_float=_finite, parse_int=_short_int,
                               parse_constant=_no_constants)
        else:
            value = json.loads(raw.decode("utf-8"), parse_constant=_no_constants)
    except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None
    return None if _bracketed(raw) and _too_deep(value) else value


def _bracketed(raw: bytes) -> bool:
    """Whether the JSON text `raw` may nest deeper than MAX_DEPTH, with C byte operations only: the
    brackets outside strings, their innermost pairs removed pass after pass (a pass removes one
    level or two, so text that empties within MAX_DEPTH / 2 passes is no deeper than MAX_DEPTH).
    True sends the decoded value to `_too_deep`'s exact walk."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")  # so quotes delimit the strings
    brackets = b"".join(unescaped.split(b'"')[0::2]).translate(None, _NOT_BRACKETS)
    for _ in range(MAX_DEPTH // 2):
        if not brackets:
            return False
        brackets = brackets.replace(b"[]", b"").replace(b"{}", b"")
    return bool(brackets)


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _too_deep(value: Any) -> bool:
    """Whether `value` nests deeper than MAX_DEPTH: its containers walked, without recursion."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > MAX_DEPTH:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, level + 1) for c in children if isinstance(c, (dict, list)))
    return False


def _as_event(raw: bytes) -> Event | None:
    """The event on one line, or None: not bounded JSON (parse_bounded), or not an event."""
    return _event_or_none(parse_bounded(raw))


def _event_or_none(value: Any) -> Event | None:
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("type"), str)
        or isinstance(value.get("t"), bool)
        or not isinstance(value.get("t"), (int, float))
        or time_refused(value["t"]) is not None
    ):
        return None
    return value


EXCERPT_BYTES = 240
"""What a problem shows of a line it skips (at most 60 characters of it)."""


def _too_long(number: int, head: bytes, size: int) -> JournalProblem:
    return JournalProblem(number, "garbage", _excerpt(head), f"a line of {size_words(size)}, over the "
                                                             f"{size_words(MAX_EVENT_BYTES)} an event may be")


def _excerpt(raw: bytes, limit: int = 60) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")


class JournalWriter:
    """Appends events durably. Opened once per process that writes to a session."""

    def __init__(self, path: Path) -> None:
        self.path = confine_session_path(path)
        try:
            self._fd = regular_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except RefusedFile:
            raise
        except OSError as exc:
            raise CockpitError(
                f"{path}: cannot open the journal for writing ({exc.strerror}); "
                "check the sessions folder's permissions and free space"
            ) from exc
        self._seal_torn_tail()

    def _seal_torn_tail(self) -> None:
        # A crash mid-write leaves a line without its newline; end it so our events stay whole.
        size = os.fstat(self._fd).st_size
        if size == 0:
            return
        with open_file(self.path) as f:
            f.seek(size - 1)
            if f.read(1) != b"\n":
                self._write(b"\n")

    def append(self, event: Event) -> None:
        """Write one event as one line; returns once it is on disk."""
        line = json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._write(line.encode("utf-8"))

    def _write(self, data: bytes) -> None:
        try:
            written = os.write(self._fd, data)
            if written != len(data):
                raise OSError(28, "short write (disk full?)")
            os.fsync(self._fd)
        except OSError as exc:
            raise CockpitError(
                f"{self.path}: journal write failed ({exc.strerror}); free disk space or fix "
                "permissions — the cockpit keeps the event and retries"
            ) from exc

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
