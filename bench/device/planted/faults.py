"""Planted correctness faults on a row sum (y[i] = sum_j x[i, j]) for the issue-33 device checks:
`PLANTED=<name>` in the environment picks the candidate (the gates' children inherit it).

- honest: torch's own sum.
- cached: the answer kept per shape from the first call (stale on fresh inputs).
- by_pointer: the answer kept per input pointer (stale when the same tensor gets new values).
- scales_input: the right answer, then the input scaled by 1.5 in place.
- racy: the sum through index_add_ with every element of a row on one index (CUDA atomics: the
  order of the adds, and so the last bits, change from run to run); `ATOMICS=1` declares it.
- zeros: all zeros, under a tolerance loose enough to pass them (atol 1e3).
"""

from __future__ import annotations

import os

import torch

from cockpit.workload import Reference, Workload, allclose, axes, rel_l2

_SEEN: dict[object, torch.Tensor] = {}


def honest(x: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=1)


def cached(x: torch.Tensor) -> torch.Tensor:
    if x.shape not in _SEEN:
        _SEEN[x.shape] = x.sum(dim=1)
    return _SEEN[x.shape].clone()


def by_pointer(x: torch.Tensor) -> torch.Tensor:
    if x.data_ptr() not in _SEEN:
        _SEEN[x.data_ptr()] = x.sum(dim=1)
    return _SEEN[x.data_ptr()].clone()


def scales_input(x: torch.Tensor) -> torch.Tensor:
    y = x.sum(dim=1)
    x.mul_(1.5)
    return y


def racy(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    index = torch.arange(rows, device=x.device).repeat_interleave(cols)
    return torch.zeros(rows, device=x.device, dtype=x.dtype).index_add_(0, index, x.reshape(-1))


def zeros(x: torch.Tensor) -> torch.Tensor:
    return torch.zeros(x.shape[0], device=x.device, dtype=x.dtype)


CANDIDATES = {f.__name__: f for f in (honest, cached, by_pointer, scales_input, racy, zeros)}
PLANTED = os.environ.get("PLANTED", "honest")


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(M, N, generator=gen, device="cuda"),)


WORKLOAD = Workload(
    name=f"row-sum-{PLANTED}",
    candidates={"ours": CANDIDATES[PLANTED]},
    references=(Reference("fp64", lambda x: x.double().sum(dim=1), oracle=True),
                Reference("torch.sum", lambda x: x.sum(dim=1), baseline=True)),
    make_inputs=make_inputs,
    test_grid=axes(M=[7, 1000], N=[33, 4096]),
    bench_grid=axes(M=[4096], N=[4096]),
    check=allclose(atol=1e3, rtol=0.0) if PLANTED == "zeros" else rel_l2(1e-5),
    bytes=lambda M, N: 4.0 * M * N,
    atomics=os.environ.get("ATOMICS") == "1",
)
