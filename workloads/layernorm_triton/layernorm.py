"""Layer norm forward in Triton: the kernel and its declaration for every gate.

y = (x - mean) / sqrt(var + eps) * weight + bias over the last dimension of a (M, N) tensor,
statistics in fp32. One program normalizes ROWS rows held whole in registers: a (ROWS, BLOCK_N)
tile, BLOCK_N the power of two at or above N, the columns past N masked off (they load as 0 and
are left out of the variance and the store). The variance is taken around the mean (two passes
over the registers), not as E[x²] - mean², which cancels when the mean is large.

Triton is imported when it is there: the gates' child Python on the GPU box has it; a machine
without it (CI) can still read this declaration, and the candidate then says triton is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
import torch.nn.functional as F

from cockpit.workload import Knob, Profile, Reference, TritonJit, Workload, axes, rel_l2

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

EPS = 1e-5
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
BYTES_PER_ELEMENT = {"fp16": 2, "bf16": 2, "fp32": 4}

# A thread holds at most this many elements of x: with the weight and bias beside them that is
# what 16 warps' 128 registers a thread hold (ptxas for sm_90: fp16 without spills, fp32 with a
# 24-byte stack). At 32 warps (64 registers a thread) the same share spills hundreds of bytes.
MAX_PER_THREAD = 64
MAX_WARPS = 16
MAX_N = 32 * MAX_WARPS * MAX_PER_THREAD  # 32768: the longest row one program holds

if triton is not None:

    @triton.jit
    def layernorm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, stride_x, stride_y, eps,
                             BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
        rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
        cols = tl.arange(0, BLOCK_N)
        col_ok = cols < N
        mask = (rows < M)[:, None] & col_ok[None, :]
        offsets = rows.to(tl.int64)[:, None]  # M * N may pass 2^31 elements
        x = tl.load(x_ptr + offsets * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=1) / N
        centred = tl.where(mask, x - mean[:, None], 0.0)
        var = tl.sum(centred * centred, axis=1) / N
        rstd = 1.0 / tl.sqrt(var + eps)
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        y = centred * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(y_ptr + offsets * stride_y + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def launch_plan(N: int, rows: int, num_warps: int) -> tuple[int, int, int]:
    """(BLOCK_N, rows per program, warps) for rows of N elements and the knobs ROWS, num_warps.

    No thread holds more than MAX_PER_THREAD elements of x (past that the tile spills to local
    memory): ROWS is halved until the tile fits num_warps warps, and a single row that still does
    not fit raises the warps. So every knob value runs every N; on long rows the plan, not the
    knobs, has the last word on the tile."""
    if N > MAX_N:
        raise ValueError(f"rows of {N} elements: this one-tile kernel holds at most {MAX_N}")
    block_n = 1 << max(0, N - 1).bit_length()
    while rows > 1 and rows * block_n > 32 * num_warps * MAX_PER_THREAD:
        rows //= 2
    warps = num_warps
    while warps < MAX_WARPS and rows * block_n > 32 * warps * MAX_PER_THREAD:
        warps *= 2
    return block_n, rows, warps


def ours(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, out: torch.Tensor, *,
         num_warps: int = 4, ROWS: int = 1) -> torch.Tensor:
    """The kernel: layer norm of each row of the (M, N) tensor x into `out`, which it returns."""
    if triton is None:
        raise RuntimeError("triton does not import in this python: install it (torch's CUDA wheels "
                           "bring it) to run the layernorm_triton workload")
    if x.dim() != 2 or x.stride(1) != 1 or out.shape != x.shape or out.stride(1) != 1:
        raise ValueError(f"layernorm: x and out must be (M, N) with contiguous rows, got x "
                         f"{tuple(x.shape)} strides {x.stride()}, out {tuple(out.shape)}")
    M, N = x.shape
    if not (weight.shape == bias.shape == (N,) and weight.is_contiguous() and bias.is_contiguous()):
        raise ValueError(f"layernorm: weight and bias must be contiguous ({N},), got "
                         f"{tuple(weight.shape)} and {tuple(bias.shape)}")
    if M == 0:
        return out
    block_n, rows, warps = launch_plan(N, ROWS, num_warps)
    layernorm_fwd_kernel[(triton.cdiv(M, rows),)](
        x, weight, bias, out, M, N, x.stride(0), out.stride(0), EPS,
        BLOCK_N=block_n, ROWS=rows, num_warps=warps)
    return out


def fp32(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The oracle: torch's layer norm on float32 copies."""
    return F.layer_norm(x.float(), (x.shape[-1],), weight.float(), bias.float(), EPS)


