"""A known 2x: the candidate launches torch.softmax twice, on two inputs of the same size, the
baseline once. Every size must read 0.50x +- 0.01, the small ones too (their eager time is the
host's launch cost; the device time is the kernels'). Two inputs, not one twice: the first visit
(2026-11-25) launched softmax twice on the same x, and the second launch read x from L2 (0.54x at
N=64, 0.50x only past L2); that measures the cache, not the bench."""

from __future__ import annotations

import torch

from cockpit.workload import Reference, Workload, axes, rel_l2


def ours(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    torch.softmax(y, -1)
    return torch.softmax(x, -1)


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(M, N, generator=gen, device="cuda", dtype=torch.float32),
            torch.randn(M, N, generator=gen, device="cuda", dtype=torch.float32))


WORKLOAD = Workload(
    name="launched-twice",
    candidates={"ours": ours},
    references=(Reference("torch.softmax", lambda x, y: torch.softmax(x, -1), baseline=True),),
    make_inputs=make_inputs,
    test_grid=axes(M=[4], N=[256]),
    bench_grid=axes(M=[4096], N=[64, 256, 384, 1024, 4096, 16384]),
    check=rel_l2(1e-5),
    bytes=lambda M, N: 4.0 * M * N * 4,
)
