"""Work from a background thread: the candidate hands its work to a thread that launches it on a
stream of that thread's own, waits until it is launched, and returns. The device has the work (the
check's sync finds the answer); the caller's stream, where the timer's events are, never had it.

GPU only."""

from __future__ import annotations

import threading

import torch
from cheat_kit import right, softmax_workload

GATE = "bench"
GUARD = "kernel-records"
EXPECT = 'from another thread'
ALSO = ("timed-outputs", "speed-of-light")  # its output is read before the thread is done; its time ~0
CPU_OK = False


def _launch(x: torch.Tensor, out: torch.Tensor, launched: threading.Event) -> None:
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.default_stream())
    with torch.cuda.stream(stream):
        right(x, out)
    launched.set()


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    launched = threading.Event()
    threading.Thread(target=_launch, args=(x, out, launched), daemon=True).start()
    launched.wait()
    return out


WORKLOAD = softmax_workload("cheat: background thread", ours)
