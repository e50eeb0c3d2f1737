"""One candidate call of the correctness rounds, and what is held against it before any number is:
the timer and the checks left as they were (guards_identity), an output that is a plain
torch.Tensor (a subclass computes when read: a lazy or proxy output), an output that is not one of
its inputs (the input returned, or a view of it), then the oracle's answer by the workload's check,
the inputs left as they were, an element never written (NaN with the output buffer's or the freed
reference's signature, probes/workload/poison.py), an output that is one value everywhere, and on
the first round the same bits on a repeat. Each check runs while its guard is on
(cockpit/workload/guards.py); each failure's line names the cheat it caught."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from cockpit.probes import guards_identity
from cockpit.probes.copies import clone
from cockpit.probes.guarded import on
from cockpit.probes.workload.compare import (
    CheckRaised,
    alike,
    changed_input,
    compare,
    constant_output,
    distance,
    same_bits,
    storages,
)
from cockpit.probes.workload.grads import input_name
from cockpit.probes.workload.poison import poison, unwritten_line
from cockpit.probes.workload_load import first_line
from cockpit.workload.result_wire import CheckStats
from cockpit.workload.spec import Reference, Workload

KnobsFor = Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""shape -> the kwarg knobs of a candidate's call on it (the declared values, or a kept winner's)."""


def call(fn: Callable[..., Any], inputs: Sequence[Any], out: Any, knobs: Mapping[str, Any]) -> Any:
    """A candidate's call: the inputs, the output buffer when the workload has one, kwarg knobs."""
    if out is None:
        return fn(*inputs, **knobs)
    result = fn(*inputs, out, **knobs)
    return out if result is None else result


class Tampered(RuntimeError):
    """A candidate's call replaced the timer or one of the cockpit's checks (the line names which)."""


