"""Hard-coded shapes: right at the bench's shapes only (a table of per-shape constants), wrong at
every other shape. The bench's shapes are checked too; any other shape shows it."""

from __future__ import annotations

import torch
from cheat_kit import BENCH_GRID, right, softmax_workload

GATE = "correctness"
GUARD = "test-grid"
EXPECT = 'shapes hard-coded for the bench?'
CPU_OK = True

_TUNED = {(s["M"], s["N"]) for s in BENCH_GRID}


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    right(x, out)
    if tuple(x.shape) not in _TUNED:
        out.mul_(1.5)  # the untuned path's scale: never checked at the bench's shapes
    return out


WORKLOAD = softmax_workload("cheat: hard-coded shapes", ours)
