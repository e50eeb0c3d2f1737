"""Cache by pointer: the answer kept per input pointer and handed back whenever the same tensor
comes again, whatever its values now are. A harness that times one set of input tensors over and
over times a copy. Caught when the check writes new values into the very tensors it passed before.
Keyed by the pointer with the shape beside it: an allocator hands a freed pointer to a tensor of
another shape, and a cache keyed by the pointer alone then crashes instead of cheating."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "correctness"
GUARD = "fresh-rounds"
EXPECT = 'a result kept per input pointer'
CPU_OK = True

_KEPT: dict[tuple[int, tuple[int, ...]], torch.Tensor] = {}


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    key = (x.data_ptr(), tuple(x.shape))
    if key not in _KEPT:
        _KEPT[key] = right(x, torch.empty_like(x))
    return out.copy_(_KEPT[key])


WORKLOAD = softmax_workload("cheat: cache by pointer", ours)
