"""The shipped example workload: a FlashAttention-2 style forward (csrc/) against PyTorch's
scaled_dot_product_attention.

Shapes are {B, H, S, D, dtype, causal}. The bench times the round sizes (the batch lowered to 2
from S = 8192); correctness also checks ragged ones, where a tiled kernel breaks: lengths that are
no multiple of a tile, odd batch and head counts. Ours is timed against SDPA's default backend (the
baseline; cuDNN on sm_90 with torch >= 2.11, FLASH on sm_89) and its FLASH backend (the kernel's
own class, the objective), with cuDNN and EFFICIENT where they run.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from cockpit.workload import Extension, Knob, Profile, Reference, Workload, axes, rel_l2
from cockpit.workload.resources import fits

# attention.cu includes no torch header: a tune recompiles it alone and relinks the binding (seconds).
KERNEL = Extension("cockpit_attn", sources=("csrc/attention.cu", "csrc/binding.cpp"),
                   variant_build="relink", tuned_header="csrc/tuned_config.h")
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
HEAD_DIMS, DTYPE_NAMES, CAUSAL = (64, 128), ("fp16", "bf16"), (False, True)
SEQ_LENS = (32, 128, 512, 1024, 2048, 4096, 8192)
RAGGED_SEQ_LENS = (1, 17, 65, 127, 1000, 4097)


def _kinds(b: int, h: int, s: int) -> list[dict[str, Any]]:
    return [{"B": b, "H": h, "S": s, "D": d, "dtype": dtype, "causal": causal}
            for d in HEAD_DIMS for dtype in DTYPE_NAMES for causal in CAUSAL]


BENCH = [c for s in SEQ_LENS for c in _kinds(2 if s >= 8192 else 4, 16, s)]
TESTS = BENCH + [c for s in RAGGED_SEQ_LENS for c in _kinds(3, 5, s)]


def make_inputs(seed: int, /, B: int, H: int, S: int, D: int, dtype: str, causal: bool) -> tuple[Any, ...]:
    g = torch.Generator(device="cuda").manual_seed(seed)  # on the GPU: 8k-token inputs in ms
    q, k, v = (torch.randn((B, H, S, D), generator=g, device="cuda").to(DTYPES[dtype]) for _ in range(3))
    return q, k, v, causal


def make_output(q: torch.Tensor, *rest: Any, **shape: Any) -> torch.Tensor:
    return torch.empty_like(q)


def ours(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, out: torch.Tensor) -> torch.Tensor:
    return KERNEL.load().forward(q, k, v, causal, None, out)  # type: ignore[no-any-return]


def exact(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, chunk: int = 1024) -> torch.Tensor:
    """Attention in float32, a block of query rows at a time (bounded memory)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    qf, kf, vf = q.float(), k.float(), v.float()
    out = torch.empty_like(qf)
    s = q.shape[-2]
    for lo in range(0, s, chunk):
        hi = min(s, lo + chunk)
        scores = qf[..., lo:hi, :] @ kf.transpose(-1, -2) * scale
        if causal:
            rows = torch.arange(lo, hi, device=q.device)[:, None]
            cols = torch.arange(s, device=q.device)[None, :]
            scores = scores.masked_fill(cols > rows, float("-inf"))
        out[..., lo:hi, :] = torch.softmax(scores, dim=-1) @ vf
    return out


def sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def backend(name: str) -> Any:
    """SDPA held to one backend (FLASH_ATTENTION, CUDNN_ATTENTION, EFFICIENT_ATTENTION)."""
    def run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(getattr(SDPBackend, name)):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return run


def flops(B: int, H: int, S: int, D: int, causal: bool, **_: Any) -> float:
    """4·B·H·S²·D (QKᵀ and PV), half of it for causal."""
    f = 4.0 * B * H * S * S * D
    return f / 2 if causal else f


def moved(B: int, H: int, S: int, D: int, **_: Any) -> float:
    """Q, K, V read and O written once, 2-byte elements."""
    return 4.0 * B * H * S * D * 2


# The hand-picked tiles (attention.cu's kDefaultTiles, the L4's): what a head dim runs untuned.
HAND_PICKED = {
    64: {"block_m": 128, "block_n": 128, "warps": 4, "min_blocks": 2, "stages": 1, "o_smem": False,
         "q_regs": False},
    128: {"block_m": 128, "block_n": 32, "warps": 4, "min_blocks": 1, "stages": 1, "o_smem": True,
          "q_regs": False},
}
REGISTER_ALLOWANCE = 24
"""Addresses, loop counters, row max/sum and the softmax's temporaries: what the hand-picked tiles
use beyond their fragments (126-128 and 253-255 registers for 96 and 192 of them)."""


def smem_bytes(k: dict[str, Any], D: int) -> int:
    """Dynamic shared memory per block as launched: Q + stages x (K + V), 2-byte elements."""
    return int((k["block_m"] + 2 * k["stages"] * k["block_n"]) * D * 2)


