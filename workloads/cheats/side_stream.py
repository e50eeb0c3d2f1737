"""Work on a side stream: the candidate launches its kernels on a stream of its own and returns
without joining it. Right once the device syncs (the check syncs), invisible to events recorded on
the caller's stream: the timer reads next to nothing.

GPU only."""

from __future__ import annotations

import torch
from cheat_kit import right, softmax_workload

GATE = "bench"
GUARD = "kernel-records"
EXPECT = 'on another stream'
ALSO = ("timed-outputs", "speed-of-light")  # its output is read before the stream is done; its time ~0
CPU_OK = False

_SIDE: list[torch.cuda.Stream] = []


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    if not _SIDE:
        _SIDE.append(torch.cuda.Stream())
    side = _SIDE[0]
    side.wait_stream(torch.cuda.current_stream())  # its input is ready there; its answer is not waited for
    with torch.cuda.stream(side):
        right(x, out)
    return out


WORKLOAD = softmax_workload("cheat: side stream", ours)
