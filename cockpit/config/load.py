"""`Config` assembled from its sections, and `load_config`, which reads it from `cockpit.toml`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from cockpit.config.gates import GateConfig, Gates, read_gates
from cockpit.config.names import CONFIG_NAME
from cockpit.config.phases import DEFAULT_TEMPLATES, Template, read_templates
from cockpit.config.profile import ProfileSettings, read_profile
from cockpit.config.reader import (
    ConfigError,
    ConfigReader,
    KeyLines,
    line_of_decode_error,
    strip_position,
)
from cockpit.config.sanitize import SanitizeSettings, read_sanitize
from cockpit.config.thresholds import Thresholds, read_thresholds
from cockpit.config.tune import TuneConfig, read_tune
from cockpit.config.workload import WorkloadConfig, read_workload
from cockpit.files import RefusedFile, read_file
from cockpit.hardware.device_spec import DeviceSpec

T = TypeVar("T")
_READ = "read"


def section(read: Callable[[Mapping[str, Any], ConfigReader], T], default: Callable[[], T]) -> T:
    """A Config field filled from the `[table]` of its own name: `read(table, reader)`, where the
    table is empty when the file has none; `default()` when there is no file at all."""
    return field(default_factory=default, metadata={_READ: read})


@dataclass(frozen=True)
class Config:
    default_template: str = "optimize"
    status_every_s: float = 150.0
    # An L4 on-demand hour in the seeds' sessions (~2 h for $1.36).
    gpu_cost_per_hour: float = 0.68
    # One line per [table], read in this order.
    thresholds: Thresholds = section(read_thresholds, Thresholds)
    workload: WorkloadConfig = section(read_workload, WorkloadConfig)
    profile: ProfileSettings = section(read_profile, ProfileSettings)
    sanitize: SanitizeSettings = section(read_sanitize, SanitizeSettings)
    templates: Mapping[str, Template] = section(read_templates, lambda: dict(DEFAULT_TEMPLATES))
    gates: Gates = section(read_gates, Gates)
    """`[gates]`; a plain {name: GateConfig} given in code becomes a `Gates` with the defaults."""
    tune: TuneConfig = section(read_tune, TuneConfig)
    source: Path | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.gates, Gates):
            object.__setattr__(self, "gates", Gates(dict(self.gates)))

    @property
    def pinned_gpu(self) -> DeviceSpec | None:
        """`[gates] device`: the GPU every gate's child runs on, named by UUID, PCI bus id or index."""
        return self.gates.device

    @property
    def pinned_gpu_where(self) -> str:
        """Where `[gates] device` is set ("…/cockpit.toml:LINE"), for an error about it."""
        return self.gates.device_where

    @property
    def phase_warn_fraction(self) -> float:
        return self.thresholds.phase_warn_fraction

    def gate(self, name: str) -> GateConfig:
        return self.gates.get(name, GateConfig())

    def template(self, name: str | None) -> Template:
        key = name or self.default_template
        if key not in self.templates:
            allowed = ", ".join(sorted(self.templates))
            raise ConfigError(f"unknown session template '{key}' (allowed: {allowed})")
        return self.templates[key]


_SECTIONS = tuple(f for f in fields(Config) if _READ in f.metadata)
_TOP_LEVEL = tuple(sorted(("cadence", "default_template", "gpu_cost_per_hour",
                           *(f.name for f in _SECTIONS))))


MAX_CONFIG_BYTES = 1 << 20
"""The biggest cockpit.toml read: a cockpit.toml is a page (the repository's own is 6 KB)."""


def load_config(workspace: Path) -> Config:
    """Read `<workspace>/cockpit.toml`, or return the defaults when there is none."""
    path = workspace / CONFIG_NAME
    try:
        raw = read_file(path, MAX_CONFIG_BYTES, "a cockpit.toml may be")
    except FileNotFoundError:
        return Config()
    except RefusedFile as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror}); check its permissions") from exc
    text = raw.decode("utf-8", errors="replace")
    # tomllib only when there is a file: `cockpit status` and the idle TUI of a workspace without
    # one do not pay for its import (its parser and datetime)
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = line_of_decode_error(exc)
        where = f"{path}:{line}" if line else str(path)
        raise ConfigError(f"{where}: TOML syntax error: {strip_position(exc)}; fix that line") from exc
    except RecursionError:  # tomllib reads nested tables and arrays by recursion
        raise ConfigError(f"{path}: refused: tables or arrays nested deeper than Python can read; "
                          "cockpit.toml nests at most three levels") from None
    return _read_config(ConfigReader(data, KeyLines(text, path)))


def _read_config(reader: ConfigReader) -> Config:
    data, defaults = reader.data, Config()
    reader.check_keys(data, "", _TOP_LEVEL)
    cadence = reader.table("cadence")
    reader.check_keys(cadence, "cadence", ("status_every_s",))
    status_every_s = reader.number(
        cadence.get("status_every_s", defaults.status_every_s),
        "cadence.status_every_s", lambda v: v > 0, "a number of seconds > 0, default 150",
    )
    cost = reader.number(
        data.get("gpu_cost_per_hour", defaults.gpu_cost_per_hour),
        "gpu_cost_per_hour", lambda v: v >= 0, "a price per GPU hour >= 0",
    )
    tables = {f.name: f.metadata[_READ](reader.table(f.name), reader) for f in _SECTIONS}
    templates = tables["templates"]
    default_template = data.get("default_template", defaults.default_template)
    if default_template not in templates:
        raise reader.fail(
            "default_template",
            f"{default_template!r} is not a template (allowed: {', '.join(sorted(templates))})",
        )
    return Config(
        default_template=default_template, status_every_s=status_every_s, gpu_cost_per_hour=cost,
        source=reader.lines.path, **tables,
    )
