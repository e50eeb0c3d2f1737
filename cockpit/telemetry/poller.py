"""Polls a telemetry source in one long-lived thread, one poll at a time.

The UI asks for a poll, renders what comes back, then asks again after its interval: polls
never overlap and NVML never runs on the UI thread. One thread for the whole session costs less
than a thread (and its bookkeeping) per poll, which at 1 Hz is a visible share of an idle TUI.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from cockpit.telemetry.sample import Snapshot
    from cockpit.telemetry.sampler import TelemetrySource

Result = Union["Snapshot", BaseException]
"""What a poll hands back: the snapshot, or what the source raised."""


class Poller:
    def __init__(self, open_source: Callable[[], TelemetrySource],
                 deliver: Callable[[Result], None]) -> None:
        """`open_source` runs in the thread on the first poll (opening NVML is slow);
        `deliver` is called from the thread with each result."""
        self._open_source = open_source
        self._deliver = deliver
        self._source: TelemetrySource | None = None
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._busy = False
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="cockpit-telemetry", daemon=True)

    def request(self) -> bool:
        """Ask for one poll; False (and nothing happens) while one is running or after close."""
        with self._lock:
            if self._busy or self._closed:
                return False
            self._busy = True
            if not self._thread.is_alive():
                self._thread.start()
        self._wake.set()
        return True

    def close(self, timeout: float = 2.0) -> None:
        """Stop the thread (after the poll in flight, if any) and close the source."""
        with self._lock:
            self._closed = True
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                break
            result: Result
            try:
                if self._source is None:
                    self._source = self._open_source()
                result = self._source.tick()
            except Exception as exc:  # handed to the UI, which says it once
                result = exc
            with self._lock:
                self._busy = False
            self._deliver(result)
        if self._source is not None:
            self._source.close()
