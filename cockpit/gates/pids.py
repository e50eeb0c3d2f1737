"""Whether a gate's process still runs, and that it is the one the journal names (a pid is reused
once its process is gone). Apart from the runner, so an idle cockpit checks a journaled run
without loading it."""

from __future__ import annotations

import os
from pathlib import Path


def process_start(pid: int | None) -> int | None:
    """When process `pid` started, in clock ticks since boot (Linux's /proc/PID/stat, field 22);
    None where that cannot be read (no such process, a zombie, not Linux)."""
    if not pid:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()  # the command name may hold spaces
        return None if fields[0] == "Z" else int(fields[19])  # a zombie has stopped already
    except (OSError, ValueError, IndexError):
        return None


def pid_alive(pid: int | None) -> bool:
    """Whether a process with this pid exists (e.g. one a crashed cockpit left behind)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
