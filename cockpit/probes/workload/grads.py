"""What the backward and full passes share (probes/workload/check.py checks them, timing.py times
them): which inputs require grad, the gradient a backward is seeded with, the backward itself, and
how an input is named in a line ("input #0 (x)")."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch

from cockpit.workload.spec import Workload

GRAD_SEED = 7_919
"""The seed of the gradient a backward is seeded with, offset by the input set's own seed."""


class NoGrad(ValueError):
    """A backward mode that cannot run as declared (no input requires grad)."""


def grad_indices(w: Workload, inputs: Sequence[Any]) -> tuple[int, ...]:
    """The inputs gradients are taken for: floating-point tensors `make_inputs` made with
    requires_grad=True, and those `grad_inputs` names."""
    found = []
    for i, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor):
            if i in w.grad_inputs:
                raise NoGrad(f"grad_inputs names input #{i}, a {type(value).__name__}, not a tensor")
            continue
        if i in w.grad_inputs or value.requires_grad:
            if not (value.is_floating_point() or value.is_complex()):
                raise NoGrad(f"input #{i} is {value.dtype}: only floating-point inputs take a gradient")
            found.append(i)
    missing = [i for i in w.grad_inputs if i >= len(inputs)]
    if missing:
        raise NoGrad(f"grad_inputs names input #{missing[0]}; make_inputs returned {len(inputs)}")
    if not found:
        raise NoGrad(f"workload {w.name!r} declares modes {', '.join(w.grad_modes)} but no input requires "
                     "grad: make them with requires_grad=True in make_inputs, or name them: grad_inputs=(0,)")
    return tuple(found)


def leaves(inputs: Sequence[Any], which: Sequence[int], dtype: torch.dtype | None = None) -> tuple[Any, ...]:
    """The inputs with those in `which` as fresh leaves that require grad (their values copied;
    `dtype`: 16-bit ones upcast to it, as the oracle gets them); the others as they are."""
    out = []
    for i, value in enumerate(inputs):
        if i in which:
            t = value.detach()
            if dtype is not None and t.is_floating_point() and t.element_size() < 4:
                t = t.to(dtype)
            out.append(t.clone().requires_grad_(True))
        else:
            out.append(value)
    return tuple(out)


def grad_leaves(inputs: Sequence[Any], which: Sequence[int]) -> tuple[Any, ...]:
    """The inputs with those in `which` made leaves that require grad in place of the tensor (the
    bench's input sets: every implementation's forward on a set shares them)."""
    return tuple(v.detach().requires_grad_(True) if i in which and not (v.is_leaf and v.requires_grad) else v
                 for i, v in enumerate(inputs))


def outputs(value: Any) -> list[torch.Tensor]:
    """The tensors of a call's result that a backward flows from (a tensor, or a tuple or list)."""
    if isinstance(value, torch.Tensor):
        return [value] if value.requires_grad else []
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, torch.Tensor) and v.requires_grad]
    return []


def seed_grad(w: Workload, value: Any, seed: int) -> list[torch.Tensor]:
    """The gradient each output of `value` is seeded with: the workload's `grad_output`, or random
    normal values of the output's shape and dtype from `seed` (on its device)."""
    seeded = []
    for k, y in enumerate(outputs(value)):
        if w.grad_output is not None:
            dy = w.grad_output(y.detach(), seed + k)
        else:
            gen = torch.Generator(device=y.device).manual_seed(GRAD_SEED + seed + k)
            dy = torch.randn(y.shape, generator=gen, device=y.device, dtype=torch.float32).to(y.dtype)
        seeded.append(dy)
    return seeded


def backward(value: Any, grads: Sequence[torch.Tensor], retain_graph: bool = False) -> None:
    """The backward from a call's result, seeded with `grads` (each cast to its output's dtype)."""
    ys = outputs(value)
    if not ys:
        raise NoGrad("its output does not require grad: the backward cannot run (wrap the kernels in a "
                     "torch.autograd.Function, and call it without an output buffer in backward modes)")
    torch.autograd.backward(ys, [g.to(y.dtype) for y, g in zip(ys, grads, strict=True)],
                            retain_graph=retain_graph)


def clear(inputs: Sequence[Any], which: Sequence[int]) -> None:
    """Every gradient-taking input's `.grad` set to None (do_bench's grad_to_none)."""
    for i in which:
        inputs[i].grad = None


def input_name(fn: Callable[..., Any] | None, index: int) -> str:
    """'input #0 (x)': the index, and the parameter's name where the function's signature has it."""
    name = None
    if fn is not None:
        try:
            params = [p for p in inspect.signature(fn).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            params = []
        if index < len(params):
            name = params[index].name
    return f"input #{index}" + (f" ({name})" if name else "")
