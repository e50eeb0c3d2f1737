"""A cheat: the candidate computes each shape's answer once and hands the stored tensor back on
every later call, as a submission that caches per shape does. Its time is no kernel's: the bench
must refuse it (faster than the card's memory can move the bytes)."""

from __future__ import annotations

import torch

from cockpit.workload import Reference, Workload, axes, rel_l2

_SEEN: dict[tuple[int, ...], torch.Tensor] = {}


def ours(x: torch.Tensor) -> torch.Tensor:
    key = tuple(x.shape)
    if key not in _SEEN:
        _SEEN[key] = torch.softmax(x, -1)
    return _SEEN[key]


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(M, N, generator=gen, device="cuda", dtype=torch.float32),)


WORKLOAD = Workload(
    name="cached-per-shape",
    candidates={"ours": ours},
    references=(Reference("torch.softmax", lambda x: torch.softmax(x, -1), baseline=True),),
    make_inputs=make_inputs,
    test_grid=axes(M=[4], N=[256]),
    bench_grid=axes(M=[16384], N=[4096, 8192]),
    check=rel_l2(1e-5),
    bytes=lambda M, N: 2.0 * M * N * 4,
)
