"""Row softmax (softmax over the last dimension) as a torch CUDA extension: the declaration every
gate reads. The kernel is softmax.cu (no torch), the binding binding.cpp; README.md says how.

Nothing here touches CUDA at import: the gates import this module in their child Python, and the
cockpit's own checks import it on machines without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from cockpit.workload import Extension, Knob, Profile, Reference, Workload, axes, rel_l2

KERNEL = Extension("cockpit_softmax",
                   sources=("workloads/softmax/softmax.cu", "workloads/softmax/binding.cpp"))

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
BYTES_PER_ELEMENT = {"fp16": 2, "bf16": 2, "fp32": 4}


# The kernel as last committed, built in a folder of its own: "did my change help" is timed side by
# side with the working copy (optional: a repository without that commit leaves it out).
COMMITTED = KERNEL.at("HEAD")


def committed(x: torch.Tensor) -> torch.Tensor:
    return COMMITTED.load().forward(x, torch.empty_like(x))  # type: ignore[no-any-return]


def ours(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """The kernel: writes softmax(x, -1) into `out` and returns it."""
    return KERNEL.load().forward(x, out)


def fp64(x: torch.Tensor) -> torch.Tensor:
    """The oracle: the same softmax in float64."""
    return torch.softmax(x.double(), -1)


def eager(x: torch.Tensor) -> torch.Tensor:
    """torch's own kernel, in the input dtype (dtype in = dtype out)."""
    return torch.softmax(x, -1)


_COMPILED: dict[torch.dtype, Callable[[torch.Tensor], torch.Tensor]] = {}


def compiled(x: torch.Tensor) -> torch.Tensor:
    """torch.compile's kernel (Inductor, Triton underneath), compiled at the first call per dtype."""
    if x.dtype not in _COMPILED:
        _COMPILED[x.dtype] = torch.compile(eager)
    return _COMPILED[x.dtype](x)


def make_inputs(seed: int, /, M: int, N: int, dtype: str) -> tuple[torch.Tensor]:
    """One (M, N) tensor; scaled by 4 so rows have a clear maximum and exp spans a wide range."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(M, N, generator=gen, device="cuda", dtype=torch.float32) * 4
    return (x.to(DTYPES[dtype]),)


def make_output(x: torch.Tensor, **_: Any) -> torch.Tensor:
    return torch.empty_like(x)


def flops(M: int, N: int, **_: Any) -> float:
    """5 per element: the max compare, the subtraction, exp, the sum, the scale by 1/sum."""
    return 5.0 * M * N


def bytes_moved(M: int, N: int, dtype: str) -> float:
    """x read once and y written once: what the kernel must move at least."""
    return 2.0 * M * N * BYTES_PER_ELEMENT[dtype]


def knob_rule(knobs: Mapping[str, Any], limits: Mapping[str, Any]) -> str | None:
    """Why a knob combination cannot work, or None. The kernel's static_asserts say the same; the
    GPU limits matter only for a GPU smaller than the ones the values were chosen for."""
    max_threads = int(limits.get("max_threads_per_block", 1024))
    vec, rows, threads = int(knobs["VEC"]), int(knobs["ROWS_PER_BLOCK"]), int(knobs["LONG_THREADS"])
    warp_max_n = int(knobs["WARP_MAX_N"])
    if 32 * rows > max_threads:
        return f"{rows} rows per block is {32 * rows} threads, over the GPU's {max_threads} per block"
    if threads > max_threads:
        return f"{threads} threads per block on the long-row path, over the GPU's {max_threads}"
    if warp_max_n < 32 * vec:
        return f"WARP_MAX_N={warp_max_n} leaves a lane less than one {vec}-element vector of a row"
    return None


# Where kernels break: a partial last block (M = 1, 129 with 4 rows per block), rows shorter
# than one vector (N = 1), rows that start off a vector boundary (31, 4097, 16385), each warp-path
# cache size at the default knobs (300, 1000, 2048), both sides of the warp/block switch at every
# WARP_MAX_N (1024, 2048, 4096 against 2048, 4097), and the streamed block path (65537 fp32 is
# past every register cache).
TEST_GRID = (
    *axes(M=[1, 129], N=[1, 31, 300, 1000, 2048, 4097, 16385], dtype=["fp16", "bf16", "fp32"]),
    *axes(M=[3], N=[1024, 4096, 65537], dtype=["fp16", "bf16", "fp32"]),
)

# Every input under 1 GiB: the 16384 x 65536 shapes (2 GiB each) are left out.
BENCH_GRID = tuple(
    shape
    for shape in axes(M=[4096, 16384], N=[512, 1024, 4096, 16384, 65536], dtype=["fp16", "bf16"])
    if shape["M"] * shape["N"] * BYTES_PER_ELEMENT[shape["dtype"]] <= 2**30
)

WORKLOAD = Workload(
    name="row-softmax",
    build=KERNEL,
    candidates={"ours": ours},
    references=(
        Reference("fp64", fp64, oracle=True),
        Reference("torch.softmax", eager, baseline=True),
        Reference("torch.compile", compiled, optional=True),
        Reference("ours@HEAD", committed, optional=True, build=COMMITTED),
    ),
    make_inputs=make_inputs,
    make_output=make_output,
    test_grid=TEST_GRID,
    bench_grid=BENCH_GRID,
    check=rel_l2({"fp16": 1e-2, "bf16": 1e-2, "fp32": 1e-5}),
    flops=flops,
    bytes=bytes_moved,
    dtype_key="dtype",
    profile=Profile(kernel=r"softmax_(warp|block)_kernel", shape={"M": 16384, "N": 4096, "dtype": "fp16"}),
    knobs=(
        Knob("ROWS_PER_BLOCK", (1, 2, 4, 8), macro="SOFTMAX_ROWS_PER_BLOCK", default=4,
             words="{} short row(s) per block"),
        Knob("VEC", (1, 2, 4, 8), macro="SOFTMAX_VEC", default=8, words="{}-element loads"),
        Knob("LONG_THREADS", (128, 256, 512, 1024), macro="SOFTMAX_LONG_THREADS", default=512,
             words="{} threads a long row"),
        Knob("WARP_MAX_N", (1024, 2048, 4096), macro="SOFTMAX_WARP_MAX_N", default=2048,
             words="a warp a row up to N={}"),
    ),
    rule=knob_rule,
    # One winner for every N: the defines are compiled into the one extension all shapes share, and
    # each knob already acts on its own rows (ROWS_PER_BLOCK short ones, LONG_THREADS long ones,
    # WARP_MAX_N where they meet), so a single configuration can be best everywhere at once.
    keep_per=(),
)
