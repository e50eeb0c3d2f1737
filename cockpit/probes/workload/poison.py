"""NaN with a signature: the output buffer a candidate is handed and the buffers the oracle leaves
behind are filled with quiet NaNs whose payload says which they were, so an element a candidate
never wrote is told from a NaN it computed (x86's default NaN is 0xFFC00000, CUDA's 0x7FFFFFFF,
torch's fill 0x7FC00000: none of them is ours). fp8 has no room for a payload: its buffers are
filled with its one NaN and never named."""

from __future__ import annotations

from typing import Any, Literal

import torch

Whose = Literal["output", "reference"]

_PATTERNS: dict[torch.dtype, tuple[torch.dtype, int, int]] = {
    torch.float64: (torch.int64, 0x7FF8_0000_0000_0BAD, 0x7FF8_0000_0000_DEAD),
    torch.float32: (torch.int32, 0x7FC0_0BAD, 0x7FC0_DEAD),
    torch.float16: (torch.int16, 0x7E0B, 0x7E0D),
    torch.bfloat16: (torch.int16, 0x7FCB, 0x7FCD),
}
"""dtype -> (the integer type of its bits, the output buffer's NaN, the reference's NaN)."""


def _bits(t: torch.Tensor) -> tuple[torch.Tensor, int, int] | None:
    """The tensor's elements as integers and the two signatures, or None for a dtype with no payload."""
    if t.is_complex():
        t = torch.view_as_real(t)
    pattern = _PATTERNS.get(t.dtype)
    if pattern is None:
        return None
    return t.view(pattern[0]), pattern[1], pattern[2]


def poison(value: Any, whose: Whose) -> None:
    """Fill every floating tensor in `value` (nested tuples, lists and dicts walked) with `whose` NaN."""
    if isinstance(value, torch.Tensor):
        if not (value.is_floating_point() or value.is_complex()) or value.numel() == 0:
            return
        with torch.no_grad():
            bits = _bits(value.detach()) if value.is_contiguous() else None
            if bits is None:
                value.detach().fill_(float("nan"))
            else:
                bits[0].fill_(bits[1] if whose == "output" else bits[2])
    elif isinstance(value, (tuple, list)):
        for v in value:
            poison(v, whose)
    elif isinstance(value, dict):
        for v in value.values():
            poison(v, whose)


def poisoned(out: Any, whose: Whose) -> int:
    """How many elements of an output tensor still hold `whose` NaN (0 for anything else)."""
    if not isinstance(out, torch.Tensor) or out.numel() == 0:
        return 0
    if not (out.is_floating_point() or out.is_complex()):
        return 0
    bits = _bits(out.detach().contiguous())
    if bits is None:
        return 0
    hits = bits[0] == (bits[1] if whose == "output" else bits[2])
    return int((hits.any(-1) if out.is_complex() else hits).sum().item())  # a complex element: either half


def unwritten_line(out: Any) -> str | None:
    """The failure line of an output holding a poisoned NaN (the reference's first: a candidate
    that returns memory it never asked for lands on the oracle's freed buffers); None when none."""
    if not isinstance(out, torch.Tensor):
        return None
    total = out.numel()
    theirs = poisoned(out, "reference")
    if theirs:
        return (f"returns memory it never wrote (NaN from the reference's poisoned freed buffer): "
                f"{theirs} of {total} elements")
    ours = poisoned(out, "output")
    if ours:
        return (f"leaves {ours} of {total} output elements unwritten: they still hold the NaN the "
                "output buffer was poisoned with (stale memory)")
    return None
