"""Child output made safe to show: lines split the way a terminal shows them, escape sequences
removed, invalid UTF-8 replaced, giant lines cut into pieces. A gate's log keeps the child's
bytes as it wrote them (`less -R` shows its colours); whatever reads one for a person goes
through here.
"""

from __future__ import annotations

from cockpit.printable import CONTROLS, printable

MAX_LINE_CHARS = 64 * 1024


def terminal_line(text: str) -> str:
    """One line through the door (cockpit/printable.py), line breaks out too; never markup."""
    return printable(text).replace("\r", "").replace("\n", "")


def _terminal_view(line: str) -> str:
    """What a terminal leaves on the line after carriage returns: the last non-empty segment."""
    line = line.rstrip("\r")
    if "\r" not in line:
        return line
    segments = [s for s in line.split("\r") if s]
    return segments[-1] if segments else ""


class LineSplitter:
    """Feeds raw bytes in, gets clean text lines out (a partial last line waits for more)."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> list[str]:
        pending = self._pending + data
        cut = pending.rfind(b"\n")
        if cut < 0:
            if b"\r" in pending:
                # A progress bar redrawing itself with \r: only its latest state matters.
                pending = pending[pending.rfind(b"\r") + 1:]
            if len(pending) >= 4 * MAX_LINE_CHARS:
                # A line with no end in sight: emit what we have so memory stays bounded.
                self._pending = b""
                return _clean(pending)
            self._pending = pending
            return []
        self._pending = pending[cut + 1:]
        return _clean(pending[:cut])

    def finish(self) -> list[str]:
        """The unterminated last line, if any, once the child has closed its output."""
        rest, self._pending = self._pending, b""
        return _clean(rest) if rest.strip(b"\r") else []


def text_lines(data: bytes) -> list[str]:
    """A log's bytes (or a piece of one) as the clean lines a terminal would have shown."""
    data = data[:-1] if data.endswith(b"\n") else data
    return _clean(data) if data.strip(b"\r") else []


def _clean(block: bytes) -> list[str]:
    """Newline-separated bytes to clean lines; the common plain-text case is one split."""
    # Splitting at \n first is safe for UTF-8: 0x0A never occurs inside a multi-byte character.
    text = block.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if CONTROLS.search(text):  # escapes, CR, other controls: more than a split
        lines = [terminal_line(_terminal_view(line)) for line in lines]
    if max(map(len, lines)) <= MAX_LINE_CHARS:
        return lines
    out: list[str] = []
    for line in lines:
        out.extend(line[i:i + MAX_LINE_CHARS] for i in range(0, max(len(line), 1), MAX_LINE_CHARS))
    return out
