"""The one setting `cockpit status` needs, `[thresholds] phase_warn_fraction`, kept by the look of
the cockpit.toml it was read from (cockpit/user_cache.py), so that tmux's status line, asking every
few seconds, reads the file whole (and imports the code of every table) only when it changed.

The file is read by `load_config`, as every verb reads it: a cockpit.toml that does not read raises
its `ConfigError` here too, and is never kept.
"""

from __future__ import annotations

import time
from pathlib import Path

from cockpit.config.names import CONFIG_NAME
from cockpit.user_cache import keep, kept, look

KIND = "config"


def phase_warn_fraction(workspace: Path) -> float:
    """`[thresholds] phase_warn_fraction` of the workspace's cockpit.toml (the default without one)."""
    path = workspace / CONFIG_NAME
    seen, read_t = look(path), time.time()
    if seen is None:  # no file: the default, without the code of the other tables
        from cockpit.config.thresholds import Thresholds

        return Thresholds().phase_warn_fraction
    answer = kept(KIND, path)
    if answer is not None:
        try:
            return float(answer)
        except ValueError:  # not what this module writes: read the file
            pass
    from cockpit.config.load import load_config

    value = load_config(workspace).phase_warn_fraction
    keep(KIND, path, repr(value), seen, read_t)
    return value
