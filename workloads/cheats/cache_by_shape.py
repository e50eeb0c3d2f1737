"""Cache by shape: each shape's answer computed once and handed back on every later call of that
shape (held #1 on a live GPU MODE leaderboard in 2026). Caught by new tensors with new values."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "correctness"
GUARD = "fresh-rounds"
EXPECT = 'a result kept per shape'
CPU_OK = True

_KEPT: dict[tuple[int, ...], torch.Tensor] = {}


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    key = tuple(x.shape)
    if key not in _KEPT:
        _KEPT[key] = right(x, torch.empty_like(x))
    return out.copy_(_KEPT[key])


WORKLOAD = softmax_workload("cheat: cache by shape", ours)
