"""Ghost replay (guard "ghost-replay", KernelGenBench's check): once correctness has passed, every
candidate is called again on the smallest test shape with the workload's own kernel replaced by a
no-op, on a NaN-poisoned output. An output that comes back the same as the real call's never
depended on the kernel: the answer came from somewhere else (a torch fallback, a fast path whose
condition is never true), and the correctness the gate saw is not the kernel's.

The kernel is silenced where it is launched: a Triton kernel by `JITFunction.run` (what
`kernel[grid](...)` and the autotuner both call) doing nothing; an extension (`Extension`,
`Inline`) by every public function of its loaded module returning at once, with its output
argument untouched (the last tensor argument, by the house's `forward(x, out)` convention) or
None. A workload with no kernel of its own (a plain callable, torch ops) is said to have none:
the replay did not run, which is never a pass. A candidate after the first that never asks for
the workload's kernel (a plain-torch candidate to compare with) is said as such, not failed; the
first candidate, the one the workload is about, fails whether it asked for the kernel or not."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any

import torch

from cockpit.probes import guarded
from cockpit.probes.copies import clone
from cockpit.probes.workload.check import call
from cockpit.probes.workload.compare import same_bits
from cockpit.probes.workload_load import first_line
from cockpit.workload.result_wire import CheckRowJson
from cockpit.workload.spec import Build, Extension, Inline, TritonJit, Workload

GUARD = "ghost-replay"
NO_KERNEL = "ghost replay: no kernel of its own to replace"
UNCHANGED = ("its output does not change when its kernel is a no-op: the kernel never computes the answer "
             "(a fast path never taken?)")
SEED = 7_777
"""The replay's inputs: a seed of their own, so no result of the correctness rounds can match by chance."""

Say = Callable[[str], None]
KnobsFor = Callable[[Mapping[str, Any]], Mapping[str, Any]]
Silencer = Callable[[], contextlib.AbstractContextManager[None]]


def ghost_replay(w: Workload, knobs: KnobsFor, say: Say) -> list[CheckRowJson]:
    """The failing rows (none when every candidate's output changed, or when the replay could not
    run: each said in a line)."""
    if not guarded.on(GUARD):
        say("ghost replay: turned off (COCKPIT_GUARDS_OFF): not checked")
        return []
    silence = silencer(w.build)
    if silence is None:
        say(f"{NO_KERNEL} (a {w.build.kind} workload): not checked")
        return []
    shape = w.smallest_first(list(w.test_grid) or list(w.bench_grid))[0]
    name = w.shape_name(shape)
    inputs = w.make_inputs(SEED, **shape)
    failed: list[CheckRowJson] = []
    first = next(iter(w.candidates))
    for cand, fn in w.candidates.items():
        try:
            real = _poisoned_call(w, fn, clone(inputs), shape, knobs)
        except Exception as exc:  # it passed correctness: a raise here is said, not judged
            say(f"ghost replay: {cand} raised on its real call on {name} ({first_line(exc)}): not checked")
            continue
        _LAUNCHES[0] = 0
        try:
            with silence():
                ghost = _poisoned_call(w, fn, clone(inputs), shape, knobs)
        except Exception as exc:  # it could not do without its kernel: its answer depends on it
            say(f"ghost replay: {cand} on {name}: raises without its kernel ({first_line(exc)}): its "
                "answer depends on it")
            continue
        if not _same(real, ghost):
            say(f"ghost replay: {cand} on {name}: its output changes when its kernel is a no-op")
            continue
        if _LAUNCHES[0] == 0 and cand != first:  # a comparison candidate of plain torch: not its kernel
            say(f"ghost replay: {cand} on {name}: calls none of the workload's kernels (one to compare "
                "with?): not checked")
            continue
        say(f"FAIL ghost replay: {cand} on {name}: {UNCHANGED}")
        failed.append({"config": f"{name} ghost replay", "shape": dict(shape), "candidate": cand, "ok": False,
                       "max_abs": None, "rel_l2": None, "nonfinite": 0, "tolerance": None, "what": UNCHANGED})
    return failed


def silencer(build: Build) -> Silencer | None:
    """How to silence the workload's own kernel for the length of a `with`; None when it has none."""
    if isinstance(build, TritonJit):
        return _triton_silenced
    if isinstance(build, (Extension, Inline)):
        return lambda: module_silenced(build.load())
    return None


def _triton_silenced() -> contextlib.AbstractContextManager[None]:
    import importlib

    # by name: Triton is the user's, absent where the cockpit is type-checked
    return no_launch(importlib.import_module("triton.runtime.jit").JITFunction)


@contextlib.contextmanager
def no_launch(kernel_class: type) -> Iterator[None]:
    """`kernel_class.run` (Triton's launch) does nothing inside the `with`, then is its own again."""
    own = kernel_class.__dict__.get("run")
    kernel_class.run = _no_run  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if own is None:
            del kernel_class.run  # type: ignore[attr-defined]
        else:
            kernel_class.run = own  # type: ignore[attr-defined]


_LAUNCHES = [0]
"""Launches the silenced kernel was asked for during the current ghost call."""


def _no_run(*args: Any, **kwargs: Any) -> None:
    _LAUNCHES[0] += 1
    return None


@contextlib.contextmanager
def module_silenced(module: ModuleType) -> Iterator[None]:
    """Every public function of an extension's module returns at once inside the `with`."""
    own = {name: value for name, value in vars(module).items()
           if not name.startswith("_") and (inspect.isbuiltin(value) or inspect.isfunction(value))}
    for name in own:
        setattr(module, name, _untouched)
    try:
        yield
    finally:
        for name, value in own.items():
            setattr(module, name, value)


def _untouched(*args: Any, **kwargs: Any) -> Any:
    """A kernel's call that launches nothing: its output argument (the last of two or more tensors)
    as it was given, or None."""
    _LAUNCHES[0] += 1
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    return tensors[-1] if len(tensors) > 1 else None


def _poisoned_call(w: Workload, fn: Callable[..., Any], inputs: Any, shape: Mapping[str, Any],
                   knobs: KnobsFor) -> Any:
    out = w.make_output(*inputs, **shape) if w.make_output is not None else None
    if isinstance(out, torch.Tensor) and out.is_floating_point():
        out.fill_(float("nan"))
    result = call(fn, inputs, out, knobs(shape))
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result


def _same(real: Any, ghost: Any) -> bool:
    """Bit for bit the same result (a result of another type is not the same)."""
    if type(real) is not type(ghost):
        return False
    return same_bits(real, ghost)
