"""SSH drop or kill: journal the close and save SESSION.md first, then leave.

Plain signal handlers, not loop.add_signal_handler: after a hangup Textual's output thread can
block the event loop for good (SIGCONT restarts it on the dead tty), and a plain handler still
runs in the main thread, even inside that blocked write."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable


def install(close: Callable[[str], None], exit_app: Callable[[], None]) -> None:
    """On SIGHUP or SIGTERM: `close(signal name)`, then leave (at once after a hangup)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, lambda signum, _frame: on_signal(signum, loop, close, exit_app))


def on_signal(signum: int, loop: asyncio.AbstractEventLoop, close: Callable[[str], None],
              exit_app: Callable[[], None]) -> None:
    close(signal.Signals(signum).name)
    if signum == signal.SIGHUP:
        os._exit(0)  # nothing to restore on a hung-up terminal; Textual's shutdown would block
    loop.call_soon_threadsafe(exit_app)
