"""Right when checked, wrong when timed: right for its first 8 calls on each shape (more than the
correctness gate makes), then a cheaper path that skips the normalisation. Correctness passes; no
timed output is right. (Planted on the H200: correctness 8/8 on 3 rounds, bench "comparable".)

GPU only (the bench)."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "bench"
GUARD = "timed-outputs"
EXPECT = "right when checked, wrong when timed"
CPU_OK = False

_CALLS: dict[tuple[int, ...], int] = {}


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    key = tuple(x.shape)
    _CALLS[key] = _CALLS.get(key, 0) + 1
    if _CALLS[key] <= 8:
        return right(x, out)
    torch.sub(x, x.amax(-1, keepdim=True), out=out)
    return out.exp_()


WORKLOAD = softmax_workload("cheat: right when checked, wrong when timed", ours)
