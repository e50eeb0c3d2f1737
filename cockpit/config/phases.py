"""`[templates.<name>]`: the session shapes, each a list of phases with a time budget."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.config.reader import ConfigReader

MAX_BUDGET_MIN = 7 * 24 * 60
"""A phase's budget is at most a week: a bigger number is a typo, and 1e308 minutes would be
journaled as Infinity, which no reader takes back."""


@dataclass(frozen=True)
class PhaseSpec:
    name: str
    budget_s: float


@dataclass(frozen=True)
class Template:
    name: str
    phases: tuple[PhaseSpec, ...]


def _phases(*pairs: tuple[str, int]) -> tuple[PhaseSpec, ...]:
    return tuple(PhaseSpec(name, minutes * 60.0) for name, minutes in pairs)


# The seeds' two session shapes (minutes).
DEFAULT_TEMPLATES: Mapping[str, Template] = {
    "optimize": Template(
        "optimize",
        _phases(
            ("Environment", 10),
            ("Baseline", 20),
            ("Profile", 30),
            ("Fix", 90),
            ("Evaluate", 20),
            ("Document", 20),
        ),
    ),
    "baseline": Template(
        "baseline", _phases(("Environment", 10), ("Baseline", 15), ("Document", 5))
    ),
}


def read_templates(table: Mapping[str, Any], reader: ConfigReader) -> Mapping[str, Template]:
    """The default templates, plus or replaced by the file's own."""
    templates = dict(DEFAULT_TEMPLATES)
    for name, body in table.items():
        key_path = f"templates.{name}"
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name):
            raise reader.fail(key_path, "template names use lowercase letters, digits, '-' and '_'")
        if not isinstance(body, dict):
            raise reader.fail(key_path, "must be a table with a 'phases' list")
        reader.check_keys(body, key_path, ("phases",))
        templates[name] = Template(name, _read_phases(body.get("phases"), key_path, reader))
    return templates


def _read_phases(value: Any, key_path: str, reader: ConfigReader) -> tuple[PhaseSpec, ...]:
    where = f"{key_path}.phases"
    example = 'phases = [{ name = "Environment", budget_min = 10 }, ...]'
    if not isinstance(value, list) or not value:
        raise reader.fail(where, f"must be a non-empty list, e.g. {example}")
    phases: list[PhaseSpec] = []
    for index, item in enumerate(value):
        item_path = f"{where}[{index}]"
        if not isinstance(item, dict) or set(item) != {"name", "budget_min"}:
            raise reader.fail(where, f"{item_path} must be {{ name = ..., budget_min = ... }}")
        name, budget = item["name"], item["budget_min"]
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9 _-]{0,23}", name):
            raise reader.fail(where, f"{item_path}.name {name!r} must be a short word")
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0:
            raise reader.fail(where, f"{item_path}.budget_min {budget!r} must be minutes > 0")
        if not budget <= MAX_BUDGET_MIN:  # also NaN and inf (TOML writes them as nan, inf)
            raise reader.fail(where, f"{item_path}.budget_min {budget!r} is more than a week "
                              f"({MAX_BUDGET_MIN} min): give minutes a session can last")
        if any(p.name.lower() == name.lower() for p in phases):
            raise reader.fail(where, f"phase {name!r} appears twice")
        phases.append(PhaseSpec(name, float(budget) * 60.0))
    return tuple(phases)
