"""A candidate that crashes at one shape: at N=8192 its Triton kernel stores far past the end of
the output (an illegal memory access, which poisons the CUDA context). The bench must end in one
line naming the config and the implementation, the rows before it kept."""

from __future__ import annotations

import torch

from cockpit.workload import Reference, TritonJit, Workload, axes, rel_l2

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

if triton is not None:

    @triton.jit
    def copy(x_ptr, y_ptr, n, past, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs + past, tl.load(x_ptr + offs, mask=mask), mask=mask)


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    past = (1 << 40) if x.shape[-1] == 8192 else 0
    copy[(triton.cdiv(n, 1024),)](x, out, n, past, BLOCK=1024)
    return out


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(M, N, generator=gen, device="cuda"),)


WORKLOAD = Workload(
    name="crash-at-one-shape",
    build=TritonJit(),
    candidates={"ours": ours},
    references=(Reference("clone", lambda x: x.clone(), baseline=True),),
    make_inputs=make_inputs,
    make_output=lambda x, **_: torch.empty_like(x),
    test_grid=axes(M=[4], N=[256]),
    bench_grid=axes(M=[4096], N=[1024, 4096, 8192, 16384]),
    check=rel_l2(1e-6),
    bytes=lambda M, N: 2.0 * M * N * 4,
)
