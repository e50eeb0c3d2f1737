"""Keeping the TUI's resident memory small on glibc: fewer malloc arenas, free pages handed back.

glibc gives each thread that allocates its own arena (up to 8 per core): on a 16-core GPU box the
TUI's threads (input, output, telemetry, NVML's own) each keep a partly used heap. Two arenas are
plenty for a process that mostly waits. Startup (imports, CSS, NVML init) also leaves freed pages
that malloc keeps; `release_free_memory` returns them once the screen is up. Both are no-ops where
libc is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc

M_ARENA_MAX = -8  # mallopt parameter (glibc malloc.h)


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def limit_malloc_arenas(arenas: int = 2) -> bool:
    """Call before threads start. True when glibc took the setting."""
    libc = _libc()
    return bool(libc and libc.mallopt(M_ARENA_MAX, arenas) == 1)


def release_free_memory() -> bool:
    """Collect garbage, then hand malloc's free pages back to the kernel. True if any were."""
    gc.collect()
    libc = _libc()
    return bool(libc and libc.malloc_trim(0) == 1)