def failed(what: str) -> CheckStats:
    return {"ok": False, "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None, "what": what}


def named(what: str) -> CheckStats:
    """A failure whose line names what the candidate did (no later diagnosis replaces it)."""
    return {**failed(what), "named": True}


@dataclass(frozen=True)
class CallSite:
    """Where a candidate is called: the workload, the shape, its dtype, the knobs, and the snapshot
    of the timer and the checks every call is held to."""

    w: Workload
    shape: Mapping[str, Any]
    dtype: str | None
    knobs: KnobsFor
    identity: guards_identity.Identity | None

    def invoke(self, do: Callable[[], Any]) -> Any:
        """Run `do` (a candidate's call), the device synced after it; Tampered when a timer or a
        check was replaced before it or during it (put back either way)."""
        before = guards_identity.intact(self.identity, "before its call")
        if before is not None:
            raise Tampered(before)
        result = do()
        sync()
        during = guards_identity.intact(self.identity, "during its call")
        if during is not None:
            raise Tampered(during)
        return result

    def call_once(self, fn: Callable[..., Any], inputs: Any) -> Any:
        """One call on `inputs`, in an output buffer poisoned with NaN when the workload has one."""
        out = None
        if self.w.make_output is not None:
            out = self.w.make_output(*inputs, **self.shape)
            if on("poisoned-output"):
                poison(out, "output")
        return self.invoke(lambda: call(fn, inputs, out, self.knobs(self.shape)))


def oracle_answer(oracle: Reference, inputs: Any) -> Any:
    """The oracle's answer on a copy of `inputs`, cloned; the buffers it leaves behind (its output,
    its copies of the inputs) filled with the reference's NaN as they are freed, so a candidate whose
    `torch.empty_like` lands on one returns NaN, not the oracle's answer left in memory."""
    given = clone(inputs)
    raw = oracle.fn(*given)
    ref = clone(raw)
    if on("poisoned-reference"):
        poison(raw, "reference")
        poison(given, "reference")
    return ref


def sync() -> None:
    """Wait for the GPU's queued work, so a kernel's fault is raised here, on the call that made it."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def judge_call(site: CallSite, fn: Callable[..., Any], mine: Any, inputs: Any, ref: Any,
               repeat: bool) -> tuple[CheckStats, Any]:
    """One candidate on its copy (`mine`) of one round's inputs (`inputs`, pristine): its stats and
    its output (None when the call raised)."""
    w = site.w
    try:
        result = site.call_once(fn, mine)
    except Tampered as exc:
        return named(str(exc)), None
    except Exception as exc:  # the kernel raised: a failure of this shape, named
        return named(f"raised {first_line(exc)}"), None
    try:
        odd = odd_output(result, mine, fn, w)
        if odd is not None:
            return named(odd), result
        stats = compare(result, ref, w.check, site.dtype, site.shape, mine)
        returned = storages(result) if w.output_in_inputs else frozenset()
        changed = changed_input(mine, inputs, returned=returned) if on("inputs-unchanged") else None
        if changed is not None:
            return {**stats, "ok": False, "mutated": True,
                    "what": f"changed its input {changed} in place (each call must leave its inputs as "
                            "they were: the next call, and the next candidate, would read the changed "
                            "copy)"}, result
        if not stats["ok"]:
            unwritten = unwritten_line(result)
            return ({**stats, "what": unwritten, "named": True} if unwritten else stats), result
        trivial = constant_output(result, ref) if on("not-constant") else None
        if trivial is not None:
            return {**stats, "ok": False, "what": trivial, "named": True}, result
        if repeat and on("same-bits-on-repeat"):
            stats.update(_repeat(site, fn, inputs, result))
            stats["named"] = True
    except CheckRaised as exc:
        return named(f"the workload's check raised {exc} (fix check=custom(...) in {w.name}'s module: it "
                     "gets out, ref, shape, inputs and returns (ok, what))"), result
    except Tampered as exc:
        return named(str(exc)), result
    except Exception as exc:  # the repeat raised: a failure of this shape, named
        return named(f"raised {first_line(exc)}"), result
    return stats, result


def odd_output(result: Any, inputs: Sequence[Any], fn: Callable[..., Any], w: Workload) -> str | None:
    """Why an output is not an answer the kernel wrote: a tensor subclass (computed when read), or
    storage shared with an input (the input returned, or a view of it); None when it is one."""
    if on("plain-tensor"):
        odd = _not_plain(result)
        if odd is not None:
            return f"returns a {odd}, not a torch.Tensor: a lazy or proxy output"
    if on("output-not-input") and not w.output_in_inputs:
        mine = storages(result) - {0}
        for i, value in enumerate(inputs):
            if mine & storages(value):
                return f"returns its {input_name(fn, i)} (a view or alias) instead of an output"
    return None


def _not_plain(value: Any) -> str | None:
    """The type of the first tensor in a result that is not exactly torch.Tensor."""
    if isinstance(value, torch.Tensor):
        return None if type(value) is torch.Tensor else type(value).__name__
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    return next((odd for v in items if (odd := _not_plain(v)) is not None), None)


def _repeat(site: CallSite, fn: Callable[..., Any], inputs: Any, first: Any) -> CheckStats:
    """The same inputs again: bit for bit the same answer, or a failure (within the tolerance when
    the workload declares atomics)."""
    w = site.w
    again = site.call_once(fn, clone(inputs))
    if same_bits(again, first):
        return {"deterministic": True, "repeat_max_abs": 0.0}
    apart = distance(again, first) if alike(again, first) else None
    words = f"max |Δ| {apart[0]:.2e}" if apart else "a different answer"
    if w.atomics:
        within = compare(again, first, w.check, site.dtype, site.shape, inputs)
        if within["ok"]:
            return {"deterministic": False, "repeat_max_abs": apart[0] if apart else None}
        return {"ok": False, "deterministic": False,
                "what": f"differs from itself on the same inputs by {words}, beyond the tolerance"}
    return {"ok": False, "deterministic": False, "repeat_max_abs": apart[0] if apart else None,
            "what": f"differs from itself on the same inputs by {words} (a race? if the order of a sum "
                    "is free, declare atomics=True and the repeat is held to the tolerance)"}


def words(stats: CheckStats) -> str:
    """A failure in words: the check's own, the NaN count, or the relative error past the tolerance."""
    if stats.get("what"):
        return str(stats["what"])
    if stats.get("nonfinite"):
        return f"{stats['nonfinite']} NaN/Inf"
    if stats.get("rel_l2") is not None:
        return f"rel L2 {stats['rel_l2']:.2e} > {stats.get('tolerance')}"
    return "the check failed"
