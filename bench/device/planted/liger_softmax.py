"""A softmax written the way Liger-Kernel writes its Triton softmax (one program per row, the row
held whole in BLOCK_SIZE = next power of two, warps from the block size as its calculate_settings
picks them), written here from that description for the issue-32 device checks: a Triton kernel no
one on the team tuned, against torch.softmax, at M=4096 and N=1024..8192."""

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


def warps_for(block: int) -> int:
    return 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    block = triton.next_power_of_2(N)
    softmax_row[(M,)](x, out, x.stride(0), out.stride(0), N, BLOCK_SIZE=block, num_warps=warps_for(block))
    return out


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
)
