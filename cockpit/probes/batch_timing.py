"""Timing a config whose calls are short (under `LAUNCH_BOUND_MS`): in batches of back-to-back
calls between two CUDA events, no L2 flush inside a batch, the inputs rotated over enough sets that
every call reads data L2 no longer holds (analysis/timing_method.py decides the method, the batch
size and the sets; this module runs it).

Device time: every timed batch is queued while the GPU is busy with earlier work or a spin
(probes/device_hold.py's `Cover`), so its calls run back to back whatever the host's launch cost;
a batch the GPU reached before the host had queued it is kept out (the next spin is longer). The
calls per batch are planned again from the first device times (a warm call's first estimate holds
its launch cost, so short kernels' batches came out a few µs long and noisy). The eager time per
call, what a model without graphs pays, is one unheld batch per turn, its own number.

Every implementation is timed in the same rounds, its order alternating round by round, each turn
after `settle_ms` of untimed calls (its own power-capped clock). Each turn is a block: once the
watch has seen past it, it is judged (probes/block_watch.py); a dirty one is dropped, the card
given a recovery wait and the implementation timed again. Rounds go on until every
implementation's clean samples are quiet (relative spread ≤ 0.5 %, nvbench's stdrel) or the time
cap is reached with its last block clean.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch

from cockpit.analysis.timing_method import MAX_CALLS_PER_BATCH, MAX_SECONDS, batch_calls, enough
from cockpit.probes.block_watch import BlockJudge, CellBlocks
from cockpit.probes.device_hold import Cover, Hold, next_hold_ms, working_spin
from cockpit.probes.timing_pieces import NO_ENDS, BlockEnds, Span, net_ms, settle_calls, timed_cell
from cockpit.workload.result_wire import TimingCell

Call = Callable[[int], object]
"""call(k): one call of an implementation on input set k."""
BATCHES_PER_TURN = 8
"""Two turns give the 10 samples the stop rule asks for before it looks at the noise (so every
implementation is timed in both orders); a batch is ~1 ms of GPU time against the turn's 100 ms of
settling, so more batches a turn pin a median for little wall time."""
HELD_CALLS = 256
"""At most this many calls queue behind one spin: CUDA's launch queue holds about a thousand
launches and a call may launch several kernels; a batch that overflows it makes the host wait, the
spin runs out, and after three such the batch is halved."""
HOST_PROBE_CALLS = 256
"""Calls whose enqueue is timed on an idle GPU: fewer than CUDA's launch queue holds (~1,000), so
the host never waits for room and its time is the launch cost alone."""


class _Batch(NamedTuple):
    start: Any
    end: Any
    calls: int
    covered: bool
    """The spin was still running when the host had queued the batch: device time."""
    clean: bool = True
    """Its block was judged clean (or not yet judged)."""

    def ms_per_call(self, event_ms: float) -> float:
        """Device time per call, the events' own cost taken out."""
        return net_ms(self.start, self.end, event_ms) / self.calls


