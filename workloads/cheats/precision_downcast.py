"""Precision downcast: the whole op done in bfloat16 for a float32 workload whose check is loose
(rel L2 5e-2 passes bfloat16's worst, ~3e-2 on these inputs). Caught by a tolerance that the op
done wholly in the next lower precision must fail."""

from __future__ import annotations

import torch
from cheat_kit import softmax_workload

from cockpit.workload import rel_l2

GATE = "correctness"
GUARD = "precision-floor"
EXPECT = 'computed in a lower precision?'
CPU_OK = True


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    low = x.bfloat16()
    low = (low - low.amax(-1, keepdim=True)).exp()
    return out.copy_(low / low.sum(-1, keepdim=True))


WORKLOAD = softmax_workload("cheat: precision downcast", ours, check=rel_l2(5e-2))
