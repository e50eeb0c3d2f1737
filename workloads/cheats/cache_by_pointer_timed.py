"""Cache by pointer, once warm: the answer kept per input pointer (and shape), handed back without
a copy from the fifth call at that pointer on. The correctness gate calls it at most twice on one
tensor (a freed tensor's address may come back once more), so it computes there; a bench that times
the same input tensors over and over times nothing.

GPU only (the bench)."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "bench"
GUARD = "shifting-pool"
EXPECT = 'right when checked, wrong when timed'
CPU_OK = False

_SEEN: dict[tuple[int, ...], int] = {}
_KEPT: dict[tuple[int, ...], torch.Tensor] = {}


def ours(x: torch.Tensor) -> torch.Tensor:
    at = (x.data_ptr(), *x.shape)
    _SEEN[at] = _SEEN.get(at, 0) + 1
    if _SEEN[at] > 4 and at in _KEPT:
        return _KEPT[at]
    _KEPT[at] = right(x, torch.empty_like(x))
    return _KEPT[at]


WORKLOAD = softmax_workload("cheat: cache by pointer, once warm", ours, make_output=None)
