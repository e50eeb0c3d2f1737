"""Timing a config whose calls are long enough (≥ `LAUNCH_BOUND_MS`) to be timed one by one: the
L2 flushed before every call (outside the events), the implementations in blocks interleaved by
`block_plan`, each block after `settle_ms` untimed at its own clock.

Device time: a block's calls are queued in groups while the GPU is busy with earlier work (the
settle calls, the group before) or a spin (probes/device_hold.py's `Cover`), so a call that
launches several kernels (a PyTorch reference) is timed without the host's gaps between them; a
group the GPU reached before it was queued is timed again. Each block is judged against the watch
once it has seen past it (probes/block_watch.py): a dirty one is dropped and timed again after the
card's recovery wait, within the config's budget. An implementation whose median's interval is
still wider than ±1 % after the planned blocks gets more blocks, within `extra_s` (a heavy kernel
at its power cap spreads 4–9 % call to call on an H100: 30 calls do not pin its median). Eager
time: a few calls per implementation launched onto an idle GPU, the flush before each.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from cockpit.analysis.timing_method import EXTRA_SECONDS, INTERVAL_TARGET, half_width
from cockpit.probes.block_watch import BlockJudge, CellBlocks
from cockpit.probes.device_hold import Cover, Hold, working_spin
from cockpit.probes.timing_pieces import (
    NO_ENDS,
    BlockEnds,
    Span,
    block_plan,
    net_ms,
    settle_calls,
    timed_cell,
)
from cockpit.workload.result_wire import TimingCell

Run = Callable[[int], object]
"""run(k): one call of an implementation on input set k."""
GROUP_CALLS = 32
"""Calls queued behind one spin: each is a flush, two events and the call's own launches, well
inside CUDA's launch queue."""
EAGER_CALLS = 8
COVER_TRIES = 2
"""A group the spin did not cover is timed again at most this many times (then kept, counted)."""
EXTRA_BLOCK_MS = 100.0
"""An extra block times at least this much GPU work, as much as the settling before it (cuDNN at
B2 H16 S8192 D128 on an H100 spread 4.7 % call to call: extra blocks of the planned 15 calls took
it from 30 to 75 samples in 1.5 s and left its median at ±5.6 %)."""


@dataclass
class _Block:
    impl: str
    timed: int
    events: list[tuple[Any, Any]] = field(default_factory=list)
    t0: float = 0.0
    t1: float = 0.0


@dataclass
class _PerCallImpl:
    cover: Cover
    blocks: CellBlocks = field(default_factory=CellBlocks)


def per_call_cells(runs: Mapping[str, Run], flush: Any, call_ms: Mapping[str, float], n: int, rounds: int,
                   settle_ms: float, config_index: int, input_sets: int, hold: Hold | None = None,
                   judge: BlockJudge | None = None, anchor: Any = None, anchor_t: float = 0.0,
                   keep_times: bool = False, event_ms: float = 0.0, extra_s: float = EXTRA_SECONDS,
                   ends: Mapping[str, BlockEnds] | None = None) -> tuple[dict[str, TimingCell], list[Span]]:
    """Each implementation's cell from its clean blocks' per-call device times (`event_ms`, the
    events' own cost, taken out of each), and those blocks' spans for the validity verdict.
    `ends`: what runs at each block's ends, untimed."""
    judge = judge or BlockJudge(None)
    spin = working_spin(hold)
    state = {impl: _PerCallImpl(Cover(spin)) for impl in runs}
    counter = [0]
    clean: list[_Block] = []
    plan = block_plan(dict(call_ms), n, rounds, settle_ms, config_index)
    todo = [_Block(impl, timed) for impl, _, timed in plan]
    last = ""
    planned_done: float | None = None
    while todo:
        last = _run_blocks(todo, runs, flush, state, last, settle_ms, call_ms, input_sets, counter,
                           ends or {})
        torch.cuda.synchronize()
        if anchor is not None:
            _place_blocks(todo, anchor, anchor_t)
        judge.wait_past(max(b.t1 for b in todo))
        todo = _judged(todo, clean, state, judge)
        if todo:
            continue
        planned_done = planned_done or time.perf_counter()
        if time.perf_counter() - planned_done < extra_s:
            todo = _extra_blocks(plan, runs, clean, call_ms, event_ms)
    cells = _cells(runs, flush, clean, state, input_sets, counter, event_ms, spin is not None, keep_times)
    return cells, _spans(clean)


def _run_blocks(blocks: list[_Block], runs: Mapping[str, Run], flush: Any, state: Mapping[str, _PerCallImpl],
                last: str, settle_ms: float, call_ms: Mapping[str, float], input_sets: int,
                counter: list[int], ends: Mapping[str, BlockEnds]) -> str:
    """The blocks in turn, each after its settle calls (none when the same implementation ran the
    block before: its clock is settled); returns the implementation that ran last."""
    for block in blocks:
        settle = 0 if block.impl == last else settle_calls(settle_ms, call_ms[block.impl])
        _run_block(runs[block.impl], flush, block, settle, state[block.impl], input_sets, counter,
                   ends.get(block.impl, NO_ENDS))
        last = block.impl
    return last


