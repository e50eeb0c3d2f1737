"""How a candidate's output is held against the oracle's, and how a call is caught changing what
it was given: the workload's check (relative L2, allclose, exact or its own function) with max |Δ|,
rel L2 and non-finite counts in float64 beside it; bit-for-bit equality of nested results; which
input a call wrote; an output that is one value everywhere. Pure functions over tensors, used by
the correctness rounds in `check`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

from cockpit.probes.workload_load import first_line
from cockpit.workload.result_wire import CheckStats
from cockpit.workload.spec import Check


def compare(out: Any, ref: Any, check: Check, dtype: str | None, shape: Mapping[str, Any],
            inputs: Sequence[Any]) -> CheckStats:
    """{ok, max_abs, rel_l2, nonfinite, tolerance, what} of one output against the oracle's (a
    custom check's verdict, with max |Δ| and rel L2 beside it when both are tensors alike)."""
    if check.kind == "custom":
        return _custom(out, ref, check, shape, inputs)
    unlike = _not_comparable(out, ref)
    if unlike is not None:
        return {"ok": False, "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None,
                "what": unlike}
    tol = check.tolerance_for(dtype)
    atol = check.atol_for(dtype) if check.kind == "allclose" else None
    max_abs, rel, nonfinite, within = _walk(out, ref, atol, tol)
    ok, tol = _passes(check.kind, max_abs, rel, nonfinite, within, tol)
    what = ""
    if not ok and nonfinite == 0 and check.kind != "rel_l2":
        what = ("not equal" if check.kind == "exact" else
                f"outside atol {check.atol_for(dtype):g} + rtol {tol:g}·|ref| (max |Δ| {max_abs:.2e})")
    return {"ok": ok, "max_abs": max_abs, "rel_l2": rel, "nonfinite": nonfinite, "tolerance": tol,
            "what": what}


def _custom(out: Any, ref: Any, check: Check, shape: Mapping[str, Any],
            inputs: Sequence[Any]) -> CheckStats:
    """The workload's own check decides; max |Δ| and rel L2 are said beside it when both are
    tensors alike. A check that raises is the workload's fault (CheckRaised), not the kernel's."""
    assert check.fn is not None
    try:
        ok, what = check.fn(out, ref, dict(shape), tuple(inputs))
    except Exception as exc:  # the workload's own check, not the kernel: said as such
        raise CheckRaised(first_line(exc)) from exc
    numbers = distance(out, ref) if alike(out, ref) else None
    return {"ok": bool(ok), "max_abs": numbers[0] if numbers else None,
            "rel_l2": numbers[1] if numbers else None, "nonfinite": numbers[2] if numbers else 0,
            "tolerance": None, "what": str(what)}


def _not_comparable(out: Any, ref: Any) -> str | None:
    """Why the output cannot be held against the oracle's (not a tensor, another shape); None when it can."""
    if not isinstance(out, torch.Tensor) or not isinstance(ref, torch.Tensor):
        return f"returned {type(out).__name__}, expected a tensor like the oracle's"
    if tuple(out.shape) != tuple(ref.shape):
        return f"shape {tuple(out.shape)}, the oracle's is {tuple(ref.shape)}"
    return None


def _passes(kind: str, max_abs: float, rel: float, nonfinite: int, within: bool,
            tol: float) -> tuple[bool, float]:
    """Whether the output passes the check of this kind (never with a NaN/Inf), and the tolerance
    it was held to (0 for an exact check)."""
    if kind == "exact":
        return nonfinite == 0 and max_abs == 0.0, 0.0
    if kind == "allclose":
        return nonfinite == 0 and within, tol
    return nonfinite == 0 and rel <= tol, tol


class CheckRaised(RuntimeError):
    """The workload's custom check raised (its fault, not the candidate's)."""


CHUNK = 1 << 24
"""Elements held in float64 at a time (128 MiB a copy). KernelBench's level-1 softmax returns a
4096 x 393216 fp32 matrix: its output, the oracle's and their difference in float64 at once are
36 GiB, beside the inputs and outputs a check keeps, and ran an 80 GB H100 out of memory."""


def distance(out: torch.Tensor, ref: torch.Tensor) -> tuple[float, float, int]:
    """(max |Δ|, rel L2, non-finite) of an output against a reference of its shape, in float64 (a
    NaN in the output counts as an infinite difference)."""
    max_abs, rel, nonfinite, _ = _walk(out, ref, None, 0.0)
    return max_abs, rel, nonfinite


