"""The timed calls are the checked calls: after each timed block of a candidate, untimed, the
output of a random sample of that block's calls and of its last call is held against the
workload's oracle by the check the correctness gate uses (probes/workload/compare.py), the oracle
run on that call's own windows of the shifting pool (probes/workload/shifting.py). A kernel that is
right while checked and wrong while timed (right for its first calls per shape, then fast and
wrong; a result kept per pointer) fails with its own line: "right when checked, wrong when timed
(call N of shape S): ...".

A sampled call is told apart by nothing the candidate sees: it reads the same pool's windows and
writes a window of the same pool, 256 B aligned, like every call; only that window is the keep
slot past the rotating ones, which no later call writes.

An implementation's output windows are one pool for every input set (`output_pools`), a window a
call: what its calls write stays one output's size plus 256 B a call, as a reference's output
does when it allocates each call and the caching allocator hands the same block back. With a pool
per input set, a candidate's outputs alone spread over every set (past the L2 the sets are there to
outgrow), its writes went to DRAM while a reference's stayed in L2: on an H200 the same softmax
built twice read 0.87x itself at M=4096 N=512 fp16 (0.78 us a call: 4 MB written at HBM3e's
~4.8 TB/s is 0.83 us). A pool per set is kept where a window is not the whole output (a tensor
the pool leaves as it is: each set's own, as before). Which calls are sampled is drawn from
`secrets` as the block starts. A workload without an output buffer has its sampled calls'
returned tensors kept instead. Where no keep slot can hold the answer (it is written into the
inputs, as GPU MODE's data holds its output, or the buffer has a tensor the pool leaves as it is),
the last call on each of a few sets is checked: nothing writes a set's windows after its last
call of the block.

Forward mode only: the backward modes' gradients are checked by the correctness gate, not here.
The time checking takes is counted per implementation (`check_s`), said in the bench's rows and
log; it stays small: SAMPLES calls a block and the last."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cockpit.probes import guards_identity
from cockpit.probes.copies import clone
from cockpit.probes.guarded import on
from cockpit.probes.workload.calls import words as failure_words  # the correctness gate's words
from cockpit.probes.workload.caught import BenchCaught
from cockpit.probes.workload.compare import compare
from cockpit.probes.workload.shifting import Outputs, Shifted, shift_inputs, shift_output, slots_for
from cockpit.workload.result_wire import CheckStats
from cockpit.workload.spec import Workload

Run = Callable[[Sequence[Any], Any], Any]
"""run(inputs, out): one call of an implementation."""
SAMPLES = 1
"""Calls sampled per block besides the last: each costs an oracle call and a comparison, untimed."""


class TimedWrong(BenchCaught):
    """A timed call's output failed the workload's check: which call, on which shape, and why."""

    def __init__(self, config: str, impl: str, call: int, what: str) -> None:
        self.call, self.what = call, what
        super().__init__(config, impl, "timed-outputs",
                         f"right when checked, wrong when timed (call {call} of shape {config}): {what}")


@dataclass(frozen=True)
class Taken:
    """One call kept for the check: its number on this shape, its set and window, what it returned."""

    call: int
    k: int
    j: int
    value: Any


@dataclass(frozen=True)
class Oracle:
    """What a check needs of the workload on one shape."""

    w: Workload
    shape: Mapping[str, Any]
    config: str

    def verdict(self, taken: Taken, inputs: Sequence[Any]) -> CheckStats:
        oracle = self.w.oracle
        assert oracle is not None
        ref = oracle.fn(*clone(inputs))
        dtype = self.shape.get(self.w.dtype_key) if self.w.dtype_key else None
        return compare(taken.value, ref, self.w.check, dtype, self.shape, inputs)


@dataclass
class TimedCalls:
    """call(k): one implementation's forward call on input set k, through the shifting pool; with
    an `oracle`, the block ends (`begin`, `end`) sample and check its timed calls."""

    impl: str
    run: Run
    sets: Sequence[Shifted]
    outs: Sequence[Outputs]
    oracle: Oracle | None = None
    poison: bool = False
    """Each block's output windows NaN-poisoned as it starts (this implementation's own)."""
    count: int = 0
    """Calls on this shape so far, warm-up and settling included: what a failure's 'call N' says."""
    config: str = ""
    candidate: bool = False
    """A candidate's calls: the timer and the checks are held intact at each of its block ends."""
    check_s: float = 0.0
    checked: int = 0
    turns: list[int] = field(default_factory=list)
    picks: frozenset[int] = frozenset()
    in_block: int = -1
    """The block's calls so far; -1 outside a timed block."""
    pending: int = 0
    kept: list[Taken] = field(default_factory=list)
    kept_pools: set[int] = field(default_factory=set)
    """The output pools (by id) whose keep slot holds a sample this block."""
    latest: dict[int, Taken] = field(default_factory=dict)
    """Where nothing can be kept: each set's last call in the block."""
    last: Taken | None = None

    def __post_init__(self) -> None:
        self.turns = [0] * len(self.sets)
        self.written = {id(outs): 0 for outs in self.outs}
        """Per output pool (one for every set, or one per set), the calls that wrote it: the next
        call's window."""
        self.fresh_from = [0] * len(self.sets)
        """Per set, this implementation's call count when the set's values last changed."""
        self.generation = [shifted.generation for shifted in self.sets]
        """Per set, the values' generation this implementation last saw: its calls before the
        first block (the settling ones) read the first values, and count."""
        self.keepable = all(outs.keepable for outs in self.outs)

    def __call__(self, k: int) -> object:
        turn = self.turns[k]
        self.turns[k] = turn + 1
        shifted = self.sets[k]
        j = turn % shifted.slots
        self.count += 1
        outs = self.outs[k]
        done = self.written[id(outs)]
        self.written[id(outs)] = done + 1
        window = outs.outs[done % len(outs.outs)]
        if self.in_block < 0:
            return self.run(shifted.inputs[j], window)
        return self._timed(k, j, shifted, outs, window)

    def _timed(self, k: int, j: int, shifted: Shifted, outs: Outputs, window: Any) -> object:
        """A call inside a timed block: a sampled one writes its pool's keep slot (a set whose pool
        is free of one is taken when the drawn call's already holds a sample this block)."""
        if self.in_block in self.picks:
            self.pending += 1
        self.in_block += 1
        if self.pending and self.keepable and id(outs) not in self.kept_pools:
            self.pending -= 1
            value = self.run(shifted.inputs[j], outs.keep)
            self.kept.append(Taken(self.count, k, j, value))
            self.kept_pools.add(id(outs))
            return value
        value = self.run(shifted.inputs[j], window)
        self.last = Taken(self.count, k, j, value)
        if not self.keepable:
            self.latest[k] = self.last
        return value

    def begin(self, calls: int, most: int | None = None) -> None:
        """A timed block of `calls` calls (`most` at the outside, its retries counted) starts: new
        values in each set whose windows this implementation would read a second time since they
        last changed, this implementation's output pools poisoned (once each) where a set's values
        changed, the windows the block can reach made, and (checking) the sampled calls drawn."""
        need = -(-(most or calls) // max(1, len(self.sets)))
        poisoned: set[int] = set()
        for k, shifted in enumerate(self.sets):
            if self.turns[k] - self.fresh_from[k] + need > shifted.slots:
                shifted.refresh()
            if shifted.generation != self.generation[k]:  # new values, by this block or another's
                self.generation[k], self.fresh_from[k] = shifted.generation, self.turns[k]
                if self.poison and id(self.outs[k]) not in poisoned:
                    self.outs[k].poison()
                    poisoned.add(id(self.outs[k]))
            for turn in range(self.turns[k], self.turns[k] + min(need, shifted.slots)):
                _ = shifted.inputs[turn % shifted.slots]
        self._make_windows(need)
        if self.oracle is None:
            return
        draw = secrets.SystemRandom()
        self.picks = frozenset(draw.sample(range(calls), min(SAMPLES, calls))) if calls > 0 else frozenset()
        self.in_block, self.pending = 0, 0
        self.kept, self.kept_pools, self.latest, self.last = [], set(), {}, None

    def _make_windows(self, need: int) -> None:
        """The output windows the block can reach, made before it (a view made inside it is host
        time in a timed call): `need` calls per set, all of them in one pool for every set or each
        set's in its own (`output_pools` makes one or the other)."""
        pools = {id(outs): outs for outs in self.outs}
        calls = need * len(self.outs) // len(pools)
        for key, outs in pools.items():
            start, slots = self.written[key], len(outs.outs)
            for n in range(start, start + min(calls, slots)):
                _ = outs.outs[n % slots]

    def end(self) -> None:
        """The timer and the checks held to the probe's snapshot (a candidate that replaced one during
        the block is caught: `BenchCaught`), then the block's sampled calls and its last one checked
        (untimed); `TimedWrong` at the first that fails."""
        if self.candidate:  # a reference's block end would put a candidate's patch back uncaught
            found = guards_identity.breach(guards_identity.taken(), f"during a timed block of {self.config}")
            if found is not None:
                raise BenchCaught(self.config, self.impl, *found)
        if self.oracle is None or self.in_block <= 0:
            self.in_block = -1
            return
        self.in_block = -1
        started = time.perf_counter()
        for taken in self._to_check():
            stats = self.oracle.verdict(taken, self.sets[taken.k].inputs[taken.j])
            self.checked += 1
            if not stats["ok"]:
                self.check_s += time.perf_counter() - started
                raise TimedWrong(self.oracle.config, self.impl, taken.call, failure_words(stats))
        self.kept, self.latest, self.last = [], {}, None
        self.check_s += time.perf_counter() - started

    def _to_check(self) -> list[Taken]:
        """The kept samples and the last call; where nothing could be kept, the last call on each
        of SAMPLES + 1 sets (the last call's among them)."""
        last = [self.last] if self.last is not None else []
        if self.keepable:
            return [*self.kept, *last]
        others = [t for t in self.latest.values() if t is not self.last]
        return [*secrets.SystemRandom().sample(others, min(SAMPLES, len(others))), *last]


def timed_calls(w: Workload, shape: Mapping[str, Any], config: str, runs: Mapping[str, Run],
                sets: list[Any], bufs: list[Any], checked: Collection[str],
                calls_per_block: int, made: int = 0) -> dict[str, TimedCalls]:
    """Each implementation's timed calls on one forward config: the sets in their shifting pools
    (guard "shifting-pool"), each implementation in `checked` writing outputs of its own,
    NaN-poisoned (guard "poisoned-trial-outputs"; the others share one buffer per set), and its
    blocks' calls checked against the oracle (guard "timed-outputs"); `made`: the calls each made
    on the shape before (its warm-up), where a failure's call number goes on from. `sets` and
    `bufs` are left holding the first windows: the tensors they held are the pools' now."""
    slots = slots_for(calls_per_block, len(sets)) if on("shifting-pool") else 1
    shifted = []
    for k in range(len(sets)):  # one set's tensors and its pools at a time in memory
        shifted.append(shift_inputs(sets[k], slots))
        sets[k] = shifted[-1].inputs[0]
    own = on("poisoned-trial-outputs")
    oracle = Oracle(w, shape, config) if on("timed-outputs") and w.oracle is not None else None
    shared: list[Outputs] = []
    found: dict[str, TimedCalls] = {}
    one = not w.output_in_inputs
    for impl, run in runs.items():
        mine = impl in checked
        if mine and own:
            outs = output_pools(bufs, slots, calls_per_block, own=True, one=one)
        else:
            shared = shared or output_pools(bufs, slots, calls_per_block, own=False, one=one)
            outs = shared
        if w.output_in_inputs:  # the answer is written into the inputs' windows: no keep slot holds it
            outs = [replace(o, keepable=False) for o in outs]
        found[impl] = TimedCalls(impl, run, shifted, outs, oracle if mine else None, poison=mine and own,
                                 count=made, config=config, candidate=mine)
    bufs[:] = [o.outs[0] for o in shared] if shared else [None] * len(bufs)
    return found


def output_pools(bufs: Sequence[Any], slots: int, calls_per_block: int, own: bool,
                  one: bool = True) -> list[Outputs]:
    """Per input set, the output pool its calls write: `one` pool for every set, a window for each
    of a block's calls, where a window is the whole output; else each set's own pool (`slots` <= 1,
    the shifting pool off: each set's buffer; an answer written into the inputs)."""
    if one and slots > 1 and len(bufs) > 1 and bufs[0] is not None:
        pool = shift_output(bufs[0], slots_for(calls_per_block, 1), own=own)
        if pool.keepable:
            return [pool] * len(bufs)
    return [shift_output(b, slots, own=own) for b in bufs]