@dataclass
class _BatchedImpl:
    """One implementation's batches on one config, its spin and its blocks' record."""

    per: int
    cover: Cover
    batches: list[_Batch] = field(default_factory=list)
    eager: list[float] = field(default_factory=list)
    blocks: CellBlocks = field(default_factory=CellBlocks)
    halved: bool = False
    last_clean: bool | None = None
    event_ms: float = 0.0

    def replan(self, most: int) -> None:
        """Calls per batch from the device time measured so far (never back up after a halving)."""
        times = self.samples()
        if times and not self.halved:
            self.per = max(self.per, min(most, batch_calls(sorted(times)[len(times) // 2])))

    def samples(self) -> list[float]:
        return [b.ms_per_call(self.event_ms) for b in self.batches if b.covered and b.clean]


@dataclass
class _Turn:
    """One implementation's turn in a round: its batches [first, first + count) and their span."""

    name: str
    first: int
    count: int
    start: Any
    end: Any
    calls: int
    t0: float = 0.0
    t1: float = 0.0


def batch_cells(calls: Mapping[str, Call], call_ms: Mapping[str, float], calls_per_batch: Mapping[str, int],
                sets: int, settle_ms: float, config_index: int, max_s: float = MAX_SECONDS,
                keep_times: bool = False, hold: Hold | None = None, judge: BlockJudge | None = None,
                anchor: Any = None, anchor_t: float = 0.0, event_ms: float = 0.0,
                extra_s: float = 0.0, ends: Mapping[str, BlockEnds] | None = None
                ) -> tuple[dict[str, TimingCell], list[Span]]:
    """Each implementation's cell (median device time per call, its interval, the samples, why it
    stopped, the host's enqueue time, the eager time, the blocks re-measured) and the clean timed
    spans for the validity verdict. `event_ms`: the events' own cost, taken out of each batch;
    `extra_s`: time past `max_s` for an implementation whose median is still wider than ±1 %.
    `keep_times`: each cell keeps its samples (`times_ms`, one per batch: the tuner bootstraps its
    intervals from them). `ends`: what runs at each implementation's turn's ends, untimed."""
    names = list(calls)
    judge = judge or BlockJudge(None)
    spin = working_spin(hold)
    host_ms = _host_times(calls, calls_per_batch, sets)
    most = HELD_CALLS if spin else MAX_CALLS_PER_BATCH
    state = _first_plans(calls_per_batch, most, host_ms, spin, event_ms)
    pending: list[_Turn] = []
    kept: list[_Turn] = []
    rep = 0
    started = time.perf_counter()
    done: dict[str, str] = {}
    round_no = 0
    while len(done) < len(names) or pending:
        if len(done) == len(names):  # every one converged: the last turns still to be judged
            judge.wait_past(max(t.t1 for t in pending))
            _judge(pending, kept, state, judge, done, final=True)
            continue
        for name in _round_order(names, config_index + round_no, done):
            turn, rep = _timed_turn(name, calls[name], state[name], rep, sets,
                                    settle_calls(settle_ms, call_ms[name]), spin is not None,
                                    (ends or {}).get(name, NO_ENDS))
            pending.append(turn)
        torch.cuda.synchronize()
        round_no += 1
        if anchor is not None:
            _place_turns(pending, anchor, anchor_t)
        _judge(pending, kept, state, judge, done, final=anchor is None)
        _replan(state, most)
        _stop_quiet(state, done, time.perf_counter() - started, max_s, extra_s)
    spans = [(t.name, t.start, t.end, t.calls) for t in kept]
    return _cells(state, done, host_ms, spin is not None, keep_times), spans


def _cells(state: Mapping[str, _BatchedImpl], done: Mapping[str, str], host_ms: Mapping[str, float],
           held: bool, keep_times: bool) -> dict[str, TimingCell]:
    """Each implementation's cell, with its samples when the caller keeps them (the tuner's bootstrap)."""
    cells = {n: _cell(st, done[n], host_ms[n], held) for n, st in state.items()}
    if keep_times:
        for n, st in state.items():
            cells[n]["times_ms"] = st.samples()
    return cells


def _round_order(names: list[str], parity: int, done: Mapping[str, str]) -> list[str]:
    """The implementations still timing, in the order this round runs them: reversed every other
    round, so each is timed both first and after the others."""
    order = names if parity % 2 == 0 else names[::-1]
    return [n for n in order if n not in done]


def _first_plans(calls_per_batch: Mapping[str, int], most: int, host_ms: Mapping[str, float],
                 spin: Hold | None, event_ms: float) -> dict[str, _BatchedImpl]:
    """Every implementation's first plan, in the order the caller named them."""
    return {n: _first_plan(calls_per_batch[n], most, host_ms[n], spin, event_ms) for n in host_ms}


def _replan(state: Mapping[str, _BatchedImpl], most: int) -> None:
    """Every implementation's calls per batch planned again from its device times so far."""
    for st in state.values():
        st.replan(most)


def _first_plan(calls_per_batch: int, most: int, host_ms: float, spin: Hold | None,
                event_ms: float) -> _BatchedImpl:
    """An implementation before its first turn: the planned calls per batch (at most what one spin
    can cover) and a spin long enough for the host to queue a batch of them."""
    per = min(calls_per_batch, most)
    return _BatchedImpl(per, Cover(spin, next_hold_ms(host_ms * per, False, 0.0)), event_ms=event_ms)


def _timed_turn(name: str, call: Call, st: _BatchedImpl, rep: int, sets: int, settle: int,
                held: bool, ends: BlockEnds) -> tuple[_Turn, int]:
    """One implementation's turn: `settle` untimed calls, then its timed batches, each queued
    behind the one before, `ends` run before and after them; with a spin, one eager batch after
    (it must not queue behind the spin)."""
    for _ in range(settle):
        call(rep % sets)
        rep += 1
    ends.begin(BATCHES_PER_TURN * st.per)
    busy = torch.cuda.Event()
    busy.record()  # the settle calls still running: the first batch queues behind them
    first = len(st.batches)
    for _ in range(BATCHES_PER_TURN):
        rep = _held_batch(call, st, rep, sets, busy)
        busy = st.batches[-1].end
    turn = _Turn(name, first, BATCHES_PER_TURN, st.batches[first].start, st.batches[-1].end,
                 sum(b.calls for b in st.batches[first:]))
    ends.end()
    if held:
        torch.cuda.synchronize()
        rep = _eager_batch(call, st, rep, sets)
    return turn, rep


def _place_turns(pending: list[_Turn], anchor: Any, anchor_t: float) -> None:
    """Each pending turn's span on the watch's clock, from its events' distance to the anchor event."""
    for turn in pending:
        turn.t0 = anchor_t + anchor.elapsed_time(turn.start) / 1e3
        turn.t1 = anchor_t + anchor.elapsed_time(turn.end) / 1e3


def _stop_quiet(state: Mapping[str, _BatchedImpl], done: dict[str, str], elapsed: float, max_s: float,
                extra_s: float) -> None:
    """Mark done each implementation whose last block was clean and whose samples are quiet enough
    (or whose time is up: none covered by the cap is said in the cell)."""
    for name, st in state.items():
        if name in done or st.last_clean is False:
            continue
        stop, why = enough(st.samples(), elapsed, max_s=max_s, extra_s=extra_s)
        if stop and (st.samples() or elapsed >= max_s):
            done[name] = why


def _held_batch(call: Call, st: _BatchedImpl, rep: int, sets: int, busy: Any) -> int:
    """One timed batch, queued while the GPU is busy with `busy`'s work or a spin; a batch the GPU
    reached before it was queued is kept out, and after every third such the batch is halved (a
    queue too short for it makes the host wait for room)."""
    st.cover.before(busy)
    start, end, rep = _launch(call, st.per, rep, sets)
    covered = st.cover.after()
    st.batches.append(_Batch(start, end, st.per, covered))
    if not covered and st.cover.expired % 3 == 0 and st.per > 8:
        st.per //= 2
        st.halved = True
    return rep


def _launch(call: Call, calls: int, rep: int, sets: int) -> tuple[Any, Any, int]:
    """`calls` back-to-back calls between two timing events, rotating over the input sets."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        call(rep % sets)
        rep += 1
    end.record()
    return start, end, rep


def _eager_batch(call: Call, st: _BatchedImpl, rep: int, sets: int) -> int:
    """One batch as eager use runs it: launched straight onto an idle GPU, the host's cost in it."""
    start, end, rep = _launch(call, st.per, rep, sets)
    end.synchronize()
    st.eager.append(net_ms(start, end, st.event_ms) / st.per)
    return rep


def _judge(pending: list[_Turn], kept: list[_Turn], state: Mapping[str, _BatchedImpl], judge: BlockJudge,
           done: dict[str, str], final: bool) -> None:
    """Judge the turns the watch has seen past (all of them when `final`): a clean one is kept; a
    dirty one's batches are dropped, the card given its recovery wait and the implementation timed
    again, until the config's budget is spent (then it stays unclean, and says so)."""
    dirty = False
    for turn in list(pending):
        if not final and not judge.seen_after(turn.t1):
            continue
        pending.remove(turn)
        st = state[turn.name]
        word = judge.fault(turn.t0, turn.t1) if turn.t1 else None
        if word is None:
            kept.append(turn)
            st.last_clean = True
            continue
        dirty = True
        st.blocks.drop(word)
        for i in range(turn.first, turn.first + turn.count):
            st.batches[i] = st.batches[i]._replace(clean=False)
        if judge.spent():
            judge.give_up(st.blocks)
            st.last_clean = True  # given up: its clean batches stand, the cell says it is unclean
            done.setdefault(turn.name, f"re-measure budget spent ({st.blocks.unclean})")
        else:
            st.last_clean = False
            done.pop(turn.name, None)
    if dirty and not judge.spent():
        judge.recover()


def _host_times(calls: Mapping[str, Call], calls_per_batch: Mapping[str, int], sets: int) -> dict[str, float]:
    """Each implementation's enqueue time per call, from at most HOST_PROBE_CALLS calls on an idle GPU."""
    return {n: _host_ms(call, min(HOST_PROBE_CALLS, calls_per_batch[n]), sets) for n, call in calls.items()}


def _host_ms(call: Call, n: int, sets: int) -> float:
    """The host's time to enqueue one call, measured with the GPU idle and the queue empty (in a
    timed round the queue is full and every enqueue waits for the GPU)."""
    torch.cuda.synchronize()
    host = time.perf_counter()
    for k in range(n):
        call(k % sets)
    host = time.perf_counter() - host
    torch.cuda.synchronize()
    return host * 1e3 / n


def _cell(st: _BatchedImpl, why: str, host_ms: float, held: bool) -> TimingCell:
    """The cell from the clean, covered batches; when the budget ran out before one was clean, from
    the covered ones all the same, the cell marked unclean (the verdict names it); when the spin
    covered none by the time cap, from the uncovered ones, `held` false (host gaps may be in them)."""
    samples = st.samples() or [b.ms_per_call(st.event_ms) for b in st.batches if b.covered]
    if not samples:
        samples, held = [b.ms_per_call(st.event_ms) for b in st.batches], False
    return timed_cell(samples, "batch", st.eager, held,
                      {"calls_per_batch": st.per, "stop": why, "host_ms_per_call": host_ms,
                       "expired_holds": st.cover.expired, "event_ms": st.event_ms, **st.blocks.fields()})
