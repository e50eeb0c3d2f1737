"""`cockpit.toml`: session templates, status cadence, thresholds, GPU cost.

No file means the defaults. A syntax error, an unknown key or a bad value raises `ConfigError`
whose message names `cockpit.toml:LINE`, the key path and what is allowed.

One module per `[table]`: its frozen dataclass and `read_<table>(table, reader)`; `load.Config`
holds one `section(...)` field per table, and `load_config` reads them in that order.
"""

from cockpit.config.gates import GATE_NAMES, GateConfig, Gates
from cockpit.config.load import CONFIG_NAME, Config, load_config
from cockpit.config.phases import DEFAULT_TEMPLATES, PhaseSpec, Template
from cockpit.config.profile import ProfileSettings
from cockpit.config.reader import ConfigError
from cockpit.config.sanitize import SanitizeSettings
from cockpit.config.thresholds import Thresholds
from cockpit.config.workload import WorkloadConfig

__all__ = [
    "CONFIG_NAME",
    "DEFAULT_TEMPLATES",
    "GATE_NAMES",
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
