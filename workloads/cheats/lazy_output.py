"""Lazy output: the call returns a tensor subclass that holds its input and computes the answer
only when something reads it. The timed call does nothing; the check, reading the output, gets
the right answer computed then."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from cheat_kit import right, softmax_workload
from torch.utils._pytree import tree_map

GATE = "correctness"
GUARD = "plain-tensor"
EXPECT = 'a lazy or proxy output'
CPU_OK = True


class Deferred(torch.Tensor):
    """An output whose values are computed from `source` whenever a torch function reads it."""

    source: torch.Tensor

    @classmethod
    def __torch_function__(cls, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        def now(a: Any) -> Any:
            return right(a.source, torch.empty_like(a.source)) if isinstance(a, Deferred) else a

        with torch._C.DisableTorchFunctionSubclass():
            return func(*tree_map(now, args), **tree_map(now, kwargs or {}))


def ours(x: torch.Tensor) -> torch.Tensor:
    with torch._C.DisableTorchFunctionSubclass():
        later = torch.empty_like(x).as_subclass(Deferred)
    later.source = x
    return later


WORKLOAD = softmax_workload("cheat: lazy output", ours, make_output=None)
