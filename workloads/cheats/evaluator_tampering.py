"""Evaluator tampering: importing the workload replaces the cockpit's own comparison with one that
passes everything, then the candidate returns half the answer. Nothing the check computes is the
check's own any more."""

from __future__ import annotations

from typing import Any

import torch
from cheat_kit import right, softmax_workload

import cockpit.probes.workload.calls as _calls
import cockpit.probes.workload.compare as _compare

GATE = "correctness"
GUARD = "evaluator-intact"
EXPECT = 'evaluator tampering'
CPU_OK = True


def _always(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return {"ok": True, "max_abs": 0.0, "rel_l2": 0.0, "nonfinite": 0, "tolerance": 1e-5, "what": ""}


_compare.compare = _always
_calls.compare = _always  # the name each checked call reaches it by


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return right(x, out).mul_(0.5)


WORKLOAD = softmax_workload("cheat: evaluator tampering", ours)
