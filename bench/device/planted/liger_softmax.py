"""A softmax written the way Liger-Kernel writes its Triton softmax (one program per row, the row
held whole in BLOCK_SIZE = next power of two, warps from the block size as its calculate_settings
picks them), written here from that description for the issue-32 device checks: a Triton kernel no
one on the team tuned, against torch.softmax, at M=4096 and N=1024..8192.

With its backward as Liger's softmax has it (issue 35): dx = y * (dy - sum(dy * y)) per row, one
program a row, from the y the forward saved, in a torch.autograd.Function; checked and timed in
forward, backward and full, as Liger's benchmark harness does."""

from __future__ import annotations

from typing import Any

import torch

from cockpit.workload import Reference, TritonJit, Workload, axes, rel_l2

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

if triton is not None:

    @triton.jit
    def softmax_row(x_ptr, y_ptr, stride_x, stride_y, N, BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(y_ptr + row * stride_y + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def softmax_row_backward(dy_ptr, y_ptr, dx_ptr, stride_dy, stride_y, stride_dx, N,
                             BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        dy = tl.load(dy_ptr + row * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + row * stride_y + cols, mask=mask, other=0.0).to(tl.float32)
        dot = tl.sum(dy * y, axis=0)
        tl.store(dx_ptr + row * stride_dx + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)


def warps_for(block: int) -> int:
    return 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4


def forward(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    block = triton.next_power_of_2(N)
    softmax_row[(M,)](x, out, x.stride(0), out.stride(0), N, BLOCK_SIZE=block, num_warps=warps_for(block))
    return out


def backward(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    M, N = y.shape
    dy = dy.contiguous()
    dx = torch.empty_like(y)
    block = triton.next_power_of_2(N)
    softmax_row_backward[(M,)](dy, y, dx, dy.stride(0), y.stride(0), dx.stride(0), N, BLOCK_SIZE=block,
                               num_warps=warps_for(block))
    return dx


class LigerSoftmax(torch.autograd.Function):
    """Liger's LigerSoftmaxFunction: the forward kernel, y saved, the backward kernel."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = forward(x, torch.empty_like(x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, dy: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return backward(dy, y)


def ours(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """Forward mode: into the gate's buffer (poisoned with NaN first). Backward and full: through
    the autograd Function (no buffer is passed there)."""
    return forward(x, out) if out is not None else LigerSoftmax.apply(x)


def make_inputs(seed: int, /, M: int, N: int, dtype: str) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return ((torch.randn(M, N, generator=gen, device="cuda") * 3).to(getattr(torch, dtype)),)


WORKLOAD = Workload(
    name="liger-style-softmax",
    build=TritonJit(),
    candidates={"ours": ours},
    references=(Reference("fp32", lambda x: torch.softmax(x.float(), -1), oracle=True),
                Reference("torch.softmax", lambda x: torch.softmax(x, -1), baseline=True)),
    make_inputs=make_inputs,
    make_output=lambda x, **_: torch.empty_like(x),
    test_grid=axes(M=[3, 129], N=[1000, 4096], dtype=["bfloat16"]),
    bench_grid=axes(M=[4096], N=[1024, 2048, 4096, 8192], dtype=["bfloat16"]),
    check=rel_l2({"bfloat16": 1e-2}),
    bytes=lambda M, N, dtype: 2.0 * M * N * 2,
    dtype_key="dtype",
    modes=("forward", "backward", "full"),
    grad_inputs=(0,),
    backward_bytes=lambda M, N, dtype: 3.0 * M * N * 2,  # read y and dy, write dx
)
