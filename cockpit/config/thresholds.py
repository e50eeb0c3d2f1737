"""`[thresholds]`: when a phase warns, how a speedup is classed, when a bench is suspect."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.config.reader import ConfigReader
from cockpit.config.validity_rules import ValidityMode, ValidityRules
from cockpit.hardware.clock_events import THROTTLE_WORDS

VALIDITY_MODES: tuple[ValidityMode, ...] = ("comparable", "strict")


@dataclass(frozen=True)
class Thresholds:
    phase_warn_fraction: float = 0.8
    speedup_critical: float = 0.5
    speedup_high: float = 1.0
    speedup_medium: float = 1.5
    keep_improvement: float = 0.2
    """A change is kept when the kernel got at least this much faster (0.2 = 20 %)."""
    validity: ValidityMode = "comparable"
    """comparable: a bench is suspect when its conditions were not clean or ours and the baseline
    ran at clocks the power cap does not explain; strict: any clock event makes it suspect."""
    clock_difference: float = 0.05
    """Ours' and the baseline's SM clocks further apart than this (median over configs) → suspect,
    unless the slower one sat at its power cap."""
    slowdown_fraction: float = 0.02
    """comparable: a thermal or HW slowdown active longer than this fraction of the window → suspect."""
    sm_clock_fraction: float = 0.9
    """strict: a busy SM clock below this fraction of its max → suspect."""
    tolerated_clock_events: tuple[str, ...] = ()
    """Clock events that never make a bench suspect, in either mode (still shown)."""

    def validity_rules(self) -> ValidityRules:
        return ValidityRules(self.validity, self.slowdown_fraction, self.clock_difference,
                             self.sm_clock_fraction, frozenset(self.tolerated_clock_events))


def read_thresholds(table: Mapping[str, Any], reader: ConfigReader) -> Thresholds:
    d = Thresholds()
    rules = {
        "phase_warn_fraction": (lambda v: 0 < v <= 1, "a fraction in (0, 1], default 0.8"),
        "speedup_critical": (lambda v: v > 0, "a speedup > 0, default 0.5"),
        "speedup_high": (lambda v: v > 0, "a speedup > 0, default 1.0"),
        "speedup_medium": (lambda v: v > 0, "a speedup > 0, default 1.5"),
        "keep_improvement": (lambda v: 0 <= v < 10, "a fraction such as 0.2 for 20 %"),
        "clock_difference": (lambda v: 0 < v < 1, "a fraction in (0, 1), default 0.05 for 5 %"),
        "slowdown_fraction": (lambda v: 0 <= v <= 1, "a fraction in [0, 1], default 0.02 for 2 %"),
        "sm_clock_fraction": (lambda v: 0 < v <= 1, "a fraction in (0, 1], default 0.9"),
    }
    reader.check_keys(table, "thresholds", (*rules, "validity", "tolerated_clock_events"))
    values = {key: reader.number(table.get(key, getattr(d, key)), f"thresholds.{key}", ok, rule)
              for key, (ok, rule) in rules.items()}
    mode = table.get("validity", d.validity)
    if mode not in VALIDITY_MODES:
        raise reader.fail("thresholds.validity", f"{mode!r} is not allowed (expected \"comparable\", the "
                          "default, or \"strict\", where any clock event makes a bench suspect)")
    known = [word for _, word in THROTTLE_WORDS if word != "idle"]
    events = table.get("tolerated_clock_events", list(d.tolerated_clock_events))
    if not isinstance(events, list) or not all(e in known for e in events):
        raise reader.fail("thresholds.tolerated_clock_events",
                          f"{events!r} is not allowed (expected a list drawn from {known})")
    out = Thresholds(**values, validity=mode, tolerated_clock_events=tuple(events))
    if not out.speedup_critical < out.speedup_high < out.speedup_medium:
        raise reader.fail("thresholds", "expected speedup_critical < speedup_high < speedup_medium")
    return out
