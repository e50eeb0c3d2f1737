"""What a verb says while it waits on a child: at once, on stderr, what it is doing and where, then
the time so far, so a first `cockpit workload show` that waits half a minute on a torch import is
never silent. On a terminal the time is one counter rewritten in place; into a file or a pipe it
is a line every few seconds. stdout stays the verb's answer alone (`--json` is read from it)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from cockpit.cli.printed import terminal_of

COUNT_EVERY_S = 1.0
"""The counter's step on a terminal."""
LINE_EVERY_S = 5.0
"""A line's step into a file or a pipe (a CI log keeps each)."""
CLEAR_TO_END = "\x1b[K"


@contextmanager
def said_while(doing: str, where: str = "", stream: TextIO | None = None) -> Iterator[None]:
    """`cockpit: DOING WHERE` on entry, then the seconds so far until the block ends. `where`
    may hold a workspace's words (a path from cockpit.toml): it passes the door like every line."""
    out = sys.stderr if stream is None else stream
    out.write(f"cockpit: {doing}{where}\n")
    out.flush()
    on_terminal = out.isatty()
    start = time.monotonic()
    stop = threading.Event()
    counted = threading.Event()

    def count() -> None:
        while not stop.wait(COUNT_EVERY_S if on_terminal else LINE_EVERY_S):
            so_far = time.monotonic() - start
            if on_terminal:  # the cockpit's own carriage return, past the door that strips controls
                terminal_of(out).write(f"\r  {so_far:.0f} s so far{CLEAR_TO_END}")
            else:
                out.write(f"cockpit: still {doing}: {so_far:.0f} s\n")
            out.flush()
            counted.set()

    counter = threading.Thread(target=count, name="said-while", daemon=True)
    counter.start()
    try:
        yield
    finally:
        stop.set()
        counter.join()
        if on_terminal and counted.is_set():
            terminal_of(out).write(f"\r  took {time.monotonic() - start:.0f} s{CLEAR_TO_END}\n")
            out.flush()
