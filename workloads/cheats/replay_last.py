"""Replay of the last input: the last call's answer handed back when the next call looks like it
(same shape), as a harness that repeats one input lets it. Unlike a cache it keeps one answer only.
Caught by a fresh input of the same shape."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "correctness"
GUARD = "fresh-rounds"
EXPECT = "the last call's answer replayed"
CPU_OK = True

_LAST: list[torch.Tensor] = []


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    if not _LAST or _LAST[0].shape != x.shape:
        _LAST[:] = [right(x, torch.empty_like(x))]
    return out.copy_(_LAST[0])


WORKLOAD = softmax_workload("cheat: replay of the last input", ours)
