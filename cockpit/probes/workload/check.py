"""Correctness of every candidate against the workload's oracle, shape by shape, smallest first,
on `ROUNDS` rounds of fresh inputs: new seeds each round; round 2 writes its values into the very
tensors round 1 passed, so a result kept per pointer is stale, and round 3 makes new tensors, so
one kept per shape (or anything else) is. A cache of that kind held #1 on a live GPU MODE
leaderboard in 2026. Each candidate gets its own copy of the inputs, compared bit for bit after
the call: one that writes its input fails, and the next candidate is never checked on the
changed copy. The output buffer is poisoned with NaN first (an element the kernel never writes
fails); the workload's check decides (relative L2 by default), and whatever it says, NaN/Inf fail
and a constant output (all zeros) against a reference that is not constant fails (a loose
tolerance passes zeros: Liger's bf16 atol 5e-2 does on 80 % of softmax rows). On the first round
the call is repeated on the same inputs: bit for bit the same ("deterministic"), or it fails,
unless the workload declares `atomics=True` (then within the check's tolerance, said as "differs
by ..."). Stops at the first failure and names it.

A workload with backward modes (`modes=("forward", "backward", "full")`) gets a second check per
shape and candidate, its row named "<shape> backward": the candidate called without an output
buffer on fresh leaves of the inputs that require grad, its backward seeded with the workload's
`grad_output`, and every such input's gradient compared with the oracle's autograd (run on float32
copies of 16-bit inputs), each by its own relative error, named in the failure line ("grad of
input #0 (x): rel L2 3.1e-02 > 0.01"); a gradient that is None fails, naming the input. Gradients
are not held bit for bit on a repeat (a dW summed under locks, as Triton's layer-norm tutorial
does, is free in its order)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from cockpit.probes.copies import clone
from cockpit.probes.workload import grads as g
from cockpit.probes.workload.compare import (
    CheckRaised,
    alike,
    changed_input,
    compare,
    constant_output,
    distance,
    refill,
    same_bits,
    storages,
)
from cockpit.probes.workload_load import first_line
from cockpit.workload.result_wire import CheckRowJson, CheckStats, GradJson
from cockpit.workload.spec import Reference, Workload, rel_l2

Say = Callable[[str], None]


def call(fn: Callable[..., Any], inputs: Sequence[Any], out: Any, knobs: Mapping[str, Any]) -> Any:
    """A candidate's call: the inputs, the output buffer when the workload has one, kwarg knobs."""
    if out is None:
        return fn(*inputs, **knobs)
    result = fn(*inputs, out, **knobs)
    return out if result is None else result


KnobsFor = Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""shape -> the kwarg knobs of a candidate's call on it (the declared values, or a kept winner's)."""
ROUNDS = 3
"""Rounds of fresh inputs per shape."""
ROUND_SEED = 100_003
"""Seeds of round k: the shape's seed + k x this (round 1 keeps the seed earlier versions used)."""


def correctness(w: Workload, shapes: Sequence[Mapping[str, Any]], knobs: KnobsFor,
                say: Say, rounds: int = ROUNDS) -> tuple[list[CheckRowJson], bool]:
    """Every candidate on every shape, smallest first, each on `rounds` rounds of fresh inputs; one
    row per shape and candidate (its worst round's numbers, or the failing round's, and whether a
    repeat on the same inputs gave the same bits); stops at the first failure."""
    oracle = w.oracle
    if oracle is None:
        raise ValueError(f"workload {w.name!r} declares no oracle: add Reference(..., oracle=True)")
    rows: list[CheckRowJson] = []
    ordered = w.smallest_first(shapes)
    for index, shape in enumerate(ordered):
        check = _ShapeCheck(w, oracle, shape, index, f"[{index + 1}/{len(ordered)}]", knobs, say, rows)
        for r in range(rounds):
            if not check.round(r, rounds):
                return rows, False
        check.emit_passed(rounds)
    return rows, True


