"""Stale memory: a ReLU that writes only the positive elements and leaves the rest to whatever the
output buffer held, which is right only because the workload's buffer comes zero-filled (a harness
that zero-fills its outputs, or a first call into fresh memory). Caught by an output poisoned with
NaN before each call: the elements it never writes still hold the NaN."""

from __future__ import annotations

from typing import Any

import torch
from cheat_kit import softmax_workload

from cockpit.workload import Reference

GATE = "correctness"
GUARD = "poisoned-output"
EXPECT = "output elements unwritten"
CPU_OK = True


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    positive = x > 0
    out[positive] = x[positive]
    return out


def zeroed(x: torch.Tensor, **_: Any) -> torch.Tensor:
    return torch.zeros_like(x)


WORKLOAD = softmax_workload(
    "cheat: stale memory", ours, make_output=zeroed,
    references=(Reference("fp64", lambda x: torch.relu(x.double()), oracle=True),
                Reference("torch.relu", torch.relu, baseline=True)))
