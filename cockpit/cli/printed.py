"""Everything a verb prints passes the door (cockpit/printable.py): while a handler runs, its
stdout and stderr are streams that remove every escape sequence and control character, so no
session file, pattern, workload, child or exception puts one on the user's terminal. A verb
that writes an escape of its own on purpose (`gpu --watch` clearing the screen) writes it to the
stream's `terminal`, the real one underneath."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO, cast

from cockpit.printable import printable


class PrintableStream:
    """A text stream whose writes go through the door to `terminal`; all else is `terminal`'s."""

    def __init__(self, terminal: TextIO) -> None:
        self.terminal = terminal

    def write(self, text: str) -> int:
        self.terminal.write(printable(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:  # flush, fileno, isatty, encoding ...
        return getattr(self.terminal, name)


@contextmanager
def through_the_door() -> Iterator[None]:
    """stdout and stderr as PrintableStreams for the duration (restored after, even on error)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = cast(TextIO, PrintableStream(out))
    sys.stderr = cast(TextIO, PrintableStream(err))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def terminal_of(stream: TextIO) -> TextIO:
    """The real stream under a PrintableStream (the stream itself otherwise): for the CLI's own
    escapes, never for text from outside."""
    return cast(TextIO, getattr(stream, "terminal", stream))