@dataclass
class _ShapeCheck:
    """One shape's rounds: each candidate's copy of the round before (round 2 refills it), its
    worst passing round and its worst passing gradients, emitted once every round has passed."""

    w: Workload
    oracle: Reference
    shape: Mapping[str, Any]
    index: int
    step: str
    knobs: KnobsFor
    say: Say
    rows: list[CheckRowJson]
    passed: dict[str, CheckStats] = field(default_factory=dict)
    passed_grads: dict[str, CheckStats] = field(default_factory=dict)
    given: dict[str, Sequence[Any]] = field(default_factory=dict)
    """Each candidate's copy of the last round's inputs."""

    def __post_init__(self) -> None:
        self.name = self.w.shape_name(self.shape)
        self.dtype = self.shape.get(self.w.dtype_key) if self.w.dtype_key else None

    def round(self, r: int, rounds: int) -> bool:
        """Round `r` of every candidate (and its gradients); False, its row emitted, at the first failure."""
        w = self.w
        seed = 1000 + self.index + ROUND_SEED * r
        inputs = w.make_inputs(seed, **self.shape)
        ref = self.oracle.fn(*clone(inputs))
        grads = _GradRound(w, inputs, ref, seed) if w.grad_modes else None
        for cand, fn in w.candidates.items():
            mine = self._copy(cand, inputs, r)
            stats = _round(w, fn, mine, inputs, ref, self.shape, self.dtype, self.knobs, repeat=r == 0)
            if not stats["ok"]:
                self._emit(cand, self.name, {**_failed_round(stats, r, rounds), "rounds": r + 1})
                return False
            self.passed[cand] = _worst_pass(self.passed.get(cand), stats)
            if grads is None:
                continue
            gstats = grads.check(fn, self.shape, self.dtype, self.knobs)
            if not gstats["ok"]:
                self._emit(cand, w.mode_name(self.shape, "backward"),
                           {**gstats, "rounds": r + 1, "mode": "backward"})
                return False
            before = self.passed_grads.get(cand)
            if before is None or (gstats["rel_l2"] or 0) > (before["rel_l2"] or 0):
                self.passed_grads[cand] = gstats
        return True

    def emit_passed(self, rounds: int) -> None:
        """Every candidate's worst passing round, then its worst passing gradients."""
        for cand in self.w.candidates:
            self._emit(cand, self.name, {**self.passed[cand], "rounds": rounds})
        for cand, gstats in self.passed_grads.items():
            self._emit(cand, self.w.mode_name(self.shape, "backward"),
                       {**gstats, "rounds": rounds, "mode": "backward"})

    def _copy(self, cand: str, inputs: Any, r: int) -> Any:
        """The candidate's copy of this round's inputs: in round 2 the very tensors it was given in
        round 1, refilled with the new values (a result kept per pointer is then stale)."""
        same = self.given.get(cand) if r == 1 else None
        mine = same if same is not None and refill(same, inputs) else clone(inputs)
        self.given[cand] = mine
        return mine

    def _emit(self, cand: str, name: str, stats: CheckStats) -> None:
        _emit(self.rows, cand, name, self.shape, stats, self.step, self.w, self.say)


def _failed_round(stats: CheckStats, r: int, rounds: int) -> CheckStats:
    """A failing round's stats: a failure after round 1 that is not a changed input is said as a
    result kept from an earlier call."""
    if r > 0 and not stats.pop("mutated", False):
        stats["what"] = (f"fails on fresh inputs in round {r + 1} of {rounds} after "
                         f"passing round 1 ({_words(stats)}): a result kept from an "
                         "earlier call?")
    stats.pop("mutated", None)
    return stats


def _worst_pass(before: CheckStats | None, stats: CheckStats) -> CheckStats:
    """The worse of a candidate's passing rounds by rel L2, keeping round 1's repeat verdict."""
    if before is None:
        return stats
    if (stats["rel_l2"] or 0) <= (before["rel_l2"] or 0):
        return before
    worse = stats.copy()
    if "deterministic" in before:
        worse["deterministic"] = before["deterministic"]
    if "repeat_max_abs" in before:
        worse["repeat_max_abs"] = before["repeat_max_abs"]
    return worse


class _GradRound:
    """One round's gradient check of every candidate on one shape: the oracle's gradients
    computed once per dtype of the seeded gradient, on float32 copies of 16-bit inputs."""

    def __init__(self, w: Workload, inputs: Sequence[Any], ref: Any, seed: int) -> None:
        self.w, self.inputs, self.ref, self.seed = w, inputs, ref, seed
        self.which = g.grad_indices(w, inputs)
        self.oracle_grads: dict[tuple[Any, ...], list[Any]] = {}
        judge = w.grad_check or w.check
        self.judge = rel_l2() if judge.kind == "custom" else judge

    def check(self, fn: Callable[..., Any], shape: Mapping[str, Any], dtype: str | None,
              knobs: KnobsFor) -> CheckStats:
        """The candidate's gradients against the oracle's: {ok, max_abs, rel_l2 (the worst
        gradient's), nonfinite, tolerance, what, grads: [{input, rel_l2, max_abs}]}."""
        mine = g.leaves(self.inputs, self.which)
        try:
            value = call(fn, mine, None, knobs(shape))
            forward = compare(value, self.ref, self.w.check, dtype, shape, mine)
            if not forward["ok"]:
                return {**forward, "what": "its forward without an output buffer (backward modes) "
                        f"fails: {_words(forward)}"}
            seeded = g.seed_grad(self.w, value, self.seed)
            g.backward(value, seeded)
            _sync()
            theirs = self._oracle(seeded)
        except (g.NoGrad, OracleGradError) as exc:
            return _failed(str(exc))
        except Exception as exc:  # the kernel's backward raised: a failure of this shape, named
            return _failed(f"its backward raised {first_line(exc)}")
        per: list[GradJson] = []
        worst: CheckStats | None = None
        for i, ref_grad in zip(self.which, theirs, strict=True):
            who = f"grad of {g.input_name(fn, i)}"
            got = mine[i].grad
            if got is None:
                return _failed(f"{who} is None: its backward returned no gradient for an input that "
                               "requires grad")
            stats = self._judge_grad(got, ref_grad, seeded, dtype, shape, mine)
            per.append({"input": g.input_name(fn, i), "rel_l2": stats["rel_l2"], "max_abs": stats["max_abs"],
                        "nonfinite": stats["nonfinite"]})
            if not stats["ok"]:
                return {**stats, "what": f"{who}: {_words(stats)}", "grads": per}
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
        trivial = constant_output(got, ref_grad) if stats["ok"] else None
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