def live_registers(k: dict[str, Any], D: int) -> int:
    """A lower bound on a thread's registers: per 16-row tile it owns, the Q fragments (all D/16 x 4
    held, or one k-step's 4 when read from shared memory), the S and the O accumulators."""
    row_tiles = max(1, k["block_m"] // (16 * k["warps"]))
    q = D // 16 * 4 if k["q_regs"] else 4
    return int(row_tiles * (q + k["block_n"] // 8 * 4 + D // 8 * 4) + REGISTER_ALLOWANCE)


def tile_rule(k: dict[str, Any], limits: dict[str, Any], group: dict[str, Any]) -> str | None:
    """What attention.cu's config_ok<D>() asserts (16 or 32 query rows a warp, copies that split
    evenly over the threads), then whether the block fits the target GPU."""
    D, threads = group["D"], k["warps"] * 32
    rows = k["block_m"] / k["warps"]
    if rows not in (16, 32):
        return (f"{k['block_m']} query rows over {k['warps']} warps is {rows:g} per warp; "
                "the kernel takes 16 or 32")
    chunks = k["block_n"] * D // 8
    if threads <= 1024 and chunks % threads:
        return (f"a {k['block_n']}-key tile is {chunks} 16-byte copies, which {threads} threads "
                "cannot split evenly")
    return fits(limits, threads=threads, smem=smem_bytes(k, D), registers=live_registers(k, D),
                min_blocks=k["min_blocks"])


def named(B: int, H: int, S: int, D: int, dtype: str, causal: bool) -> str:
    """"B4 H16 S1024 D64 fp16 full": how results have named these shapes since the first session."""
    return f"B{B} H{H} S{S} D{D} {dtype} {'causal' if causal else 'full'}"


def _knob(name: str, macro: str, values: tuple[Any, ...], words: str | dict[str, str], **hints: int) -> Knob:
    """A per-head-dim define of attention.cu; `words`: how a pull request reads its value;
    `hints`: profile findings ("larger_tiles") -> direction."""
    return Knob(name, values, via="define", macro=f"COCKPIT_ATTN_D{{D}}_{macro}", words=words,
                hints={k.replace("_", " "): v for k, v in hints.items()})


# The words read a kept tile "head dim 128: block 128x64, 4 warps, min 1 block/SM, 1 stage, O in
# shared memory, Q in shared memory" (block_m's words say block_n too).
KNOBS = (
    _knob("block_m", "BM", (64, 128, 256), "block {}x{block_n}", larger_tiles=+1, fewer_bytes=+1,
          small_grid=-1),
    _knob("block_n", "BN", (16, 32, 64, 128, 256), "", larger_tiles=+1, fewer_bytes=+1,
          limited_by_shared_memory=-1),
    _knob("warps", "WARPS", (2, 4, 8, 16), "{} warp(s)", overlap=+1, latency=+1, limited_by_warps=-1),
    _knob("min_blocks", "MINB", (1, 2), "min {} block(s)/SM", limited_by_registers=+1, occupancy=+1),
    _knob("stages", "STAGES", (1, 2), "{} stage(s)", overlap=+1, latency=+1, limited_by_shared_memory=-1),
    _knob("o_smem", "O_SMEM", (True, False), {"True": "O in shared memory", "False": "O in registers"}),
    _knob("q_regs", "Q_REGS", (True, False), {"True": "Q in registers", "False": "Q in shared memory"},
          limited_by_registers=-1, occupancy=-1),
)
# Tuned on the large shapes the kernel is for: a trial takes seconds, the small ones are launch-bound.
TUNE = list(axes(B=[4], H=[16], S=[1024, 2048, 4096, 8192], D=list(HEAD_DIMS), dtype=["fp16"],
                 causal=[False]))


WORKLOAD = Workload(
    name="attention",
    build=KERNEL,
    candidates={"ours": ours},
    references=(
        Reference("fp32", exact, oracle=True),
        Reference("SDPA", sdpa, baseline=True),
        Reference("FLASH", backend("FLASH_ATTENTION")),
        Reference("cuDNN", backend("CUDNN_ATTENTION"), optional=True),
        Reference("EFFICIENT", backend("EFFICIENT_ATTENTION"), optional=True),
    ),
    make_inputs=make_inputs,
    make_output=make_output,
    test_grid=TESTS,
    bench_grid=BENCH,
    check=rel_l2({"fp16": 1e-2, "bf16": 1e-2}),
    flops=flops,
    bytes=moved,
    profile=Profile(kernel="attn_fwd", shape={"B": 4, "H": 16, "S": 4096, "D": 64, "dtype": "fp16",
                                              "causal": False}),
    knobs=KNOBS,
    rule=tile_rule,
    keep_per=("D",),
    group_words={"D": "head dim {}"},
    knob_defaults=lambda D: HAND_PICKED[D],
    tune_grid=TUNE,
    size=lambda B, H, S, D, **_: (B * H * S, D),
    describe_shape=named,
)
