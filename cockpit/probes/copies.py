"""A copy of a call's inputs: every tensor cloned, nested tuples, lists and dicts walked (the
correctness check's own copies, and GPU MODE's reference and check get theirs the same way)."""

from __future__ import annotations

from typing import Any

import torch


def clone(value: Any) -> Any:
    """A copy of the inputs: every tensor cloned (nested tuples, lists and dicts walked)."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, tuple):
        return tuple(clone(v) for v in value)
    if isinstance(value, list):
        return [clone(v) for v in value]
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    return value
