"""What a pattern is: one failure turned into a rule, and the triggers that raise it again.

Data only, at the bottom of the package: the reader (`library`), the finder (`search`) and
the trigger matcher (`triggers`) all import from here, and this module imports none of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

PatternStatus = Literal["operational", "planned"]
STATUSES: tuple[PatternStatus, ...] = ("operational", "planned")
TriggerMeaning = Literal["mistake", "advice"]
MEANINGS: tuple[TriggerMeaning, ...] = ("mistake", "advice")
"""What a firing trigger says: the mistake the pattern guards against happened again (a build
error, a dropped connection), or it is the moment to apply the pattern (a speedup below 1.0)."""
# `NN-slug.md`: the number is the pattern's id, the slug a name for people and `patterns show`.
FILE_NAME = re.compile(r"^(\d{2,})-([a-z0-9]+(?:-[a-z0-9]+)*)\.md$")


SHIPPED = Path(__file__).resolve().parent / "shipped"
"""The library that comes with the cockpit (package data): every workspace starts with it."""


def library_size(directory: Path) -> int:
    """How many patterns the library holds (the shipped ones, and the workspace folder's that add
    to them: NN-slug.md, an id once), without reading them: what the header counts before
    anything needs the patterns themselves."""
    ids: set[str] = set()
    for folder in (SHIPPED, directory):
        try:
            ids |= {m.group(1) for entry in folder.iterdir()
                    if (m := FILE_NAME.match(entry.name)) and entry.is_file()}
        except OSError:
            continue
    return len({i.lstrip("0") for i in ids})


@dataclass(frozen=True)
class OutputTrigger:
    """Fires on an output line that `regex` finds (case-sensitive unless it starts with (?i)):
    compiled by the `regex` module, whose searches take a timeout (output_search.match_output)."""

    regex: Any
    gate: str | None = None
    lines_regex: Any = None
    """The same regex over many lines at once (^ and $ at each line), when that finds every line
    `regex` finds; None: searched a line at a time."""


@dataclass(frozen=True)
class VerdictTrigger:
    """Fires when `field op value` holds for a gate's result, e.g. speedup < 0.5."""

    field: str
    op: str
    value: float | str
    condition: str
    gate: str | None = None


Trigger = OutputTrigger | VerdictTrigger


@dataclass(frozen=True)
class Pattern:
    id: int
    title: str
    status: PatternStatus
    time_saved_min: int
    problem: str
    when: str
    solution: str
    evidence: tuple[str, ...]
    triggers: tuple[Trigger, ...]
    body: str
    path: Path
    triggers_mean: TriggerMeaning = "mistake"

    @property
    def slug(self) -> str:
        m = FILE_NAME.match(self.path.name)
        return m.group(2) if m else self.path.stem
