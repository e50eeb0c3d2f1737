"""The same write past the end as sanitize_past_end.py, by a CUDA kernel built with load_inline
(`-lineinfo`, as the cockpit's Inline builds always are): memcheck's finding must name
`twice_kernel` and its line in the generated .cu file. Run the build gate first, so the
sanitized run loads the built module rather than compiling under the tool.

    [workload] module = "workloads/sanitize_past_end_cuda.py"   candidates = ["honest"] or ["past_end"]
"""

from __future__ import annotations

import torch

from cockpit.workload import Inline, Reference, Workload, axes, rel_l2

PAST = 16
"""Floats written past the end of the output by `past_end`."""

KERNEL = Inline(
    name="cockpit_planted_past_end",
    cpp_sources="torch::Tensor twice(torch::Tensor x, torch::Tensor out, int64_t extra);",
    cuda_sources=r"""
#include <torch/extension.h>

__global__ void twice_kernel(const float* x, float* y, long n, long extra) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
    else if (i < n + extra) y[i] = 0.0f;  // extra > 0: past the end of y
}

torch::Tensor twice(torch::Tensor x, torch::Tensor out, int64_t extra) {
    long n = x.numel();
    int threads = 256;
    long blocks = (n + extra + threads - 1) / threads;
    twice_kernel<<<blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), n, extra);
    return out;
}
""",
    functions=("twice",),
)


def honest(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return KERNEL.load().twice(x, out, 0)


def past_end(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return KERNEL.load().twice(x, out, PAST)


def make_inputs(seed: int, /, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(N, generator=gen, device="cuda", dtype=torch.float32),)


WORKLOAD = Workload(
    name="sanitize-past-end-cuda",
    build=KERNEL,
    candidates={"honest": honest, "past_end": past_end},
    references=(Reference("2 * x", lambda x: 2.0 * x, baseline=True),),
    make_inputs=make_inputs,
    make_output=lambda x, **_: torch.empty_like(x),
    test_grid=axes(N=[1000, 4097, 1 << 16, 1 << 20]),
    bench_grid=axes(N=[1 << 20, 1 << 24]),
    check=rel_l2(1e-6),
    bytes=lambda N: 8.0 * N,
)
