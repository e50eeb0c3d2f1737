"""A race: the answer differs a little from run to run (here by noise far inside the tolerance, as
an unordered atomic sum or an unsynchronised read gives). Caught by the same inputs twice."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "correctness"
GUARD = "same-bits-on-repeat"
EXPECT = "differs from itself on the same inputs"
CPU_OK = True


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    right(x, out)
    return out.add_(torch.rand_like(out) * 1e-12)


WORKLOAD = softmax_workload("cheat: race", ours)
