"""What a candidate that fails a later round kept. Its failing answer bit for bit an earlier round's
means it returned a kept result; which key it kept it by is found by probing: new tensors of the
same shape with new values (the round's own tensors still held, so none of their addresses is
reused). A right answer there means the result was kept per input pointer. Still the old answer:
kept per shape, or the last call's answer replayed; a call on another shape in between tells them
apart (a result kept per shape is still the old one after it; a replayed last answer is not).
Each answer is held as a fingerprint of its bytes, not a copy: an output can be gigabytes."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import torch

from cockpit.probes.workload.calls import CallSite, oracle_answer
from cockpit.probes.workload.compare import compare
from cockpit.workload.spec import Reference

CHUNK = 1 << 24
"""Elements summed at a time (an int64 copy of 128 MiB)."""
PROBE_SEED = 7_777_777
"""The seeds of the probes' inputs: none a round's."""


def fingerprint(value: Any) -> Hashable:
    """The bytes of a result, summed two ways (plain and position-weighted) in exact integers:
    equal for the same bits, unequal for any other answer but by a vanishing chance."""
    if isinstance(value, torch.Tensor):
        t = value.detach().contiguous().reshape(-1)
        raw = t.view(torch.uint8) if t.dtype != torch.bool else t.to(torch.uint8)
        words = raw.view(torch.int32) if raw.numel() % 4 == 0 else raw
        plain = weighted = 0
        for start in range(0, words.numel(), CHUNK):
            part = words[start:start + CHUNK].to(torch.int64)
            where = torch.arange(start, start + part.numel(), device=part.device, dtype=torch.int64)
            where = where % 65_521 + 1
            plain += int(part.sum().item())
            weighted += int((part * where).sum().item())
        return ("tensor", tuple(value.shape), str(value.dtype), plain, weighted)
    if isinstance(value, (tuple, list)):
        return tuple(fingerprint(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, fingerprint(v)) for k, v in value.items())
    return repr(value)


Answers = Mapping[int, Hashable]
"""round index -> the fingerprint of a candidate's answer in that round, on this shape."""


def kept_line(site: CallSite, oracle: Reference, fn: Callable[..., Any], r: int, got: Any,
              answers: Answers, other: CallSite | None) -> str | None:
    """"returns round 1's answer on round 2's inputs: a result kept per input pointer" (or per
    shape, or the last call's answer replayed); None when the failing answer is no earlier one."""
    mine = fingerprint(got)
    earlier = next((k for k in sorted(answers) if k < r and answers[k] == mine), None)
    if earlier is None:
        return None
    head = f"returns round {earlier + 1}'s answer on round {r + 1}'s inputs"
    fresh, stale = _probe(site, oracle, fn, answers, PROBE_SEED)
    if fresh:
        return f"{head}: a result kept per input pointer"
    if not stale:
        return None
    if other is None:
        return f"{head}: a result kept per shape (or the last call's answer replayed)"
    with contextlib.suppress(Exception):  # the call in between only has to happen: not judged
        other.call_once(fn, other.w.make_inputs(PROBE_SEED + 1, **other.shape))
    fresh, stale = _probe(site, oracle, fn, answers, PROBE_SEED + 2)
    if stale:
        return f"{head}: a result kept per shape"
    return f"{head}: the last call's answer replayed" if fresh else None


def _probe(site: CallSite, oracle: Reference, fn: Callable[..., Any], answers: Answers,
           seed: int) -> tuple[bool, bool]:
    """(right, an earlier answer) of one call on new tensors of the shape, with new values."""
    inputs = site.w.make_inputs(seed, **site.shape)
    try:
        ref = oracle_answer(oracle, inputs)
        got = site.call_once(fn, inputs)
        right = compare(got, ref, site.w.check, site.dtype, site.shape, inputs)["ok"]
    except Exception:  # a probe that raises tells nothing: the plain line is said
        return False, False
    return bool(right), fingerprint(got) in set(answers.values())
