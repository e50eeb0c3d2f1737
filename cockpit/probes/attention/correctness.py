"""Correctness against a float32 reference: fresh random inputs per config, the output buffer
poisoned with NaN first (an element the kernel never writes fails), max abs diff and relative L2
error; NaN/Inf never pass; smallest config first, stopping at the first failure."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from .configs import Impl, config_name, make_inputs, say

# rel L2 against the float32 reference that a correct kernel stays under, per dtype.
TOLERANCE = {"fp16": 0.01, "bf16": 0.01}


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
              chunk: int = 1024) -> torch.Tensor:
    """Exact attention in float32, a block of query rows at a time (bounded memory)."""
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


def compare(out: torch.Tensor, ref: torch.Tensor) -> dict[str, float]:
    """Max abs diff, relative L2 error and the count of NaN/Inf elements of `out`."""
    o = out.float()
    nonfinite = int((~torch.isfinite(o)).sum().item())
    diff = (o - ref).nan_to_num(nan=float("inf"))
    max_abs = float(diff.abs().max().item()) if diff.numel() else 0.0
    rel = float(diff.norm().item() / max(ref.norm().item(), 1e-30))
    return {"max_abs": max_abs, "rel_l2": rel, "nonfinite": nonfinite}


def run_poisoned(impl: Impl, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                 causal: bool) -> torch.Tensor:
    """Call `impl` writing into a NaN-filled buffer, so elements it never writes show up."""
    out = torch.full_like(q, float("nan"))
    result = impl(q, k, v, causal, out)
    return out if result is None else result


def correctness(impl: Impl, configs: Sequence[dict[str, Any]], device: str,
                tolerance: dict[str, float]) -> tuple[list[dict[str, Any]], bool]:
    """Smallest config first; stops at the first that fails."""
    rows: list[dict[str, Any]] = []
    for index, cfg in enumerate(sorted(configs, key=lambda c: (c["B"] * c["H"] * c["S"], c["D"]))):
        q, k, v = make_inputs(cfg, device, seed=1000 + index)
        out = run_poisoned(impl, q, k, v, cfg["causal"])
        if device == "cuda":
            torch.cuda.synchronize()
        stats = compare(out, reference(q, k, v, cfg["causal"]))
        tol = tolerance.get(cfg["dtype"], 1e-2)
        ok = stats["nonfinite"] == 0 and stats["rel_l2"] <= tol
        rows.append({"config": config_name(cfg), **cfg, **stats, "tolerance": tol, "ok": ok})
        say(f"{'PASS' if ok else 'FAIL'}  {config_name(cfg):<36} max|Δ| {stats['max_abs']:.3e}  "
            f"rel L2 {stats['rel_l2']:.3e}  non-finite {stats['nonfinite']}")
        if not ok:
            return rows, False
        del q, k, v, out
    return rows, True
