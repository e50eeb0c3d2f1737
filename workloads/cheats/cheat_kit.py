"""What the cheat catalogue's workloads share: one op (row softmax in float32, checked against
float64), its inputs on the GPU when there is one, else on the CPU (where the correctness-side
cheats run in CI), an honest way to compute it with kernels of its own (not the baseline's: the
baseline's own kernels would be flagged as the reference), and `softmax_workload(name, ours, ...)`
that plants one candidate in it. Each cheat's module changes what its cheat needs."""

from __future__ import annotations

from typing import Any

import torch

from cockpit.workload import Reference, Workload, axes, rel_l2

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TEST_GRID = axes(M=[1, 33], N=[256, 1000])
# Big enough on a GPU for a timed kernel to be a kernel's time; small on a CPU, where the
# correctness gate checks the bench grid's shapes too.
BENCH_GRID = axes(M=[4096], N=[1024, 4096]) if DEVICE == "cuda" else axes(M=[64], N=[2048])


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    return (torch.randn(M, N, generator=gen, device=DEVICE) * 4,)


def make_output(x: torch.Tensor, **_: Any) -> torch.Tensor:
    return torch.empty_like(x)


def fp64(x: torch.Tensor) -> torch.Tensor:
    """The oracle."""
    return torch.softmax(x.double(), -1)


def eager(x: torch.Tensor) -> torch.Tensor:
    """The baseline: torch's own kernel."""
    return torch.softmax(x, -1)


def right(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """The honest answer into `out`, by kernels of its own: max, exp, sum, scale."""
    torch.sub(x, x.amax(-1, keepdim=True), out=out)
    out.exp_()
    return out.div_(out.sum(-1, keepdim=True))


def softmax_workload(name: str, ours: Any, **changes: Any) -> Workload:
    """The catalogue's op with `ours` as its one candidate (and whatever else `changes` says)."""
    base: dict[str, Any] = dict(
        name=name, candidates={"ours": ours},
        references=(Reference("fp64", fp64, oracle=True), Reference("torch.softmax", eager, baseline=True)),
        make_inputs=make_inputs, make_output=make_output, test_grid=TEST_GRID, bench_grid=BENCH_GRID,
        check=rel_l2(1e-5), bytes=lambda M, N: 8.0 * M * N, dtype_key=None)
    return Workload(**{**base, **changes})
