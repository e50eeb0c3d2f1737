"""A fast path never taken: a Triton kernel written for float16 behind a dtype test that a float32
workload never passes, and torch's softmax underneath that answers every call. Correctness passes,
but it is torch's; the kernel is never run. Caught by ghost replay: with the kernel a no-op, the
output is the same.

GPU only (Triton)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from cheat_kit import right, softmax_workload

from cockpit.workload import TritonJit

GATE = "correctness"
GUARD = "ghost-replay"
EXPECT = "its output does not change when its kernel is a no-op"
CPU_OK = False


@triton.jit
def _rows(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    v = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, 0))
    tl.store(y_ptr + row * stride + cols, (e / tl.sum(e, 0)).to(y_ptr.dtype.element_ty), mask=mask)


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    if x.dtype == torch.float16 and x.is_contiguous():  # the fast path: never, for float32
        _rows[(x.shape[0],)](x, out, x.shape[-1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[-1]))
        return out
    return right(x, out)


WORKLOAD = softmax_workload("cheat: a fast path never taken", ours, build=TritonJit())
