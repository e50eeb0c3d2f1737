"""A workload config as the probes see it, `{B, H, S, D, dtype, causal}`: its name, its FLOPs and
its random inputs, and the signature every implementation is called with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

# Called (q, k, v, causal, out=None): the output, written into `out` where it can (None then).
Impl = Callable[..., torch.Tensor]
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def say(text: str) -> None:
    """One line to the gate's log, at once (the cockpit tails it while the probe runs)."""
    print(text, flush=True)


def config_name(cfg: dict[str, Any]) -> str:
    causal = "causal" if cfg["causal"] else "full"
    return f"B{cfg['B']} H{cfg['H']} S{cfg['S']} D{cfg['D']} {cfg['dtype']} {causal}"


def flops(cfg: dict[str, Any]) -> float:
    """4·B·H·S²·D (QKᵀ and PV), half of it for causal."""
    f: float = 4.0 * cfg["B"] * cfg["H"] * cfg["S"] ** 2 * cfg["D"]
    return f / 2 if cfg["causal"] else f


def make_inputs(cfg: dict[str, Any], device: str, seed: int) -> tuple[torch.Tensor, ...]:
    """q, k, v of the config's shape and dtype, from `seed`."""
    g = torch.Generator(device=device).manual_seed(seed)  # on the GPU: 8k-token inputs in ms
    shape = (cfg["B"], cfg["H"], cfg["S"], cfg["D"])
    return tuple(torch.randn(shape, generator=g, device=device).to(DTYPES[cfg["dtype"]])
                 for _ in range(3))
