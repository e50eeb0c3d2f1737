"""`[thresholds]`: when a phase warns, how a speedup is classed, when a bench is suspect."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.config.reader import ConfigReader
from cockpit.telemetry.sample import THROTTLE_WORDS


@dataclass(frozen=True)
class Thresholds:
    phase_warn_fraction: float = 0.8
    speedup_critical: float = 0.5
    speedup_high: float = 1.0
    speedup_medium: float = 1.5
    keep_improvement: float = 0.2
    """A change is kept when the kernel got at least this much faster (0.2 = 20 %)."""
    sm_clock_fraction: float = 0.9
    """A bench is suspect when the busy SM clock fell below this fraction of its max ..."""
    tolerated_clock_events: tuple[str, ...] = ()
    """... or a clock event was active, unless it is one of these (e.g. "power cap" on an H100/H200,
    which sits at its cap under every heavy kernel)."""


def read_thresholds(table: Mapping[str, Any], reader: ConfigReader) -> Thresholds:
    d = Thresholds()
    rules = {
        "phase_warn_fraction": (lambda v: 0 < v <= 1, "a fraction in (0, 1], default 0.8"),
        "speedup_critical": (lambda v: v > 0, "a speedup > 0, default 0.5"),
        "speedup_high": (lambda v: v > 0, "a speedup > 0, default 1.0"),
        "speedup_medium": (lambda v: v > 0, "a speedup > 0, default 1.5"),
        "keep_improvement": (lambda v: 0 <= v < 10, "a fraction such as 0.2 for 20 %"),
        "sm_clock_fraction": (lambda v: 0 < v <= 1, "a fraction in (0, 1], default 0.9"),
    }
    reader.check_keys(table, "thresholds", (*rules, "tolerated_clock_events"))
    values = {key: reader.number(table.get(key, getattr(d, key)), f"thresholds.{key}", ok, rule)
              for key, (ok, rule) in rules.items()}
    known = [word for _, word in THROTTLE_WORDS if word != "idle"]
    events = table.get("tolerated_clock_events", list(d.tolerated_clock_events))
    if not isinstance(events, list) or not all(e in known for e in events):
        raise reader.fail("thresholds.tolerated_clock_events",
                          f"{events!r} is not allowed (expected a list drawn from {known})")
    out = Thresholds(**values, tolerated_clock_events=tuple(events))
    if not out.speedup_critical < out.speedup_high < out.speedup_medium:
        raise reader.fail("thresholds", "expected speedup_critical < speedup_high < speedup_medium")
    return out
