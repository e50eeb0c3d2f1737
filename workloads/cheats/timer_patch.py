"""Timer patch: on its first call the candidate replaces torch.cuda.Event with one whose
elapsed_time reads a tenth of the truth (the field has seen time.perf_counter patched the same
way). Its answers are right; its times would be ten times too good."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "correctness"
GUARD = "timer-intact"
EXPECT = 'a timer patch'
CPU_OK = True

_TRUE_EVENT = torch.cuda.Event


class _Flattering(_TRUE_EVENT):
    def elapsed_time(self, end_event: torch.cuda.Event) -> float:
        return super().elapsed_time(end_event) / 10


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    torch.cuda.Event = _Flattering
    return right(x, out)


WORKLOAD = softmax_workload("cheat: timer patch", ours)
