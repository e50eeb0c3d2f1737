"""The keep/revert decision a bench (or a tune's confirmation) hands the engineer, as journaled.

Version 1: `action` ("keep", "revert" or "baseline"), the `summary` said to the engineer, the
`improvement` over the reference run (0.23 = 23 % faster), how many configs both shared, the
commit message a KEEP would use, the reference run's record, the kernel's paths git may touch,
and (a tune's) the tuned header it wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cockpit.json_fields import JsonObject, as_number, compact, obj, strings, text, whole

ACTIONS = ("keep", "revert", "baseline")


@dataclass(frozen=True)
class KeepResult:
    """KEEP, REVERT or BASELINE after one change, and what carrying it out touches."""

    SCHEMA: ClassVar[int] = 1

    action: str
    summary: str
    improvement: float | None = None
    shared_configs: int | None = None
    commit_message: str = ""
    reference: str | None = None
    """The workspace-relative bench record the run was compared with."""
    paths: tuple[str, ...] = ()
    header: str | None = None
    """A tune's tuned header (the file a KEEP commits beside the kernel's)."""

    @property
    def decides(self) -> bool:
        """KEEP or REVERT: there is something to carry out (a baseline only records)."""
        return self.action in ("keep", "revert")

    @property
    def touched(self) -> tuple[str, ...]:
        """The paths git may touch (a decision read from before the bench named them has csrc/'s:
        cockpit/before_workloads.py)."""
        return self.paths

    @classmethod
    def from_json(cls, value: object) -> KeepResult | None:
        """None when `value` is not a decision (no action, or one this cockpit does not know)."""
        data = obj(value)
        action = text(data.get("action"))
        if action not in ACTIONS:
            return None
        return cls(action, text(data.get("summary")) or "", as_number(data.get("improvement")),
                   whole(data.get("shared_configs")), text(data.get("commit_message")) or "",
                   text(data.get("reference")), strings(data.get("paths")), text(data.get("header")))

    def to_json(self) -> dict[str, object]:
        return {"action": self.action, "summary": self.summary, "improvement": self.improvement,
                "shared_configs": self.shared_configs, "commit_message": self.commit_message,
                "reference": self.reference, "paths": list(self.paths),
                **compact({"header": self.header})}


def keep_of(data: JsonObject) -> KeepResult | None:
    """The decision a result holds under "keep"."""
    return KeepResult.from_json(data.get("keep"))
