"""Calling the reference: the candidate calls the baseline's own op (torch.softmax), so every
speedup it shows is 1x plus noise, and no kernel of its own was ever written."""

from __future__ import annotations

import torch
from cheat_kit import softmax_workload

GATE = "correctness"
GUARD = "is-reference"
EXPECT = "is this the reference?"
CPU_OK = True


def ours(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, -1)


WORKLOAD = softmax_workload("cheat: calling the reference", ours, make_output=None)
