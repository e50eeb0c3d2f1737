"""Names and parent chains of the pids NVML reports, so a verdict can tell our processes from others.

psutil is imported on first use; each pid is looked up once and forgotten when it leaves the GPU.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from typing import Protocol

ProcessInfo = tuple[str | None, tuple[int, ...]]
"""(name, ancestor pids nearest first); (None, ()) when the pid is gone or not visible."""


class ProcessTable(Protocol):
    def prepare(self) -> None:
        """Load what lookups need; called once, from the sampler's first tick (in the worker)."""
        ...

    def describe(self, pid: int) -> ProcessInfo: ...

    def keep_only(self, pids: Collection[int]) -> None:
        """Forget every pid not in `pids` (a pid may be reused by another program later)."""
        ...


class LocalProcesses:
    """This machine's processes through psutil. A pid in another pid namespace reads as unknown."""

    def __init__(self) -> None:
        self._cache: dict[int, ProcessInfo] = {}

    def prepare(self) -> None:
        # Importing psutil takes ~25 ms: pay it while opening, not on the tick a process appears.
        with contextlib.suppress(ImportError):
            import psutil  # type: ignore[import-untyped, unused-ignore]  # noqa: F401

    def describe(self, pid: int) -> ProcessInfo:
        info = self._cache.get(pid)
        if info is None:
            info = self._cache[pid] = _lookup(pid)
        return info

    def keep_only(self, pids: Collection[int]) -> None:
        for pid in [p for p in self._cache if p not in pids]:
            del self._cache[pid]


def _lookup(pid: int) -> ProcessInfo:
    try:
        import psutil  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return None, ()
    try:
        proc = psutil.Process(pid)
        name = str(proc.name())
        ancestors = tuple(int(p.pid) for p in proc.parents())
    except (psutil.Error, OSError):
        return None, ()
    return name, ancestors
