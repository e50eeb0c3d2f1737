"""Input mutation: the kernel uses its input as scratch (subtracts each row's max from it in place,
then exponentiates from there). Its answer is right; the next call, and the next candidate, read a
changed input."""

from __future__ import annotations

import torch
from cheat_kit import softmax_workload

GATE = "correctness"
GUARD = "inputs-unchanged"
EXPECT = "changed its input #0 in place"
CPU_OK = True


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    x.sub_(x.amax(-1, keepdim=True))
    torch.exp(x, out=out)
    return out.div_(out.sum(-1, keepdim=True))


WORKLOAD = softmax_workload("cheat: input mutation", ours)
