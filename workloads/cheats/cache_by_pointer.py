"""Cache by pointer: the answer kept per input pointer and handed back whenever the same tensor
comes again, whatever its values now are. A harness that times one set of input tensors over and
over times a copy. Caught when the check writes new values into the very tensors it passed before."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "correctness"
GUARD = "fresh-rounds"
EXPECT = 'a result kept per input pointer'
CPU_OK = True

_KEPT: dict[int, torch.Tensor] = {}


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    if x.data_ptr() not in _KEPT:
        _KEPT[x.data_ptr()] = right(x, torch.empty_like(x))
    return out.copy_(_KEPT[x.data_ptr()])


WORKLOAD = softmax_workload("cheat: cache by pointer", ours)
