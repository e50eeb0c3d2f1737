"""Layer norm in Triton, forward and backward: the kernels and their declaration for every gate.

y = (x - mean) / sqrt(var + eps) * weight + bias over the last dimension of a (M, N) tensor,
statistics in fp32. One program normalizes ROWS rows held whole in registers: a (ROWS, BLOCK_N)
tile, BLOCK_N the power of two at or above N, the columns past N masked off (they load as 0 and
are left out of the variance and the store). The variance is taken around the mean (two passes
over the registers), not as E[x²] - mean², which cancels when the mean is large.

The backward follows Triton's layer-norm tutorial: one fused kernel computes dx row by row,
dx = (w·dy - (x̂·c1 + c2))·rstd with c1 = mean(x̂·w·dy), c2 = mean(w·dy), from the mean and rstd the
forward stored, and sums each program's rows of dy·x̂ and dy into a partial dw and db; a second
kernel sums the partials over the programs column by column. Unlike the tutorial, each program owns
a block of rows and its partial row (no locks shared by programs): the sums are in fp32 (the
tutorial's fp16 partials lose bf16 digits over a hundred rows) and the same from run to run. The
forward and backward are a torch.autograd.Function, checked and timed in forward, backward and full
(issue 35).

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
    def layernorm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, M, N, stride_x, stride_y, eps,
                             BLOCK_N: tl.constexpr, ROWS: tl.constexpr, STATS: tl.constexpr):
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
        if STATS:  # the backward's: each row's mean and 1/std
            tl.store(mean_ptr + rows, mean, mask=rows < M)
            tl.store(rstd_ptr + rows, rstd, mask=rows < M)

    @triton.jit
    def layernorm_bwd_dx_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr,
                                M, N, stride_dy, stride_x, stride_dx, rows_per_program,
                                BLOCK_N: tl.constexpr):
        """dx of a block of rows, and that block's partial dw and db (fp32) in its own row."""
        pid = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        dw = tl.zeros((BLOCK_N,), dtype=tl.float32)
        db = tl.zeros((BLOCK_N,), dtype=tl.float32)
        first = pid * rows_per_program
        last = tl.minimum(first + rows_per_program, M)
        for row in range(first, last):
            r = row.to(tl.int64)
            x = tl.load(x_ptr + r * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + r * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
            mean = tl.load(mean_ptr + r)
            rstd = tl.load(rstd_ptr + r)
            xhat = tl.where(mask, (x - mean) * rstd, 0.0)
            wdy = w * dy
            c1 = tl.sum(xhat * wdy, axis=0) / N
            c2 = tl.sum(wdy, axis=0) / N
            dx = (wdy - (xhat * c1 + c2)) * rstd
            tl.store(dx_ptr + r * stride_dx + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
            dw += dy * xhat
            db += dy
        tl.store(dw_part_ptr + pid * N + cols, dw, mask=mask)
        tl.store(db_part_ptr + pid * N + cols, db, mask=mask)

    @triton.jit
    def layernorm_bwd_dwdb_kernel(dw_part_ptr, db_part_ptr, dw_ptr, db_ptr, P, N,
                                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        """dw and db: the P partial rows summed, BLOCK_N columns a program (the tutorial's)."""
        cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
        dw = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        db = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for i in range(0, P, BLOCK_M):
            rows = i + tl.arange(0, BLOCK_M)
            mask = (rows[:, None] < P) & (cols[None, :] < N)
            offs = rows[:, None] * N + cols[None, :]
            dw += tl.load(dw_part_ptr + offs, mask=mask, other=0.0)
            db += tl.load(db_part_ptr + offs, mask=mask, other=0.0)
        tl.store(dw_ptr + cols, tl.sum(dw, axis=0).to(dw_ptr.dtype.element_ty), mask=cols < N)
        tl.store(db_ptr + cols, tl.sum(db, axis=0).to(db_ptr.dtype.element_ty), mask=cols < N)


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


def ours(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, out: torch.Tensor | None = None, *,
         num_warps: int = 4, ROWS: int = 1) -> torch.Tensor:
    """The kernel: layer norm of each row of the (M, N) tensor x into `out`, which it returns. With
    no `out` (the backward modes), through the autograd Function: a fresh y, its backward in Triton."""
    if out is None:
        return LayerNorm.apply(x, weight, bias, num_warps, ROWS)
    return forward(x, weight, bias, out, num_warps=num_warps, ROWS=ROWS)


def _checked(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, out: torch.Tensor) -> None:
    if triton is None:
        raise RuntimeError("triton does not import in this python: install it (torch's CUDA wheels "
                           "bring it) to run the layernorm_triton workload")
    if x.dim() != 2 or x.stride(1) != 1 or out.shape != x.shape or out.stride(1) != 1:
        raise ValueError(f"layernorm: x and out must be (M, N) with contiguous rows, got x "
                         f"{tuple(x.shape)} strides {x.stride()}, out {tuple(out.shape)}")
    N = x.shape[1]
    if not (weight.shape == bias.shape == (N,) and weight.is_contiguous() and bias.is_contiguous()):
        raise ValueError(f"layernorm: weight and bias must be contiguous ({N},), got "
                         f"{tuple(weight.shape)} and {tuple(bias.shape)}")


def forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, out: torch.Tensor, *,
            num_warps: int = 4, ROWS: int = 1, mean: torch.Tensor | None = None,
            rstd: torch.Tensor | None = None) -> torch.Tensor:
    """The forward kernel into `out`; with `mean` and `rstd` (fp32, (M,)) it stores each row's too."""
    _checked(x, weight, bias, out)
    M, N = x.shape
    if M == 0:
        return out
    block_n, rows, warps = launch_plan(N, ROWS, num_warps)
    stats = mean is not None and rstd is not None
    layernorm_fwd_kernel[(triton.cdiv(M, rows),)](
        x, weight, bias, out, mean if stats else out, rstd if stats else out, M, N, x.stride(0),
        out.stride(0), EPS, BLOCK_N=block_n, ROWS=rows, STATS=stats, num_warps=warps)
    return out


def partial_rows(M: int, N: int) -> int:
    """Programs of the backward's dx kernel, each with its partial dw and db row: the tutorial's
    GROUP_SIZE_M by N (more partial rows for short rows), never more than M."""
    group = 256 if N <= 1024 else 128 if N <= 4096 else 96 if N <= 8192 else 64
    return max(1, min(group, M))


def backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor,
             rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dx, dw, db: the fused dx kernel with its partial sums, then the sum of the partials."""
    M, N = x.shape
    dy = dy.contiguous()
    dx = torch.empty_like(x)
    dw = torch.empty_like(weight)
    db = torch.empty_like(weight)
    if M == 0:
        return dx, dw.zero_(), db.zero_()
    programs = partial_rows(M, N)
    per = triton.cdiv(M, programs)
    programs = triton.cdiv(M, per)
    dw_part = torch.empty((programs, N), dtype=torch.float32, device=x.device)
    db_part = torch.empty((programs, N), dtype=torch.float32, device=x.device)
    block_n = 1 << max(0, N - 1).bit_length()
    warps = min(max(block_n // 256, 1), MAX_WARPS)
    layernorm_bwd_dx_kernel[(programs,)](dy, x, weight, mean, rstd, dx, dw_part, db_part, M, N, dy.stride(0),
                                         x.stride(0), dx.stride(0), per, BLOCK_N=block_n, num_warps=warps)
    layernorm_bwd_dwdb_kernel[(triton.cdiv(N, 128),)](dw_part, db_part, dw, db, programs, N,
                                                      BLOCK_M=32, BLOCK_N=128)
    return dx, dw, db


class LayerNorm(torch.autograd.Function):
    """The forward kernel (storing each row's mean and rstd) and the backward kernels."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, num_warps: int,
                ROWS: int) -> torch.Tensor:
        M = x.shape[0]
        mean = torch.empty(M, dtype=torch.float32, device=x.device)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        y = forward(x, weight, bias, torch.empty_like(x), num_warps=num_warps, ROWS=ROWS, mean=mean,
                    rstd=rstd)
        ctx.save_for_backward(x, weight, mean, rstd)
        return y

    @staticmethod
    def backward(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, weight, mean, rstd = ctx.saved_tensors
        dx, dw, db = backward(dy, x, weight, mean, rstd)
        return dx, dw, db, None, None


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


def backward_bytes(M: int, N: int, dtype: str) -> float:
    """x and dy read and dx written once, weight read, dw and db written (the fp32 partials, a few
    hundred rows, left out)."""
    return (3.0 * M * N + 3.0 * N) * BYTES_PER_ELEMENT[dtype]


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
        Knob("num_warps", (1, 2, 4, 8, 16), via="kwarg", default=4, words="{} warp(s)"),
        Knob("ROWS", (1, 2, 4), via="kwarg", default=1, words="{} row(s) per program"),
    ),
    rule=knob_rule,
    keep_per=("N",),
    group_words={"N": "rows of {}"},  # how a pull request reads a kept setting: "rows of 512: 2 warps, ..."
    modes=("forward", "backward", "full"),
    grad_inputs=(0, 1, 2),  # dx, dw, db
    backward_bytes=backward_bytes,
)