def _failed(what: str) -> CheckStats:
    return {"ok": False, "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None, "what": what}


def _emit(rows: list[CheckRowJson], cand: str, name: str, shape: Mapping[str, Any],
          stats: CheckStats, step: str, w: Workload, say: Say) -> None:
    row: CheckRowJson = {"config": name, "shape": dict(shape), "candidate": cand, **stats}
    rows.append(row)
    say(f"{'PASS' if row['ok'] else 'FAIL'} {step} {_label(cand, w)}{name:<36} {_numbers(row)}")


def _round(w: Workload, fn: Callable[..., Any], mine: Any, inputs: Any, ref: Any, shape: Mapping[str, Any],
           dtype: str | None, knobs: KnobsFor, repeat: bool) -> CheckStats:
    """One candidate on its copy (`mine`) of one round's inputs, checked against the oracle's
    answer and its inputs left as they were; on the first round, called again on another copy."""
    try:
        result = _call_once(w, fn, mine, shape, knobs)
        stats = compare(result, ref, w.check, dtype, shape, mine)
        changed = changed_input(mine, inputs,
                                returned=storages(result) if w.output_in_inputs else frozenset())
        if changed is not None:
            return {**stats, "ok": False, "mutated": True,
                    "what": f"changed its input {changed} in place (each call must leave its inputs as they "
                            "were: the next call, and the next candidate, would read the changed copy)"}
        if stats["ok"]:
            trivial = constant_output(result, ref)
            if trivial is not None:
                return {**stats, "ok": False, "what": trivial}
        if stats["ok"] and repeat:
            stats.update(_repeat(w, fn, inputs, result, shape, dtype, knobs))
    except CheckRaised as exc:
        return {"ok": False, "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None,
                "what": f"the workload's check raised {exc} (fix check=custom(...) in {w.name}'s "
                        "module: it gets out, ref, shape, inputs and returns (ok, what))"}
    except Exception as exc:  # the kernel raised: a failure of this shape, named
        return {"ok": False, "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None,
                "what": f"raised {first_line(exc)}"}
    return stats


def _call_once(w: Workload, fn: Callable[..., Any], inputs: Any, shape: Mapping[str, Any],
               knobs: KnobsFor) -> Any:
    out = None
    if w.make_output is not None:
        out = w.make_output(*inputs, **shape)
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            out.fill_(float("nan"))
    result = call(fn, inputs, out, knobs(shape))
    _sync()
    return result


def _sync() -> None:
    """Wait for the GPU's queued work, so a kernel's fault is raised here, on the call that made it."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _repeat(w: Workload, fn: Callable[..., Any], inputs: Any, first: Any, shape: Mapping[str, Any],
            dtype: str | None, knobs: KnobsFor) -> CheckStats:
    """The same inputs again: bit for bit the same answer, or a failure (within the tolerance when
    the workload declares atomics)."""
    again = _call_once(w, fn, clone(inputs), shape, knobs)
    if same_bits(again, first):
        return {"deterministic": True, "repeat_max_abs": 0.0}
    apart = distance(again, first) if alike(again, first) else None
    words = f"max |Δ| {apart[0]:.2e}" if apart else "a different answer"
    if w.atomics:
        within = compare(again, first, w.check, dtype, shape, inputs)
        if within["ok"]:
            return {"deterministic": False, "repeat_max_abs": apart[0] if apart else None}
        return {"ok": False, "deterministic": False,
                "what": f"differs from itself on the same inputs by {words}, beyond the tolerance"}
    return {"ok": False, "deterministic": False, "repeat_max_abs": apart[0] if apart else None,
            "what": f"differs from itself on the same inputs by {words} (a race? if the order of a sum "
                    "is free, declare atomics=True and the repeat is held to the tolerance)"}


def _words(stats: CheckStats) -> str:
    if stats.get("what"):
        return str(stats["what"])
    if stats.get("nonfinite"):
        return f"{stats['nonfinite']} NaN/Inf"
    if stats.get("rel_l2") is not None:
        return f"rel L2 {stats['rel_l2']:.2e} > {stats.get('tolerance')}"
    return "the check failed"


def _label(cand: str, w: Workload) -> str:
    return "" if len(w.candidates) == 1 else f"[{cand}] "


def _numbers(row: CheckRowJson) -> str:
    if row["rel_l2"] is None:
        return str(row["what"])
    return (f"max|Δ| {row['max_abs']:.3e}  rel L2 {row['rel_l2']:.3e}  non-finite {row['nonfinite']}"
            + (f"  {row['what']}" if row["what"] else ""))
