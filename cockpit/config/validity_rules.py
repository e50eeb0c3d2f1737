"""How strict a bench window's verdict is: the rules `[thresholds]` in cockpit.toml sets, apart
from the judge that applies them (`validity`), so reading a config loads no judge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ValidityMode = Literal["comparable", "strict"]


@dataclass(frozen=True)
class ValidityRules:
    """How strict the verdict is; `[thresholds]` in cockpit.toml sets each of these."""

    mode: ValidityMode = "comparable"
    slowdown_fraction: float = 0.02
    """comparable: a slowdown active longer than this fraction of the window makes it suspect."""
    clock_difference: float = 0.05
    """Ours and the baseline ran at clocks further apart than this (0.05 = 5 %) → suspect,
    unless the power cap explains it (see `block_clocks`)."""
    sm_clock_fraction: float = 0.9
    """strict: a busy SM clock below this fraction of the max makes it suspect."""
    tolerate: frozenset[str] = frozenset()
