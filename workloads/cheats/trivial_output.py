"""Trivial output: all zeros, passed by a tolerance as loose as the values themselves (every
softmax value is within 1 of 0). Caught because the reference is not constant."""

from __future__ import annotations

import torch
from cheat_kit import softmax_workload

from cockpit.workload import allclose

GATE = "correctness"
GUARD = "not-constant"
EXPECT = "returned all zeros"
CPU_OK = True


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return out.zero_()


WORKLOAD = softmax_workload("cheat: trivial output", ours, check=allclose(atol=1.0, rtol=0.0))
