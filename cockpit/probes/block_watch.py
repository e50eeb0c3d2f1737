"""The probe's own judge of each timed block (cockpit/analysis/block_validity.py's rule) against
the NVML samples its watch has taken so far: a block is judged once the watch has a sample after
it, so the block's end is seen."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from cockpit.analysis.block_validity import (
    STREAK,
    BlockRules,
    around,
    block_fault,
    reference_clock,
    unclean_line,
)
from cockpit.probes.gpu_watch import GpuWatch


@dataclass
class CellBlocks:
    """One implementation's blocks on one config: how many were re-measured and why."""

    remeasured: int = 0
    why: dict[str, int] = field(default_factory=dict)
    unclean: str | None = None

    def drop(self, word: str) -> None:
        self.remeasured += 1
        self.why[word] = self.why.get(word, 0) + 1

    def fields(self) -> dict[str, object]:
        out: dict[str, object] = {"remeasured": self.remeasured, "clean": self.unclean is None}
        if self.why:
            out["remeasured_why"] = dict(self.why)
        if self.unclean is not None:
            out["unclean_why"] = self.unclean
        return out


class BlockJudge:
    """Judges blocks by their wall-clock spans; None-safe when NVML is not there (every block
    clean: the window verdict says the GPU was not watched)."""

    def __init__(self, watch: GpuWatch | None, rules: BlockRules | None = None) -> None:
        self.watch = watch
        self.rules = rules or BlockRules()
        self.attempts = 0
        """Re-measures on the current config (the budget and the waits count them)."""
        self.gave_up = False
        self.streak = 0
        self.reference: float | None = None
        """Configs in a row that gave up: from STREAK on, one re-measure each."""

    def new_config(self) -> None:
        """A config starts: the last one's outcome counts towards the streak, and the run's busy
        clock so far is its blocks' reference."""
        self.streak = self.streak + 1 if self.gave_up else 0
        self.attempts = 0
        self.gave_up = False
        if self.watching and self.watch is not None:
            self.reference = reference_clock(self.watch.samples,  # type: ignore[arg-type]
                                             float(self.watch.gpu.get("max_sm_clock") or 0) or None)

    @property
    def watching(self) -> bool:
        return self.watch is not None and self.watch.error is None and bool(self.watch.samples)

    def seen_after(self, t1: float) -> bool:
        samples = self.watch.samples if self.watch is not None else []
        return bool(samples) and samples[-1]["t"] > t1

    def wait_past(self, t1: float, limit_s: float = 0.2) -> None:
        """Until the watch has a sample after `t1` (at most `limit_s`)."""
        deadline = time.time() + limit_s
        while self.watching and not self.seen_after(t1) and time.time() < deadline:
            time.sleep(0.005)

    def fault(self, t0: float, t1: float) -> str | None:
        if not self.watching or self.watch is None:
            return None
        samples: Sequence[dict[str, float]] = self.watch.samples  # type: ignore[assignment]
        reference = self.reference or float(self.watch.gpu.get("max_sm_clock") or 0) or None
        return block_fault(around(samples, t0, t1), reference, self.rules)

    def spent(self) -> bool:
        return self.attempts >= (1 if self.streak >= STREAK else self.rules.budget)

    def recover(self) -> None:
        """Wait for the card to recover before a re-measure (the waits double)."""
        time.sleep(self.rules.wait_s(self.attempts))
        self.attempts += 1

    def give_up(self, cell: CellBlocks) -> None:
        self.gave_up = True
        cell.unclean = unclean_line(cell.why, max(cell.remeasured, 1))
