"""A write past the end that correctness cannot see: y = 2x by a Triton kernel, where `past_end`
also stores 16 floats past the end of its output. The values it must write are right, so it
passes every correctness check; under torch's caching allocator the stray stores land inside a
pooled segment and memcheck sees nothing. The sanitizer gate (caching allocator off) must fail
it, naming the kernel, the access and this file's line; `honest` must pass.

    [workload] module = "workloads/sanitize_past_end.py"   candidates = ["honest"] or ["past_end"]
"""

from __future__ import annotations

import torch

from cockpit.workload import Reference, TritonJit, Workload, axes, rel_l2

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

PAST = 16
"""Floats written past the end of the output by `past_end`."""
BLOCK = 1024

if triton is not None:

    @triton.jit
    def twice_kernel(x_ptr, y_ptr, n, extra, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(y_ptr + offs, 2.0 * x, mask=offs < n + extra)  # extra > 0: past the end of y


def _twice(x: torch.Tensor, out: torch.Tensor, extra: int) -> torch.Tensor:
    n = x.numel()
    twice_kernel[(triton.cdiv(n + extra, BLOCK),)](x, out, n, extra, BLOCK=BLOCK)
    return out


def honest(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return _twice(x, out, 0)


def past_end(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return _twice(x, out, PAST)


def make_inputs(seed: int, /, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(N, generator=gen, device="cuda", dtype=torch.float32),)


WORKLOAD = Workload(
    name="sanitize-past-end",
    build=TritonJit(),
    candidates={"honest": honest, "past_end": past_end},
    references=(Reference("2 * x", lambda x: 2.0 * x, baseline=True),),
    make_inputs=make_inputs,
    make_output=lambda x, **_: torch.empty_like(x),
    test_grid=axes(N=[1000, 4097, 1 << 16, 1 << 20]),
    bench_grid=axes(N=[1 << 20, 1 << 24]),
    check=rel_l2(1e-6),
    bytes=lambda N: 8.0 * N,
)
