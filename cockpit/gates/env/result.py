"""The env gate's result: each check of the machine and the toolchain, with a fix where it fails.

Version 1: `checks`, each with its name, status (pass, warn, fail), value, what was expected and
the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cockpit.gates.result import HeadlineFigure
from cockpit.json_fields import obj, objects, text

ORDER = {"fail": 0, "warn": 1, "pass": 2}


@dataclass(frozen=True)
class BoxCheck:
    name: str
    status: str
    value: str = ""
    fix: str = ""
    expected: str = ""

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "status": self.status, "value": self.value, "expected": self.expected,
                "fix": self.fix}


@dataclass(frozen=True)
class EnvResult:
    SCHEMA: ClassVar[int] = 1

    checks: tuple[BoxCheck, ...] = ()

    @property
    def worst_first(self) -> tuple[BoxCheck, ...]:
        """Failures, then warnings, then what passed."""
        return tuple(sorted(self.checks, key=lambda c: ORDER.get(c.status, 3)))

    def value(self, name: str) -> str | None:
        """The value the check `name` recorded, if it ran and recorded one."""
        return next((c.value for c in self.checks if c.name == name and c.value), None)

    @classmethod
    def from_json(cls, value: object) -> EnvResult:
        return cls(tuple(BoxCheck(text(c.get("name")) or "", str(c.get("status") or ""),
                               _said(c.get("value")), _said(c.get("fix")), _said(c.get("expected")))
                         for c in objects(obj(value).get("checks"))))

    def headline(self) -> HeadlineFigure | None:
        """None: the gate pane leads with the summary (only a bench has a number to lead with)."""
        return None

    def ran_on(self) -> str | None:
        """None: the env gate looks at every GPU, not one."""
        return None

    def to_json(self) -> dict[str, object]:
        return {"checks": [c.to_json() for c in self.checks]}


def _said(value: object) -> str:
    return "" if value is None else str(value)