def _walk(out: torch.Tensor, ref: torch.Tensor, atol: float | None, rtol: float
          ) -> tuple[float, float, int, bool]:
    """(max |Δ|, rel L2, non-finite, every |Δ| <= atol + rtol·|ref|) in float64, CHUNK elements
    at a time; the last is True when `atol` is None (no allclose asked)."""
    o_all, r_all = out.detach().reshape(-1), ref.detach().reshape(-1)
    max_abs, diff_sq, ref_sq, nonfinite, within = 0.0, 0.0, 0.0, 0, True
    for start in range(0, o_all.numel(), CHUNK):
        o, r = o_all[start:start + CHUNK].double(), r_all[start:start + CHUNK].double()
        diff = (o - r).nan_to_num(nan=float("inf"))
        size = diff.abs()
        max_abs = max(max_abs, float(size.max().item()))
        diff_sq += float(diff.square().sum().item())
        ref_sq += float(r.square().sum().item())
        nonfinite += int((~torch.isfinite(o)).sum().item())
        if atol is not None and within:
            within = bool((size <= atol + rtol * r.abs()).all().item())
        del o, r, diff, size
    return max_abs, math.sqrt(diff_sq) / max(math.sqrt(ref_sq), 1e-30), nonfinite, within


def alike(a: Any, b: Any) -> bool:
    """Two real tensors of one shape: a distance between them means something."""
    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
            and not (a.is_complex() or b.is_complex()))


def refill(mine: Any, inputs: Any) -> bool:
    """Write `inputs`' values into the tensors of `mine` (same structure and shapes); False, and
    nothing written, when they do not match."""
    def fits(a: Any, b: Any) -> bool:
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            return bool(a.shape == b.shape and a.dtype == b.dtype and a.device == b.device)
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            return len(a) == len(b) and all(fits(x, y) for x, y in zip(a, b, strict=True))
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(fits(a[k], b[k]) for k in a)
        return bool(a == b)

    def write(a: Any, b: Any) -> None:
        if isinstance(a, torch.Tensor):
            a.copy_(b)
        elif isinstance(a, (tuple, list)):
            for x, y in zip(a, b, strict=True):
                write(x, y)
        elif isinstance(a, dict):
            for k in a:
                write(a[k], b[k])

    if not fits(mine, inputs):
        return False
    write(mine, inputs)
    return True


def same_bits(a: Any, b: Any) -> bool:
    """Bit for bit equal: tensors by their bytes (NaN equal to the same NaN), the rest by ==."""
    if _both(a, b, torch.Tensor):
        return bool(a.shape == b.shape and a.dtype == b.dtype and torch.equal(_bytes(a), _bytes(b)))
    if _both(a, b, (tuple, list)):
        return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b, strict=True))
    if _both(a, b, dict):
        return a.keys() == b.keys() and all(same_bits(a[k], b[k]) for k in a)
    return bool(a == b)


def _both(a: Any, b: Any, kind: type | tuple[type, ...]) -> bool:
    """Whether both values are of this kind: a pair walked side by side."""
    return isinstance(a, kind) and isinstance(b, kind)


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


def changed_input(mine: Any, pristine: Any, where: str = "", returned: frozenset[int] = frozenset()
                  ) -> str | None:
    """Which input the call changed ("#0", "#1[2]", "#0['x']"), or None. An input the call returns
    (its storage is the output's: GPU MODE hands the output buffer in with the inputs) is the
    output, and may change."""
    if _both(mine, pristine, (tuple, list)):
        return _first_changed(((m, p, f"{where}[{i}]" if where else f"#{i}")
                               for i, (m, p) in enumerate(zip(mine, pristine, strict=False))), returned)
    if _both(mine, pristine, dict):
        return _first_changed(((mine[k], pristine.get(k), f"{where}[{k!r}]") for k in mine), returned)
    if _both(mine, pristine, torch.Tensor):
        if mine.untyped_storage().data_ptr() in returned:
            return None
        return None if same_bits(mine, pristine) else (where or "#0")
    return None


def _first_changed(items: Iterable[tuple[Any, Any, str]], returned: frozenset[int]) -> str | None:
    """The first of a container's items (its copy, the pristine one, where it sits) the call changed."""
    for mine, pristine, where in items:
        found = changed_input(mine, pristine, where, returned)
        if found is not None:
            return found
    return None


def storages(value: Any) -> frozenset[int]:
    """The storages of the tensors in a call's result (nested tuples, lists and dicts walked)."""
    if isinstance(value, torch.Tensor):
        return frozenset({value.untyped_storage().data_ptr()})
    if isinstance(value, (tuple, list)):
        return frozenset().union(*(storages(v) for v in value)) if value else frozenset()
    if isinstance(value, dict):
        return frozenset().union(*(storages(v) for v in value.values())) if value else frozenset()
    return frozenset()


def constant_output(out: Any, ref: Any) -> str | None:
    """Why an output that is one value everywhere fails against a reference that is not: "returned
    all zeros (the reference is not constant)"; None otherwise."""
    if not (isinstance(out, torch.Tensor) and isinstance(ref, torch.Tensor)) or out.numel() < 2:
        return None
    if not (out.is_floating_point() or out.is_complex()) or ref.numel() < 2:
        return None
    r = ref.detach().reshape(-1)
    if bool((r == r[0]).all().item()):
        return None  # a constant reference: a constant answer may be right
    o = out.detach().reshape(-1)
    if not bool((o == o[0]).all().item()):
        return None
    value = o[0].item()
    return ("returned all zeros" if value == 0 else f"returned {value:g} everywhere") + (
        " where the reference is not constant (the tolerance alone would have passed it)")
