"""Stale memory: the kernel writes only the first half of each row; the rest of the output is
whatever the buffer held (a previous call's answer, where a harness reuses one output buffer).
Caught by an output poisoned with NaN before each call."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "correctness"
GUARD = "poisoned-output"
EXPECT = "NaN/Inf"
CPU_OK = True


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    out[:, :half] = right(x, torch.empty_like(x))[:, :half]
    return out


WORKLOAD = softmax_workload("cheat: stale memory", ours)
