"""PATH as the cockpit passes it on: the entries that name a folder wherever the cockpit runs.

An empty entry in PATH (`PATH=:/usr/bin`, a trailing colon) or a relative one (`bin`) names the
current folder; the gates run in the workspace, so through it a committed `./python3` or
`bin/nvcc` would be found and run before the user trusted anything (session/trust.py). The
command line drops them once, at start, for itself and every child; interpreter discovery
(gates/interpreter.py) never looks through them either.
"""

from __future__ import annotations

import os


def absolute_path(path: str) -> str:
    """PATH without its empty and relative entries: each names the current folder (the workspace,
    where the gates run), so a committed `./python3` or `bin/nvcc` would be found and run."""
    return os.pathsep.join(p for p in path.split(os.pathsep) if os.path.isabs(p))
