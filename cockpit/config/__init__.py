"""`cockpit.toml`: session templates, status cadence, thresholds, GPU cost.

No file means the defaults. A syntax error, an unknown key or a bad value raises `ConfigError`
whose message names `cockpit.toml:LINE`, the key path and what is allowed.

One module per `[table]`: its frozen dataclass and `read_<table>(table, reader)`; `load.Config`
holds one `section(...)` field per table, and `load_config` reads them in that order.

The names below are imported from their module when first asked for (PEP 562): `cockpit status`
runs from tmux's status line every few seconds and needs the phases of a session, not the code
of every table (each frozen dataclass compiles its methods at import).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cockpit.config.gates import GateConfig, Gates
    from cockpit.config.load import Config, load_config
    from cockpit.config.names import CONFIG_NAME
    from cockpit.config.phases import DEFAULT_TEMPLATES, PhaseSpec, Template
    from cockpit.config.profile import ProfileSettings
    from cockpit.config.reader import ConfigError
    from cockpit.config.sanitize import SanitizeSettings
    from cockpit.config.thresholds import Thresholds
    from cockpit.config.workload import WorkloadConfig

_WHERE = {
    "CONFIG_NAME": "names",
    "Config": "load",
    "load_config": "load",
    "DEFAULT_TEMPLATES": "phases",
    "PhaseSpec": "phases",
    "Template": "phases",
    "GateConfig": "gates",
    "Gates": "gates",
    "ProfileSettings": "profile",
    "ConfigError": "reader",
    "SanitizeSettings": "sanitize",
    "Thresholds": "thresholds",
    "WorkloadConfig": "workload",
}

__all__ = [
    "CONFIG_NAME",
    "DEFAULT_TEMPLATES",
    "Config",
    "ConfigError",
    "GateConfig",
    "Gates",
    "PhaseSpec",
    "ProfileSettings",
    "SanitizeSettings",
    "Template",
    "Thresholds",
    "WorkloadConfig",
    "load_config",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'cockpit.config' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"cockpit.config.{_WHERE[name]}"), name)
    globals()[name] = value  # asked once
    return value
