"""The precision floor (Tensara's rule): a workload's check must fail the op done wholly in the next
lower precision, or a candidate that quietly computes in bf16 passes as an fp32 kernel. The op done
in the lower precision is the oracle on the inputs rounded to it (fp32 -> bf16, fp16 and bf16 ->
fp8 e4m3 where torch has it, fp64 -> fp32), its answer rounded to it too. A check that passes that
answer is said as a warning (the check is too loose, not the kernel wrong); a candidate that fails
and sits much closer to that answer than the tolerance, or that passes such a loose check with an
error as large as that answer's, is named as computed in a lower precision."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from cockpit.probes.workload.calls import oracle_answer
from cockpit.probes.workload.compare import CheckRaised, alike, compare, distance
from cockpit.probes.workload_load import first_line
from cockpit.workload.spec import Reference, Workload

_NAMES = {torch.float64: "fp64", torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}
COARSE = 0.5
"""Under a check that passes the op done wholly in the lower precision, a passing output whose own
error (rel L2 to the oracle) is at least this share of that op's error is named as computed in the
lower precision: an fp32 kernel's error is thousands of times smaller (1e-7 against bf16's ~4e-3),
a TF32 matmul's a quarter of it. Up to `COARSE_MOST` times that op's error: a lower precision's
error, not a wrong answer's (all zeros read 1.0, for the not-constant guard to name)."""
COARSE_MOST = 8.0
MATCH = 0.1
"""A failing output within this share of the tolerance (rel L2) of the lower-precision answer is
named as computed in that precision."""


def _lower(dtype: torch.dtype) -> torch.dtype | None:
    """The next lower precision of a floating type (None: none torch has here)."""
    fp8 = getattr(torch, "float8_e4m3fn", None)
    return {torch.float64: torch.float32, torch.float32: torch.bfloat16,
            torch.float16: fp8, torch.bfloat16: fp8}.get(dtype)


def lower_of(inputs: Sequence[Any]) -> torch.dtype | None:
    """The next lower precision of the first floating input (None: no floating input, or none lower)."""
    first = next((t for t in _tensors(inputs) if t.is_floating_point()), None)
    return None if first is None else _lower(first.dtype)


def name_of(dtype: torch.dtype) -> str:
    return _NAMES.get(dtype, "fp8 e4m3" if "float8_e4m3" in str(dtype) else str(dtype).replace("torch.", ""))


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    return [t for v in items for t in _tensors(v)]


def rounded(value: Any, lower: torch.dtype) -> Any:
    """Every floating tensor rounded to `lower` and back (clamped to its range: fp8 has no infinity)."""
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point() or value.dtype == lower:
            return value
        biggest = torch.finfo(lower).max
        t = value.detach()
        return t.clamp(-biggest, biggest).to(lower).to(value.dtype)
    if isinstance(value, tuple):
        return tuple(rounded(v, lower) for v in value)
    if isinstance(value, list):
        return [rounded(v, lower) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v, lower) for k, v in value.items()}
    return value


def downcast_answer(oracle: Reference, inputs: Sequence[Any], lower: torch.dtype) -> Any:
    """The op done in `lower`: the oracle on the inputs rounded to it, its answer rounded to it (the
    buffers it leaves poisoned as the reference's are)."""
    with torch.no_grad():
        return rounded(oracle_answer(oracle, rounded(inputs, lower)), lower)


def downcast_or_why(oracle: Reference, inputs: Sequence[Any], lower: torch.dtype) -> tuple[Any, str | None]:
    """(the op done in `lower`, None), or (None, the warning that the precision floor could not run)."""
    try:
        return downcast_answer(oracle, inputs, lower), None
    except Exception as exc:  # the workload's oracle on rounded inputs: said, never a silent pass
        return None, (f"precision-floor could not run: the oracle {oracle.name} on inputs rounded to "
                      f"{name_of(lower)} raised {first_line(exc)}")


def loose_line(w: Workload, low: Any, ref: Any, lower: torch.dtype, dtype: str | None,
               shape: Mapping[str, Any], inputs: Sequence[Any]) -> str | None:
    """The warning when the workload's check passes the lower-precision answer; None when it fails it."""
    try:
        stats = compare(low, ref, w.check, dtype, shape, inputs)
    except CheckRaised:
        return None  # the workload's check raising is said on the candidates' rows
    if not stats["ok"]:
        return None
    how = f" (rel L2 {stats['rel_l2']:.1e} at {w.shape_name(shape)})" if stats["rel_l2"] is not None else ""
    return (f"the check passes the op done wholly in {name_of(lower)}: a downcast candidate would pass; "
            f"tighten check={how}")


def named_line(out: Any, low: Any, tolerance: float | None, lower: torch.dtype) -> str | None:
    """The failure line of an output much closer to the lower-precision answer than the tolerance."""
    if not alike(out, low):
        return None
    rel = distance(out, low)[1]
    if rel > MATCH * (tolerance or 1e-2):
        return None
    return f"matches the op done in {name_of(lower)} (rel L2 {rel:.1e} to it): computed in a lower precision?"


def coarse_line(out_rel: float | None, low: Any, ref: Any, lower: torch.dtype) -> str | None:
    """The failure line of an output that passes a loose check with an error as large as the op done
    wholly in `lower` (None: it is finer, or the two cannot be compared)."""
    if out_rel is None or not alike(low, ref):
        return None
    floor = distance(low, ref)[1]
    if floor <= 0 or not COARSE * floor <= out_rel <= COARSE_MOST * floor:
        return None
    return (f"its error (rel L2 {out_rel:.1e}) is as large as the op done wholly in {name_of(lower)} "
            f"({floor:.1e}), which the check passes: computed in a lower precision?")
