"""The search paths as the cockpit passes them on: only the entries that name a folder wherever the
cockpit runs.

An empty entry (`PATH=:/usr/bin`, a trailing colon, the usual `export PYTHONPATH=$PYTHONPATH:/x`
with the variable unset) or a relative one (`bin`) names the current folder; the gates run in the
workspace, so through it a committed `./python3` or `bin/nvcc` (PATH), `torch.py` (PYTHONPATH: the
env probe imports torch) or `libcudart.so` (LD_LIBRARY_PATH: torch loads it in a gate's child)
would be run before the user trusted anything (session/trust.py). The command line drops them
once, at start, for itself and every child; interpreter discovery (gates/interpreter.py) never
looks through them either. What a trusted cockpit.toml sets in a gate's `env` is the user's own
choice and is passed on as written.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

SEARCH_PATHS = ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH")
"""The variables whose entries name folders to find programs, modules and libraries in."""


def absolute_path(path: str) -> str:
    """PATH without its empty and relative entries: each names the current folder (the workspace,
    where the gates run), so a committed `./python3` or `bin/nvcc` would be found and run."""
    return os.pathsep.join(p for p in path.split(os.pathsep) if os.path.isabs(p))


def drop_workspace_entries(env: MutableMapping[str, str]) -> None:
    """Each of SEARCH_PATHS in `env` without its empty and relative entries; one left with none is
    removed, since an empty PATH is itself an empty entry (Python's subprocess and sh then look in
    the current folder) and an unset one falls back to the system's folders."""
    for var in SEARCH_PATHS:
        if var in env:
            kept = absolute_path(env[var])
            if kept:
                env[var] = kept
            else:
                del env[var]
