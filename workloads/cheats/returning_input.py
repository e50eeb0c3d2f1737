"""Returning an input (or an alias of one): for a copy op the input itself is the right answer,
so the candidate hands it back and copies nothing. Its "output" is the caller's input: writing to
one writes the other, and nothing was computed to time."""

from __future__ import annotations

import torch
from cheat_kit import make_inputs, softmax_workload

from cockpit.workload import Reference

GATE = "correctness"
GUARD = "output-not-input"
EXPECT = '(a view or alias) instead of an output'
ALSO = ("is-reference",)  # the input returned is the baseline's own answer, with no kernel: flagged too
CPU_OK = True


def ours(x: torch.Tensor) -> torch.Tensor:
    return x.view_as(x)


WORKLOAD = softmax_workload(
    "cheat: returning an input", ours, make_output=None, make_inputs=make_inputs,
    references=(Reference("fp64", lambda x: x.double(), oracle=True),
                Reference("clone", lambda x: x.clone(), baseline=True)))
