"""Which guards (cockpit/workload/guards.py) run in this probe: all of them, unless the cheat
catalogue's mutation test turned some off through `COCKPIT_GUARDS_OFF`. Read once by
`workload_probe.main`, before the workload is imported; the checks ask `on(name)`."""

from __future__ import annotations

from collections.abc import Mapping

from cockpit.workload.guards import BY_NAME, guards_off

_off: frozenset[str] = frozenset()


def start(environ: Mapping[str, str]) -> frozenset[str]:
    """Read the guards turned off (raises `UnknownGuard` for a name no guard has)."""
    global _off
    _off = guards_off(environ)
    return _off


def on(name: str) -> bool:
    """Whether guard `name` runs (a name no guard has is the cockpit's own mistake)."""
    if name not in BY_NAME:
        raise KeyError(f"no guard is called {name!r}")
    return name not in _off


def off() -> frozenset[str]:
    return _off
