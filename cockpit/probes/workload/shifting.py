"""The shifting pool: every timed call of a forward bench gets an input and output pointer of its
own, as NVIDIA's SOL-ExecBench gives each timed iteration (its ShiftingMemoryPoolAllocator), so a
result kept per pointer is never handed back as the answer of a later call.

Per input set, every contiguous floating-point input tensor lives in a pool a little larger than
itself: `slots` windows, each the tensor's size, 256 bytes apart; call j on the set reads window
j mod slots. The pool holds the tensor's values tiled, so each window holds a rotation of them: the
calls read distinct values, and the oracle of a checked call is computed on that call's own
windows. Windows overlap, which is fine: inputs are read only. Before a timed block that would read
a window a second time since the values last changed, the pool is rotated again by a random number
of elements (`Shifted.refresh`; probes/workload/timed_check.py decides when), so whatever a window
held when an earlier call read it, it holds something else now: an answer kept per pointer is a
wrong one. A rotation is a few copies per tensor, so it is not done before every block: with 121
input sets of a short call, one every block cost the attention grid 4 s of its 120.

Integer tensors (indices, offsets), non-contiguous tensors, tensors that require grad and
non-tensors stay as they are: their structure is their meaning (a rotated index is out of range, a
strided view is a layout). A float input whose structure is its meaning too (sorted, triangular)
is rotated all the same: a kernel that relies on it reads as wrong on the windows.

The output buffer (the workload's `make_output`) lives in a pool of its own per implementation
(`Outputs`; one for all the input sets, a window a call: probes/workload/timed_check.py says why):
every contiguous tensor of it, any dtype, in `slots` windows plus a keep slot past
them that no rotating window overlaps, where a sampled call writes an answer that must outlive the
block (probes/workload/timed_check.py). A window's views are made once per config, the first time
a block start asks for them (`Windows`): the timed loop picks a view, it never slices, and a
window no call reaches is never made."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import torch

SLOTS = 16
"""Windows per tensor at least: more when a block makes more calls on one set (`slots_for`)."""
SLOT_BYTES = 256
"""How far apart two windows start: the alignment a vectorised kernel (or TMA) asks of a pointer."""


def slots_for(calls_per_block: int, sets: int) -> int:
    """Windows per pool: enough that no block's calls on one set come back to a window."""
    return max(SLOTS, -(-calls_per_block // max(1, sets)) + 1)


@dataclass
class Pool:
    """One tensor's pool: its windows (and keep slot), and where the rotation of its values stands."""

    flat: torch.Tensor
    n: int
    """The tensor's elements: one period of the pool's values."""
    views: list[torch.Tensor]
    keep: torch.Tensor | None = None

    def rotate(self, by: int) -> None:
        """Every window's values rotated `by` elements more (one period's copy held meanwhile)."""
        by %= self.n
        if by:
            period = torch.cat((self.flat[by:self.n], self.flat[:by]))
            tile(self.flat, period)


def tile(pool: torch.Tensor, period: torch.Tensor) -> None:
    """`pool` filled with `period` repeated (1-D both): pool[i] = period[i mod len(period)], in
    doubling copies rather than an index tensor eight times the pool's size."""
    n = period.numel()
    first = min(n, pool.numel())
    pool[:first].copy_(period[:first])
    filled = first
    while filled < pool.numel():
        take = min(filled, pool.numel() - filled)
        pool[filled:filled + take].copy_(pool[:take])
        filled += take


def pooled(t: torch.Tensor, slots: int, keep: bool) -> Pool:
    """A pool of `slots` windows of `t` 256 B apart holding `t`'s values tiled, with a keep slot
    past them (256 B aligned) when asked."""
    n = t.numel()
    step = SLOT_BYTES // t.element_size()
    rotating = n + (slots - 1) * step
    keep_at = -(-rotating // step) * step
    flat = torch.empty(keep_at + (n if keep else 0), dtype=t.dtype, device=t.device)
    tile(flat, t.detach().reshape(-1))
    views = [flat[j * step:j * step + n].view(t.shape) for j in range(slots)]
    return Pool(flat, n, views, flat[keep_at:keep_at + n].view(t.shape) if keep else None)


def input_poolable(value: Any) -> bool:
    """A contiguous floating-point tensor that needs no gradient: its values may rotate."""
    return (isinstance(value, torch.Tensor) and value.is_floating_point() and _windowed(value))


def output_poolable(value: Any) -> bool:
    """A contiguous output tensor of any dtype: its windows are written, never read."""
    return isinstance(value, torch.Tensor) and _windowed(value)


def _windowed(t: torch.Tensor) -> bool:
    return (t.is_contiguous() and t.numel() > 0 and not t.requires_grad
            and SLOT_BYTES % t.element_size() == 0)


def _walk(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """`value` with every leaf mapped (nested tuples, lists and dicts walked, their kinds kept)."""
    if isinstance(value, tuple):
        walked = [_walk(v, leaf) for v in value]
        return type(value)(*walked) if hasattr(value, "_fields") else tuple(walked)  # a namedtuple kept
    if isinstance(value, list):
        return [_walk(v, leaf) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, leaf) for k, v in value.items()}
    return leaf(value)


def _pools_of(value: Any, poolable: Callable[[Any], bool], slots: int, keep: bool,
              pools: list[Pool]) -> Any:
    """`value` with each poolable tensor replaced by its pool (one pool for a tensor met twice)."""
    memo: dict[int, Pool] = {}

    def leaf(v: Any) -> Any:
        if not poolable(v):
            return v
        if id(v) not in memo:
            memo[id(v)] = pooled(v, slots, keep)
            pools.append(memo[id(v)])
        return memo[id(v)]

    return _walk(value, leaf)


def _at(template: Any, pick: Callable[[Pool], Any]) -> Any:
    return _walk(template, lambda v: pick(v) if isinstance(v, Pool) else v)


class Windows(Sequence[Any]):
    """The structure once per window (window j's views in place of the pools), each made the first
    time it is asked for and kept."""

    def __init__(self, template: Any, slots: int) -> None:
        self.template, self.slots = template, slots
        self.made: dict[int, Any] = {}

    def __len__(self) -> int:
        return self.slots

    @overload
    def __getitem__(self, j: int) -> Any: ...

    @overload
    def __getitem__(self, j: slice) -> list[Any]: ...

    def __getitem__(self, j: int | slice) -> Any:
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(self.slots))]
        if j < 0:
            j += self.slots
        if not 0 <= j < self.slots:
            raise IndexError(j)
        if j not in self.made:
            self.made[j] = _at(self.template, _window(j))
        return self.made[j]


def _window(j: int) -> Callable[[Pool], torch.Tensor]:
    return lambda pool: pool.views[j]


@dataclass
class Shifted:
    """One input set in its pools: `inputs[j]` is what call j (mod slots) reads."""

    inputs: Sequence[Any]
    pools: list[Pool] = field(default_factory=list)
    generation: int = 0
    """How many times the values changed: a reader counts its calls since the last change."""

    @property
    def slots(self) -> int:
        return len(self.inputs)

    def refresh(self) -> None:
        """Every pool's values rotated by a random count: each window holds new values."""
        for pool in self.pools:
            pool.rotate(1 + secrets.randbelow(max(1, pool.n - 1)))
        self.generation += 1


def shift_inputs(inputs: Any, slots: int) -> Shifted:
    """The input set's windows (`slots` of them; 1, the set itself, leaves it as it is)."""
    if slots <= 1:
        return Shifted([inputs])
    pools: list[Pool] = []
    template = _pools_of(inputs, input_poolable, slots, False, pools)
    return Shifted(Windows(template, slots), pools)


@dataclass
class Outputs:
    """One implementation's output buffer on one input set: `outs[j]` for call j (mod slots), and
    `keep`, where a sampled call writes; `keepable` False when no keep slot holds the whole answer
    (a tensor left as it is, or an answer written into the inputs)."""

    outs: Sequence[Any]
    keep: Any
    keepable: bool
    pools: list[Pool] = field(default_factory=list)

    def poison(self) -> None:
        """NaN in every floating-point window and keep slot: an element never written fails."""
        for pool in self.pools:
            if pool.flat.is_floating_point() or pool.flat.is_complex():
                pool.flat.fill_(float("nan"))


def shift_output(buf: Any, slots: int, own: bool) -> Outputs:
    """A buffer's windows and keep slot (`slots` <= 1: the buffer itself, no keep slot). `own`:
    this implementation's pools, NaN-poisoned, never another's (with slots <= 1, a poisoned copy)."""
    if buf is None:
        return Outputs([None] * max(1, slots), None, True)  # the returned tensors are kept instead
    pools: list[Pool] = []
    if slots <= 1:
        mine = _walk(buf, lambda v: v.clone() if isinstance(v, torch.Tensor) else v) if own else buf
        shifted = Outputs([mine], None, False, _collect(mine) if own else [])
    else:
        template = _pools_of(buf, output_poolable, slots, True, pools)
        whole = not _walk_any(template, lambda v: isinstance(v, torch.Tensor))
        shifted = Outputs(Windows(template, slots), _at(template, lambda p: p.keep), whole, pools)
    if own:
        shifted.poison()
    return shifted


def _collect(value: Any) -> list[Pool]:
    """Plain tensors as one-window pools (what `poison` walks)."""
    found: list[Pool] = []
    _walk(value, lambda v: found.append(Pool(v.view(-1), v.numel(), [v])) if isinstance(v, torch.Tensor)
          and v.is_contiguous() else None)
    return found


def _walk_any(value: Any, test: Callable[[Any], bool]) -> bool:
    """Whether some leaf of `value` passes `test`."""
    found: list[bool] = []
    _walk(value, lambda v: found.append(test(v)))
    return any(found)
