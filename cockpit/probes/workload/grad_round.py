"""The gradient check of the correctness rounds (a workload with backward modes): the candidate
called without an output buffer on fresh leaves of the inputs that require grad, its backward
seeded with the workload's `grad_output`, and every such input's gradient compared with the
oracle's autograd (run on float32 copies of 16-bit inputs), each by its own relative error, named
in the failure line ("grad of input #0 (x): rel L2 3.1e-02 > 0.01"); a gradient that is None
fails, naming the input. Gradients are not held bit for bit on a repeat (a dW summed under locks,
as Triton's layer-norm tutorial does, is free in its order)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from cockpit.probes.guarded import on
from cockpit.probes.workload import grads as g
from cockpit.probes.workload.calls import CallSite, Tampered, call, failed, words
from cockpit.probes.workload.compare import compare, constant_output
from cockpit.probes.workload_load import first_line
from cockpit.workload.result_wire import CheckStats, GradJson
from cockpit.workload.spec import Workload, rel_l2


class GradRound:
    """One round's gradient check of every candidate on one shape: the oracle's gradients
    computed once per dtype of the seeded gradient, on float32 copies of 16-bit inputs."""

    def __init__(self, w: Workload, inputs: Sequence[Any], ref: Any, seed: int) -> None:
        self.w, self.inputs, self.ref, self.seed = w, inputs, ref, seed
        self.which = g.grad_indices(w, inputs)
        self.oracle_grads: dict[tuple[Any, ...], list[Any]] = {}
        judge = w.grad_check or w.check
        self.judge = rel_l2() if judge.kind == "custom" else judge

    def check(self, fn: Callable[..., Any], site: CallSite) -> CheckStats:
        """The candidate's gradients against the oracle's: {ok, max_abs, rel_l2 (the worst
        gradient's), nonfinite, tolerance, what, grads: [{input, rel_l2, max_abs}]}."""
        mine = g.leaves(self.inputs, self.which)
        shape, dtype = site.shape, site.dtype
        try:
            value = site.invoke(lambda: call(fn, mine, None, site.knobs(shape)))
            forward = compare(value, self.ref, self.w.check, dtype, shape, mine)
            if not forward["ok"]:
                return {**forward, "what": "its forward without an output buffer (backward modes) "
                        f"fails: {words(forward)}"}
            seeded = g.seed_grad(self.w, value, self.seed)
            site.invoke(lambda: g.backward(value, seeded))
            theirs = self._oracle(seeded)
        except (g.NoGrad, OracleGradError, Tampered) as exc:
            return failed(str(exc))
        except Exception as exc:  # the kernel's backward raised: a failure of this shape, named
            return failed(f"its backward raised {first_line(exc)}")
        per: list[GradJson] = []
        worst: CheckStats | None = None
        for i, ref_grad in zip(self.which, theirs, strict=True):
            who = f"grad of {g.input_name(fn, i)}"
            got = mine[i].grad
            if got is None:
                return failed(f"{who} is None: its backward returned no gradient for an input that "
                               "requires grad")
            stats = self._judge_grad(got, ref_grad, seeded, dtype, shape, mine)
            per.append({"input": g.input_name(fn, i), "rel_l2": stats["rel_l2"], "max_abs": stats["max_abs"],
                        "nonfinite": stats["nonfinite"]})
            if not stats["ok"]:
                return {**stats, "what": f"{who}: {words(stats)}", "grads": per}
            worst = _worst_grad(worst, stats)
        assert worst is not None
        return {**worst, "grads": per}

    def _judge_grad(self, got: Any, ref_grad: Any, seeded: Sequence[Any], dtype: str | None,
                    shape: Mapping[str, Any], mine: Sequence[Any]) -> CheckStats:
        """One gradient against the oracle's: a gradient the oracle gives as 0 is held to its max
        |Δ| instead, and a constant one against a reference that is not constant fails."""
        stats = compare(got, ref_grad, self.judge, dtype, shape, mine)
        if not stats["ok"] and stats["rel_l2"] is not None and not stats["nonfinite"]:
            stats = _zero_gradient(stats, ref_grad, seeded, self.judge.tolerance_for(dtype))
        trivial = constant_output(got, ref_grad) if stats["ok"] and on("not-constant") else None
        if trivial is not None:
            stats = {**stats, "ok": False, "what": trivial}
        return stats

    def _oracle(self, seeded: Sequence[Any]) -> list[Any]:
        key = tuple(d.dtype for d in seeded)
        if key not in self.oracle_grads:
            oracle = self.w.oracle
            assert oracle is not None
            theirs = g.leaves(self.inputs, self.which, torch.float32)
            try:
                g.backward(oracle.fn(*theirs), seeded)
            except g.NoGrad as exc:
                raise OracleGradError(f"the oracle {oracle.name!r} has no backward: {exc}") from exc
            missing = [i for i in self.which if theirs[i].grad is None]
            if missing:
                raise OracleGradError(f"the oracle {oracle.name!r} gives no gradient for "
                                      f"{g.input_name(oracle.fn, missing[0])}")
            self.oracle_grads[key] = [theirs[i].grad for i in self.which]
        return self.oracle_grads[key]


def _worst_grad(worst: CheckStats | None, stats: CheckStats) -> CheckStats:
    """The worse by rel L2 of the gradients judged so far (a gradient held to its max |Δ| keeps its words)."""
    if worst is None or (stats["rel_l2"] or 0) > (worst["rel_l2"] or 0):
        return {**stats, "what": "" if stats["rel_l2"] is not None else stats["what"]}
    return worst


def _zero_gradient(stats: CheckStats, ref_grad: Any, seeded: Sequence[Any], tol: float) -> CheckStats:
    """A gradient the oracle gives as 0 everywhere (a layer norm's dx on rows of one element) has no
    relative error: its max |Δ| is held to sqrt(tolerance) x the seeded gradient's max instead. The
    square root because the rounding that stands in for 0 is the kernel's intermediate values', which
    can be far larger than the seeded gradient (the H200's Triton layer norm, fp32, N=1: 2.2e-06 from
    a 1-ulp c2 times rstd = 316, against a seeded 0.156; dx = dy, the plausible bug, is 0.156)."""
    if not isinstance(ref_grad, torch.Tensor) or bool(ref_grad.detach().abs().max().item() != 0):
        return stats
    scale = max((float(d.detach().abs().max().item()) for d in seeded if d.numel()), default=1.0) or 1.0
    apart = stats["max_abs"] or 0.0
    bound = tol ** 0.5
    within = apart <= bound * scale
    what = (f"the oracle's gradient is 0 everywhere; max |Δ| {apart:.2e} > {bound:.2g} "
            f"(sqrt of the tolerance) x the seeded gradient's max {scale:.2e}")
    said = f"the oracle's gradient is 0 everywhere; max |Δ| {apart:.2e} within {bound:.2g} x the seeded max"
    return {**stats, "ok": within, "rel_l2": None, "what": said if within else what}


class OracleGradError(RuntimeError):
    """The oracle's own backward cannot give a gradient (the workload's fault, said as such)."""

