"""Correctness of every candidate against the workload's oracle: fresh inputs per shape (seeded,
smallest shape first), the output buffer poisoned with NaN first (an element the kernel never
writes fails), the workload's check (relative L2 by default, so a kernel returning zeros fails);
NaN/Inf never pass; stops at the first failure and names it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from cockpit.probes.workload_load import first_line
from cockpit.workload.spec import Check, Workload

Say = Callable[[str], None]


def call(fn: Callable[..., Any], inputs: Sequence[Any], out: Any, knobs: Mapping[str, Any]) -> Any:
    """A candidate's call: the inputs, the output buffer when the workload has one, kwarg knobs."""
    if out is None:
        return fn(*inputs, **knobs)
    result = fn(*inputs, out, **knobs)
    return out if result is None else result


def compare(out: Any, ref: Any, check: Check, dtype: str | None, shape: Mapping[str, Any],
            inputs: Sequence[Any]) -> dict[str, Any]:
    """{ok, max_abs, rel_l2, nonfinite, tolerance, what} of one output against the oracle's."""
    if check.kind == "custom":
        assert check.fn is not None
        ok, what = check.fn(out, ref, dict(shape), tuple(inputs))
        return {"ok": bool(ok), "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None,
                "what": str(what)}
    if not isinstance(out, torch.Tensor) or not isinstance(ref, torch.Tensor):
        return {"ok": False, "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None,
                "what": f"returned {type(out).__name__}, expected a tensor like the oracle's"}
    if tuple(out.shape) != tuple(ref.shape):
        return {"ok": False, "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None,
                "what": f"shape {tuple(out.shape)}, the oracle's is {tuple(ref.shape)}"}
    o, r = out.double(), ref.double()
    nonfinite = int((~torch.isfinite(o)).sum().item())
    diff = (o - r).nan_to_num(nan=float("inf"))
    max_abs = float(diff.abs().max().item()) if diff.numel() else 0.0
    rel = float(diff.norm().item() / max(r.norm().item(), 1e-30)) if diff.numel() else 0.0
    tol = check.tolerance_for(dtype)
    if check.kind == "exact":
        ok, tol = nonfinite == 0 and max_abs == 0.0, 0.0
    elif check.kind == "allclose":
        bound = check.atol_for(dtype) + tol * r.abs()
        ok = nonfinite == 0 and bool((diff.abs() <= bound).all().item())
    else:
        ok = nonfinite == 0 and rel <= tol
    what = ""
    if not ok and nonfinite == 0 and check.kind != "rel_l2":
        what = ("not equal" if check.kind == "exact" else
                f"outside atol {check.atol_for(dtype):g} + rtol {tol:g}·|ref| (max |Δ| {max_abs:.2e})")
    return {"ok": ok, "max_abs": max_abs, "rel_l2": rel, "nonfinite": nonfinite, "tolerance": tol,
            "what": what}


KnobsFor = Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""shape -> the kwarg knobs of a candidate's call on it (the declared values, or a kept winner's)."""


def correctness(w: Workload, shapes: Sequence[Mapping[str, Any]], knobs: KnobsFor,
                say: Say) -> tuple[list[dict[str, Any]], bool]:
    """Every candidate on every shape, smallest first; stops at the first failure."""
    oracle = w.oracle
    if oracle is None:
        raise ValueError(f"workload {w.name!r} declares no oracle: add Reference(..., oracle=True)")
    rows: list[dict[str, Any]] = []
    ordered = w.smallest_first(shapes)
    for index, shape in enumerate(ordered):
        name = w.shape_name(shape)
        inputs = w.make_inputs(1000 + index, **shape)
        ref = oracle.fn(*inputs)
        dtype = shape.get(w.dtype_key) if w.dtype_key else None
        for cand, fn in w.candidates.items():
            out = None
            if w.make_output is not None:
                out = w.make_output(*inputs, **shape)
                if isinstance(out, torch.Tensor) and out.is_floating_point():
                    out.fill_(float("nan"))
            try:
                result = call(fn, inputs, out, knobs(shape))
                torch.cuda.synchronize()
                stats = compare(result, ref, w.check, dtype, shape, inputs)
            except Exception as exc:  # the kernel raised: a failure of this shape, named
                stats = {"ok": False, "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None,
                         "what": f"raised {first_line(exc)}"}
            row = {"config": name, "shape": dict(shape), "candidate": cand, **stats}
            rows.append(row)
            say(f"{'PASS' if row['ok'] else 'FAIL'} [{index + 1}/{len(ordered)}] {_label(cand, w)}{name:<36} "
                f"{_numbers(row)}")
            if not row["ok"]:
                return rows, False
        del inputs, ref
    return rows, True


def _label(cand: str, w: Workload) -> str:
    return "" if len(w.candidates) == 1 else f"[{cand}] "


def _numbers(row: Mapping[str, Any]) -> str:
    if row["rel_l2"] is None:
        return str(row["what"])
    return (f"max|Δ| {row['max_abs']:.3e}  rel L2 {row['rel_l2']:.3e}  non-finite {row['nonfinite']}"
            + (f"  {row['what']}" if row["what"] else ""))
