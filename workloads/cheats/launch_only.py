"""Launch-only timing: the candidate returns before its work is even launched, and launches it
when the host next waits for the device (torch.cuda.synchronize, which the check calls before it
compares). A timer that records its end event as the call returns, and waits only on that event,
times nothing of the work.

GPU only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from cheat_kit import right, softmax_workload

GATE = "bench"
GUARD = "kernel-records"
EXPECT = "launched after its call returned"
ALSO = ("timer-intact", "timed-outputs", "speed-of-light")  # it patches the sync; its output is empty
CPU_OK = False

_PENDING: list[Callable[[], Any]] = []
_WAIT = torch.cuda.synchronize


def _launch_then_wait(*args: Any, **kwargs: Any) -> None:
    while _PENDING:
        _PENDING.pop(0)()
    _WAIT(*args, **kwargs)


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    torch.cuda.synchronize = _launch_then_wait
    _PENDING.append(lambda: right(x, out))
    return out


WORKLOAD = softmax_workload("cheat: launch-only timing", ours)
