"""`[gates] log_max_mb` for a log its child writes itself. Past the limit, the part between the
log's first half and what the reader has passed goes back to the disk as the log grows (a hole
punched in the file: its length still grows, its blocks do not); when the run ends the file is
closed up to its first half, a line saying how much was cut, and its last half. A runaway print
fills neither the disk nor the reader of its log.

Where the file system cannot punch holes the log is still closed up at the end, but holds the
whole output until then.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

_MIB = 1024 * 1024
_PUNCH_HOLE_KEEP_SIZE = 0x02 | 0x01  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE (linux/falloc.h)
_LOOK = 64 * 1024  # how far a cut looks for a line break to fall on
_NOTE_ROOM = 256  # the line that says what was cut fits in this


class LogCap:
    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.head = max(1, max_bytes // 2)
        self.tail = max(1, max_bytes - max_bytes // 2)
        self._punched_to = 0
        self._punch: Callable[[int, int, int], bool] | None = None
        self._can_punch = True

    def trim(self, size: int, read_to: int) -> None:
        """While the child runs: hand back the blocks between the head and both the tail and what
        the reader has read (`read_to`), once the log is over its limit."""
        if size <= self.max_bytes or not self._can_punch:
            return
        if self._punch is None:
            self._punch = _hole_puncher()
            if self._punch is None:
                self._can_punch = False
                return
        start = max(self._punched_to, self.head)
        with contextlib.suppress(OSError):
            block = os.stat(self.path).st_blksize or 4096
            start = -(-start // block) * block
            end = min(read_to, size - self.tail) // block * block
            if end - start >= _MIB:
                fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
                try:
                    if not self._punch(fd, start, end):
                        self._can_punch = False  # not on this file system: closed up at the end only
                        return
                finally:
                    os.close(fd)
                self._punched_to = end

    def close_up(self) -> None:
        """Once nothing writes the log any more: its head, a line saying what was cut, its tail,
        each cut on a line break."""
        with open(self.path, "r+b") as f:
            fd = f.fileno()
            size = os.fstat(fd).st_size
            if size <= self.max_bytes:
                return
            before = os.pread(fd, min(_LOOK, self.head), self.head - min(_LOOK, self.head))
            head_end = self.head - len(before) + before.rfind(b"\n") + 1 if b"\n" in before else self.head
            tail_start = _line_start(fd, size - self.tail)
            if tail_start < head_end + _NOTE_ROOM:  # barely over the limit: cut room for the note
                tail_start = _line_start(fd, head_end + _NOTE_ROOM)
            note = (f"# [cockpit: {(tail_start - head_end) / _MIB:.1f} MB of output cut here: the log keeps "
                    f"its first and last {self.max_bytes / _MIB / 2:g} MB ([gates] log_max_mb = "
                    f"{self.max_bytes / _MIB:g})]\n").encode()
            os.pwrite(fd, note, head_end)
            to, at = head_end + len(note), tail_start
            while at < size:  # moved down in pieces: the tail lies past where it goes
                chunk = os.pread(fd, min(_MIB, size - at), at)
                if not chunk:
                    break
                os.pwrite(fd, chunk, to)
                to, at = to + len(chunk), at + len(chunk)
            os.ftruncate(fd, to)


def _line_start(fd: int, at: int) -> int:
    """Where the first line that starts at or after `at` starts (`at` itself if none is near)."""
    after = os.pread(fd, _LOOK, at)
    return at + after.find(b"\n") + 1 if b"\n" in after else at


def _hole_puncher() -> Callable[[int, int, int], bool] | None:
    """fallocate(2) from the C library the interpreter is linked to (ctypes loads only for a log
    over its limit); None where there is none (not Linux)."""
    try:
        import ctypes

        fallocate = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return None
    fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    fallocate.restype = ctypes.c_int

    def punch(fd: int, start: int, end: int) -> bool:
        return bool(fallocate(fd, _PUNCH_HOLE_KEEP_SIZE, start, end - start) == 0)

    return punch