def _spans(clean: list[_Block]) -> list[Span]:
    """The clean blocks' spans (implementation, first event, last event, calls) for the validity verdict."""
    return [(b.impl, b.events[0][0], b.events[-1][1], b.timed) for b in clean]


def _place_blocks(blocks: list[_Block], anchor: Any, anchor_t: float) -> None:
    """Each block's span on the watch's clock, from its first and last events' distance to the anchor."""
    for block in blocks:
        block.t0 = anchor_t + anchor.elapsed_time(block.events[0][0]) / 1e3
        block.t1 = anchor_t + anchor.elapsed_time(block.events[-1][1]) / 1e3


def _extra_blocks(plan: Sequence[tuple[str, Any, int]], runs: Mapping[str, Run], clean: list[_Block],
                  call_ms: Mapping[str, float], event_ms: float) -> list[_Block]:
    """One more block for each implementation whose median is still wide: as long as its longest
    planned block, and at least EXTRA_BLOCK_MS of calls."""
    return [_Block(impl, max(max(timed for i, _, timed in plan if i == impl),
                             math.ceil(EXTRA_BLOCK_MS / max(call_ms[impl], 1e-3))))
            for impl in runs if _wide(_samples(clean, impl, event_ms))]


def _cells(runs: Mapping[str, Run], flush: Any, clean: list[_Block], state: Mapping[str, _PerCallImpl],
           input_sets: int, counter: list[int], event_ms: float, held: bool,
           keep_times: bool) -> dict[str, TimingCell]:
    """Every implementation's eager calls, timed once all its blocks are, then each one's cell."""
    eager = {impl: _eager(runs[impl], flush, input_sets, counter, event_ms) for impl in runs}
    return {impl: _cell(_samples(clean, impl, event_ms), eager[impl], held, st, event_ms, keep_times)
            for impl, st in state.items()}


def _cell(samples: list[float], eager: list[float], held: bool, st: _PerCallImpl, event_ms: float,
          keep_times: bool) -> TimingCell:
    """One implementation's cell from its clean blocks' samples (kept in it when the caller keeps them)."""
    cell = timed_cell(samples, "per-call", eager, held,
                      {"expired_holds": st.cover.expired, "event_ms": event_ms, **st.blocks.fields()})
    if keep_times:
        cell["times_ms"] = samples
    return cell


def _run_block(run: Run, flush: Any, block: _Block, settle: int, st: _PerCallImpl, input_sets: int,
               counter: list[int], ends: BlockEnds) -> None:
    """`settle` untimed calls, then the block's timed calls in covered groups, `ends` run before
    and after them."""
    block.events = []
    for _ in range(settle):
        flush.zero_()
        run(_next(counter, input_sets))
    ends.begin(block.timed, (COVER_TRIES + 1) * block.timed)  # a group timed again reads more windows
    busy = torch.cuda.Event()
    busy.record()  # the settle calls still running: the first group queues behind them
    left = block.timed
    tries = 0
    while left:
        size = min(GROUP_CALLS, left)
        st.cover.before(busy)
        group = []
        for _ in range(size):
            k = _next(counter, input_sets)
            flush.zero_()  # outside the events: every call starts with a cold L2
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run(k)
            end.record()
            group.append((start, end))
        busy = group[-1][1]
        if not st.cover.after():
            tries += 1
            if tries <= COVER_TRIES:
                continue  # timed again, behind a longer spin
        tries = 0
        block.events.extend(group)
        left -= size
    ends.end()


def _samples(clean: list[_Block], impl: str, event_ms: float) -> list[float]:
    """One implementation's per-call device times in its clean blocks, the events' cost out."""
    return [net_ms(s, e, event_ms) for b in clean if b.impl == impl for s, e in b.events]


def _wide(samples: list[float]) -> bool:
    """The median's interval (order statistics) is still wider than ±INTERVAL_TARGET."""
    return len(samples) >= 2 and half_width(samples) > INTERVAL_TARGET


def _judged(blocks: list[_Block], clean: list[_Block], state: Mapping[str, _PerCallImpl],
            judge: BlockJudge) -> list[_Block]:
    """The blocks to time again: the dirty ones, while the config's budget lasts (the card given
    its recovery wait first); the clean ones join `clean`, and so do dirty ones past the budget
    when their implementation has no clean block (its cell then says it is unclean)."""
    again = []
    for block in blocks:
        word = judge.fault(block.t0, block.t1) if block.t1 else None
        if word is None:
            clean.append(block)
            continue
        st = state[block.impl]
        st.blocks.drop(word)
        if not judge.spent():
            again.append(block)
            continue
        judge.give_up(st.blocks)
        if not any(b.impl == block.impl for b in clean):
            clean.append(block)
    if again:
        judge.recover()
    return again


def _eager(run: Run, flush: Any, input_sets: int, counter: list[int], event_ms: float) -> list[float]:
    """A few calls launched onto an idle GPU one at a time, the flush before each: eager use."""
    torch.cuda.synchronize()
    pairs = []
    for _ in range(EAGER_CALLS):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run(_next(counter, input_sets))
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return [net_ms(s, e, event_ms) for s, e in pairs]


def _next(counter: list[int], input_sets: int) -> int:
    counter[0] += 1
    return (counter[0] - 1) % input_sets
