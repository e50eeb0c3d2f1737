"""Following a gate's log while its child writes it. The child writes the file itself, so no byte
of its output passes through the cockpit on the way to disk; a few times a second the runner
reads what is new: all of it while the child prints at a human pace (about 20,000 lines a
second), only the latest lines of a flood. A flood's other lines are counted, never decoded:
newlines exactly up to a budget per poll, estimated past it from the bytes per line so far.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cockpit.gates.output import LineSplitter

SPLIT_BYTES = 256 * 1024
"""New output up to this per poll is split into lines whole; past it, only the latest lines."""
TAIL_BYTES = 32 * 1024
"""What a flood's poll decodes for its latest lines ..."""
TAIL_LINES = 100
"""... of which it shows this many: a screenful or two (a pane is ~40 lines high)."""
COUNT_BYTES = 4 << 20
"""Newlines counted per poll in the part of a flood that is not shown; the rest is estimated."""
_CHUNK = 1 << 20


@dataclass(frozen=True)
class GateOutput:
    """What one look at the log found: its new lines (clean) or, in a flood, its latest lines."""

    lines: list[str]
    skipped: int = 0
    """Lines before `lines` that the log holds but this look left out (a flood)."""
    total: int = 0
    """Lines so far, `skipped` ones included."""
    estimated: bool = False
    """`total` holds an estimate: part of a flood was past the counting budget."""


def lines_text(count: int, estimated: bool) -> str:
    """"12,345 lines"; "~12,345 lines" where part of it is an estimate."""
    return f"{'~' if estimated else ''}{count:,} line{'' if count == 1 else 's'}"


def skipped_lines(output: GateOutput) -> str:
    return lines_text(output.skipped, output.estimated)


class LogFollower:
    """Reads a log from `offset` on as it grows; `poll()` says what is new since the last call."""

    def __init__(self, path: Path, offset: int) -> None:
        self._fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        self.offset = offset
        """How far the log has been read (or counted)."""
        self.total = 0
        self.estimated = False
        self._splitter = LineSplitter()
        self._counted = (0, 0)  # (bytes, newlines) read so far: the estimate's bytes per line

    @property
    def fd(self) -> int:
        """The log, open read-only."""
        return self._fd

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def poll(self, final: bool = False) -> GateOutput | None:
        """The lines written since the last poll (`final`: the unterminated last one too); None
        when there are none."""
        size = self.size()
        skipped = 0
        if size - self.offset > SPLIT_BYTES:
            start = size - TAIL_BYTES
            data = os.pread(self._fd, TAIL_BYTES, start)
            first = data.find(b"\n") + 1  # shown from the first whole line (0: one long line)
            skipped = self._count(self.offset, start + first)
            data = data[first:]
            self._splitter = LineSplitter()  # what it held ended in the part left out
        else:
            data = os.pread(self._fd, size - self.offset, self.offset) if size > self.offset else b""
            self._counted = (self._counted[0] + len(data), self._counted[1] + data.count(b"\n"))
        self.offset = size
        lines = self._splitter.feed(data) if data else []
        if final:
            lines += self._splitter.finish()
        if skipped and len(lines) > TAIL_LINES:
            skipped, lines = skipped + len(lines) - TAIL_LINES, lines[-TAIL_LINES:]
        if not lines and not skipped:
            return None
        self.total += skipped + len(lines)
        return GateOutput(lines, skipped, self.total, self.estimated)

    def _count(self, start: int, end: int) -> int:
        """Newlines in [start, end): read and counted up to COUNT_BYTES, estimated past it."""
        newlines, at = 0, start
        stop = min(end, start + COUNT_BYTES)
        while at < stop:
            chunk = os.pread(self._fd, min(_CHUNK, stop - at), at)
            if not chunk:
                break
            newlines += chunk.count(b"\n")
            at += len(chunk)
        self._counted = (self._counted[0] + at - start, self._counted[1] + newlines)
        if at < end:
            self.estimated = True
            read, seen = self._counted
            newlines += round((end - at) * seen / read) if read and seen else 0
        return newlines

    def close(self) -> None:
        os.close(self._fd)
