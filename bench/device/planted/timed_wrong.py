"""A cheat (issue 46): the candidate is right for its first 8 calls per shape, then 1 % wrong,
as a kernel that behaves while the correctness gate watches and takes a shortcut once timed
does. Correctness passes it (3 rounds and a repeat: 4 calls per shape); the bench must fail it
with its own line, "right when checked, wrong when timed (call N of shape S): rel L2 1.00e-02 >
1e-05", where before issue 46 it read 0.91x "comparable"."""

from __future__ import annotations

import torch

from cockpit.workload import Reference, Workload, axes, rel_l2

_CALLS: dict[tuple[int, ...], int] = {}


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    key = tuple(x.shape)
    _CALLS[key] = _CALLS.get(key, 0) + 1
    if _CALLS[key] <= 8:
        return out.copy_(torch.softmax(x, -1))
    return torch.mul(torch.softmax(x, -1), 1.01, out=out)


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(M, N, generator=gen, device="cuda", dtype=torch.float32),)


WORKLOAD = Workload(
    name="timed-wrong",
    candidates={"ours": ours},
    references=(Reference("fp64", lambda x: torch.softmax(x.double(), -1), oracle=True),
                Reference("torch.softmax", lambda x: torch.softmax(x, -1), baseline=True)),
    make_inputs=make_inputs,
    make_output=lambda x, **shape: torch.empty_like(x),
    test_grid=axes(M=[4, 64], N=[256]),
    bench_grid=axes(M=[4096], N=[1024, 4096, 8192]),
    check=rel_l2(1e-5),
    bytes=lambda M, N: 2.0 * M * N * 4,
)