def eager(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """torch's own kernel, in the input dtype."""
    return F.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


_COMPILED: dict[torch.dtype, Callable[..., torch.Tensor]] = {}


def compiled(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """torch.compile's kernel (Inductor), compiled at the first call per dtype."""
    if x.dtype not in _COMPILED:
        _COMPILED[x.dtype] = torch.compile(eager)
    return _COMPILED[x.dtype](x, weight, bias)


def make_inputs(seed: int, /, M: int, N: int, dtype: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x (M, N) centred on 1, not 0 (E[x²] - mean² loses digits as the mean grows), weight near 1
    and bias near 0, all in the dtype."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(M, N, generator=gen, device="cuda") * 2 + 1
    weight = 1 + 0.1 * torch.randn(N, generator=gen, device="cuda")
    bias = 0.1 * torch.randn(N, generator=gen, device="cuda")
    dt = DTYPES[dtype]
    return x.to(dt), weight.to(dt), bias.to(dt)


def make_output(x: torch.Tensor, *_: Any, **__: Any) -> torch.Tensor:
    return torch.empty_like(x)


def flops(M: int, N: int, **_: Any) -> float:
    """7 per element: the sum for the mean, the subtraction, the square, the sum of squares, the
    scale by 1/std, the weight, the bias (the per-row sqrt and divisions are left out)."""
    return 7.0 * M * N


def bytes_moved(M: int, N: int, dtype: str) -> float:
    """x read and y written once, weight and bias read once."""
    return (2.0 * M * N + 2.0 * N) * BYTES_PER_ELEMENT[dtype]


def knob_rule(knobs: Mapping[str, Any], limits: Mapping[str, Any]) -> str | None:
    """Why a knob combination cannot work, or None. BLOCK_N follows N and launch_plan raises the
    warps for long rows, so only the GPU's block size can rule a value out."""
    max_threads = int(limits.get("max_threads_per_block", 1024))
    threads = 32 * int(knobs["num_warps"])
    if threads > max_threads:
        return f"{knobs['num_warps']} warps is {threads} threads, over the GPU's {max_threads} per block"
    return None


# Where kernels break: a partial last program at every ROWS (M = 1, 3, 129), a row of one element,
# odd lengths (31, 300, 1000, 4097, 16385 under their power-of-two tiles), fp32 next to 16-bit.
TEST_GRID = (
    *axes(M=[1, 129], N=[1, 31, 300, 1000, 4097, 16385], dtype=["fp16", "bf16", "fp32"]),
    *axes(M=[3], N=[1024, 4096], dtype=["fp16", "bf16", "fp32"]),
)

WORKLOAD = Workload(
    name="layernorm-triton",
    build=TritonJit(),
    candidates={"ours": ours},
    references=(
        Reference("fp32", fp32, oracle=True),
        Reference("torch.layer_norm", eager, baseline=True),
        Reference("torch.compile", compiled, optional=True),
    ),
    make_inputs=make_inputs,
    make_output=make_output,
    test_grid=TEST_GRID,
    bench_grid=axes(M=[4096, 16384], N=[512, 1024, 4096, 16384], dtype=["fp16", "bf16"]),
    check=rel_l2({"fp16": 1e-2, "bf16": 1e-2, "fp32": 1e-5}),
    flops=flops,
    bytes=bytes_moved,
    dtype_key="dtype",
    profile=Profile(kernel=r"layernorm_fwd_kernel", shape={"M": 16384, "N": 4096, "dtype": "fp16"}),
    knobs=(
        Knob("num_warps", (1, 2, 4, 8, 16), via="kwarg", default=4),
        Knob("ROWS", (1, 2, 4), via="kwarg", default=1),
    ),
    rule=knob_rule,
    keep_per=("N",),
)
