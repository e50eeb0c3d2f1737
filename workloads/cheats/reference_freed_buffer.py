"""The reference's freed buffer: the oracle answers a float16 softmax in float32; the harness keeps
a copy of that answer and frees the oracle's own tensor; the candidate asks the allocator for a
float32 buffer of that size and gets the oracle's freed one (a caching allocator hands back the
block just freed). It computes nothing; its answer is the reference's, left in memory. Caught by
the oracle's freed buffers poisoned with NaN before they are freed; with that guard off, by the
check that a candidate repeats its own bits: the repeat call is made with no oracle freed just
before it, and gets another block (on an H200, "differs from itself on the same inputs by max |Δ|
3.69e+19").

GPU only: the CPU's allocator does not hand the block back. Its one shape is where the allocator
hands it back on an H200, M=512 N=1024 (2 MB, the large pool's): elsewhere the pool's best-fitting
free block is often another one (the oracle's own float32 copy of x, say), and the cheat returns
garbage. On an H200 it did at M=1 N=256, M=1031 N=1024 and M=4096 N=1024, where with both its
guards off it was then "caught" by the plain comparison: luck, not a check."""

from __future__ import annotations

import torch
from cheat_kit import DEVICE, softmax_workload

from cockpit.workload import Reference, axes, rel_l2

GATE = "correctness"
GUARD = "poisoned-reference"
EXPECT = "the reference's poisoned freed buffer"
CPU_OK = False
ALSO = ("same-bits-on-repeat",)  # its repeat finds no oracle freed just before it: garbage, not its answer


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    return ((torch.randn(M, N, generator=gen, device=DEVICE) * 4).half(),)


def in_float32(x: torch.Tensor) -> torch.Tensor:
    """The oracle: computed and answered in float32."""
    return torch.softmax(x, -1, dtype=torch.float32)


def ours(x: torch.Tensor) -> torch.Tensor:
    return torch.empty(x.shape, dtype=torch.float32, device=x.device)


WORKLOAD = softmax_workload(
    "cheat: the reference's freed buffer", ours, make_output=None, make_inputs=make_inputs,
    references=(Reference("float32", in_float32, oracle=True),
                Reference("torch.softmax", lambda x: torch.softmax(x, -1), baseline=True)),
    test_grid=axes(M=[512], N=[1024]), check=rel_l2(1e-2), bytes=lambda M, N: 4.0 * M * N)
