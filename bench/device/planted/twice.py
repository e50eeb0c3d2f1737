"""A known 2x: the candidate is torch.softmax launched twice, the baseline torch.softmax once. Every
size must read 0.50x +- 0.01, the small ones too (their eager time is the host's launch cost; the
device time is the kernels')."""

from __future__ import annotations

import torch

from cockpit.workload import Reference, Workload, axes, rel_l2


def ours(x: torch.Tensor) -> torch.Tensor:
    torch.softmax(x, -1)
    return torch.softmax(x, -1)


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(M, N, generator=gen, device="cuda", dtype=torch.float32),)


WORKLOAD = Workload(
    name="launched-twice",
    candidates={"ours": ours},
    references=(Reference("torch.softmax", lambda x: torch.softmax(x, -1), baseline=True),),
    make_inputs=make_inputs,
    test_grid=axes(M=[4], N=[256]),
    bench_grid=axes(M=[4096], N=[64, 256, 1024, 4096, 16384]),
    check=rel_l2(1e-5),
    bytes=lambda M, N: 2.0 * M * N * 4,
)
