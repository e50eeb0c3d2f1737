"""`sessions/<ID>/journal.jsonl`: the append-only record of everything a session did.

One JSON object per line, each with `t` (unix seconds) and `type`. Every append is one
`write` + `fsync`, so an SSH drop or a kill -9 loses at most the event being written.
Reading never fails on bad content: a torn last line, garbage lines and an empty file are
reported as `JournalProblem`s and skipped. Nothing here ever rewrites the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cockpit.errors import CockpitError

Event = dict[str, Any]

JOURNAL_NAME = "journal.jsonl"


@dataclass(frozen=True)
class JournalProblem:
    line: int
    kind: Literal["torn", "garbage"]
    excerpt: str

    def describe(self, path: Path) -> str:
        if self.kind == "torn":
            return f"{path}:{self.line}: torn last line (a write was cut off), skipped: {self.excerpt}"
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
    path: Path, offset: int = 0, first_line: int = 1, include_tail: bool = True
) -> JournalRead:
    """Parse the journal from `offset`; a missing file reads as empty.

    `include_tail=False` leaves an unterminated last line for the next incremental read
    (it may be a write still in progress), so no event is ever folded twice.
    """
    try:
        with path.open("rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return JournalRead((), (), offset, first_line - 1)
    except OSError as exc:
        raise CockpitError(f"{path}: cannot read the journal ({exc.strerror})") from exc

    events: list[Event] = []
    problems: list[JournalProblem] = []
    complete, _, tail = data.rpartition(b"\n")
    lines = complete.split(b"\n") if complete or data.startswith(b"\n") else []
    number = first_line - 1
    for number, raw in enumerate(lines, start=first_line):
        _parse_line(raw, number, events, problems)
    end_line = first_line - 1 + len(lines)
    end_offset = offset + (len(complete) + 1 if lines else 0)
    if tail.strip():
        # An unterminated last line is a write that was cut off, unless it happens to parse.
        event = _as_event(tail)
        if event is None:
            problems.append(JournalProblem(end_line + 1, "torn", _excerpt(tail)))
        elif include_tail:
            events.append(event)
    return JournalRead(tuple(events), tuple(problems), end_offset, end_line)


def _parse_line(
    raw: bytes, number: int, events: list[Event], problems: list[JournalProblem]
) -> None:
    if not raw.strip():
        return
    event = _as_event(raw)
    if event is None:
        problems.append(JournalProblem(number, "garbage", _excerpt(raw)))
    else:
        events.append(event)


MAX_DEPTH = 32
"""The deepest nesting an event may have: the cockpit writes at most a handful of levels. A line
nested deeper (a hand edit, a corrupted or hostile clone) is skipped and listed, never walked by
the code that folds, exports or draws it (which would die with RecursionError)."""


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range")
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a number the cockpit writes")


def _depth(value: Any) -> int:
    """How deeply `value` nests, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def _as_event(raw: bytes) -> Event | None:
    """The event on one line, or None: not JSON, not an event, NaN/Infinity or a float out of
    range (a later read would overflow), an integer too long to read, or nested too deep."""
    try:
        value = json.loads(raw.decode("utf-8"), parse_float=_finite, parse_constant=_no_constants)
    except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None
    if _depth(value) > MAX_DEPTH:
        return None
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("type"), str)
        or isinstance(value.get("t"), bool)
        or not isinstance(value.get("t"), (int, float))
    ):
        return None
    return value


def _excerpt(raw: bytes, limit: int = 60) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")


class JournalWriter:
    """Appends events durably. Opened once per process that writes to a session."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
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
        with self.path.open("rb") as f:
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
