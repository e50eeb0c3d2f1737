"""The search's worker processes: one per GPU, pinned by UUID, watched until they end."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import cockpit
from cockpit.tune.target import Gpu

MONITOR_EVERY_S = 2.0
"""How often the supervisor saves the plan's time spent and reports progress."""


def worker_env(gpu: Gpu) -> dict[str, str]:
    """A search worker's environment: pinned to its GPU by UUID, this cockpit importable."""
    package_root = str(Path(cockpit.__file__).resolve().parent.parent)
    return dict(os.environ, CUDA_VISIBLE_DEVICES=gpu.uuid, PYTHONUNBUFFERED="1",
                PYTHONPATH=os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p))


def supervise(children: Sequence[subprocess.Popen[bytes]], every: Callable[[], None]) -> list[int]:
    """Wait for the workers, calling `every` every couple of seconds; returns their exit codes.
    Ctrl-C stops them all (each leads its own process group) and is raised again."""
    try:
        while any(c.poll() is None for c in children):
            time.sleep(MONITOR_EVERY_S)
            every()
    except KeyboardInterrupt:
        for c in children:
            if c.poll() is None:
                os.killpg(c.pid, signal.SIGTERM)
        for c in children:
            c.wait()
        raise
    return [c.returncode for c in children]
