"""A workspace the test's user made or has looked at and trusts: what its cockpit.toml names (its
`[gates] python`, commands, env, workload) may run, as after `cockpit trust allow`."""

from __future__ import annotations

from pathlib import Path

from cockpit.config import load_config
from cockpit.session.trust import allow, what_runs


def trust(root: Path) -> Path:
    """Trust the workspace at `root` as its cockpit.toml is now (an edit since asks again)."""
    allow(what_runs(root, load_config(root)))
    return root
