"""Every candidate and timed reference on every bench shape, timed the bench gate's way: device
time per call (the timed launches queued behind a spin), in blocks interleaved by implementation,
each block after `settle_ms` untimed (every implementation at its own power-capped clock), each
block judged against the clocks it ran at and timed again when the card slowed it; short calls in
batches over rotated inputs (probes/batch_timing.py), the rest one by one with L2 flushed before
each (probes/call_timing.py). Median and interval, the eager time per call, TFLOP/s and GB/s from
the workload's counts, and each clean block's span for the validity verdict.

A candidate or required reference that raises (an illegal memory access, a card off the bus) ends
the bench with `BenchCrash`, naming the config and the implementation and carrying every row
measured before it.

Modes (the workload's `modes`, Liger's harness's): "forward" times the call as above; "backward"
times the backward alone; "full" times forward + backward. Each is a row of its own, named
"<shape> backward" / "<shape> full" and carrying its `mode`; a forward row keeps the shape's own
name (and no `mode` key in a forward-only workload's result: it reads as before). In backward
modes every implementation is called without an output buffer, on input sets whose gradient-taking
inputs are leaves that require grad, shared by the implementations.

In forward mode the timed calls run through the shifting pool, each candidate writing outputs of
its own, and a sample of a candidate's timed calls is checked against the oracle after each block
(probes/workload/timed_check.py): a wrong one ends the bench (`TimedWrong`, the rows before it
kept); each forward row says what its checks took (`check_s`, `checked`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import torch

from cockpit.analysis.timing_method import (
    EXTRA_SECONDS,
    MAX_CALLS_PER_BATCH,
    MAX_SECONDS,
    batch_calls,
    plan_config,
)
from cockpit.probes.batch_timing import BATCHES_PER_TURN, HELD_CALLS, batch_cells
from cockpit.probes.block_watch import BlockJudge
from cockpit.probes.call_timing import COVER_TRIES, EXTRA_BLOCK_MS, GROUP_CALLS, per_call_cells
from cockpit.probes.device_hold import Hold
from cockpit.probes.timing_pieces import (
    Span,
    device_memory,
    event_cost_ms,
    flush_ms,
    set_bytes,
)
from cockpit.probes.workload import grads as g
from cockpit.probes.workload.bench_row import bench_row, row_line
from cockpit.probes.workload.caught import BenchCaught
from cockpit.probes.workload.check import KnobsFor, call
from cockpit.probes.workload.escapes import audit_candidates, with_records
from cockpit.probes.workload.timed_check import TimedCalls, timed_calls
from cockpit.probes.workload_load import first_line
from cockpit.workload.result_wire import BenchRowJson, CrashJson
from cockpit.workload.spec import Workload

Say = Callable[[str], None]


def impl_id(name: str) -> str:
    """How results key an implementation: its name in lower case ("Triton" -> "triton")."""
    return name.lower()


Run = Callable[[Sequence[Any], Any], Any]
"""run(inputs, out): one call of an implementation."""
Bind = Callable[[Mapping[str, Any]], Run]
"""shape -> that shape's call (a candidate's kwarg knobs differ per shape when kept per a key)."""


def implementations(w: Workload, knobs: KnobsFor) -> dict[str, Bind]:
    """id -> the call per shape: the first candidate as "ours", the other candidates and every timed
    reference by their ids."""
    out: dict[str, Bind] = {}
    for index, (name, fn) in enumerate(w.candidates.items()):
        out["ours" if index == 0 else impl_id(name)] = candidate(fn, knobs)
    for ref in w.references:
        if not ref.oracle:
            out[impl_id(ref.name)] = _reference(ref.fn)
    return out


def candidate(fn: Callable[..., Any], knobs: KnobsFor) -> Bind:
    def bind(shape: Mapping[str, Any]) -> Run:
        values = dict(knobs(shape))
        return lambda inputs, buf: call(fn, inputs, buf, values)
    return bind


def _reference(fn: Callable[..., Any]) -> Bind:
    return lambda shape: lambda inputs, buf: fn(*inputs)


class BenchCrash(RuntimeError):
    """An implementation raised at one config: where, the error's first line, and the rows before."""

    def __init__(self, config: str, impl: str, error: str, rows: list[BenchRowJson]) -> None:
        super().__init__(f"{impl} crashed at {config}: {error}")
        self.config, self.impl, self.error, self.rows = config, impl, error, rows

    def as_json(self) -> CrashJson:
        return {"config": self.config, "impl": self.impl, "error": self.error}


class _Running:
    """Which implementation is running, so an error raised later (CUDA reports asynchronously, at
    the next synchronisation) is still put on the implementation that last ran."""

    def __init__(self) -> None:
        self.impl = "?"

    def wrap(self, impl: str, fn: Callable[[int], object]) -> Callable[[int], object]:
        def run(k: int) -> object:
            self.impl = impl
            return fn(k)
        return run


def bench(w: Workload, impls: Mapping[str, Bind], reps: int, warmup: int,
          input_sets: int, say: Say, budget_s: float = 0.5, settle_ms: float = 100.0, rounds: int = 2,
          optional: frozenset[str] = frozenset(), shapes: Sequence[Mapping[str, Any]] | None = None,
          keep_times: bool = False, judge: BlockJudge | None = None,
          modes: Sequence[str] = ("forward",), checked: Collection[str] | None = None) -> list[BenchRowJson]:
    """Time every implementation on every bench shape (or `shapes`) in each of `modes` (see the
    module docstring). An optional reference that raises on a shape is left out of that shape,
    said in the log; a candidate or a required reference that raises ends the bench
    (`BenchCrash`), and so does a candidate's timed output that fails the check (`TimedWrong`).
    `judge`: the blocks' check against the watch (none: every block taken as clean).
    `keep_times`: each cell keeps its per-call times (the tuner's intervals). `checked`: the
    implementations whose timed outputs are checked (None: the workload's candidates)."""
    flush = flush_buffer()
    flush_cost = flush_ms(flush)
    l2_bytes, free_bytes = device_memory()
    hold = Hold()
    if not hold.works:
        say("  this torch has no spin kernel (torch.cuda._sleep): times include the host's launch cost")
    judge = judge or BlockJudge(None)
    rows: list[BenchRowJson] = []
    grid = list(w.bench_grid if shapes is None else shapes)
    running = _Running()
    several = tuple(modes) != ("forward",)
    total = len(grid) * len(modes)
    candidates = candidate_ids(w) if checked is None else frozenset(checked)
    for index, shape in enumerate(grid):
        for mode in modes:
            name = w.mode_name(shape, mode)
            judge.new_config()
            try:
                row = _config(w, impls, shape, name, index, warmup, input_sets, say, optional, running,
                              reps=reps, budget_s=budget_s, settle_ms=settle_ms, rounds=rounds, flush=flush,
                              flush_cost=flush_cost, memory=(l2_bytes, free_bytes), hold=hold, judge=judge,
                              keep_times=keep_times, mode=mode, checked=candidates)
            except (BenchCrash, BenchCaught) as stop:  # a timed output wrong, work the timer did not see
                stop.rows = rows
                raise
            except g.NoGrad:
                raise  # the workload's declaration, not a crash: the probe says it in one line
            except Exception as exc:  # raised while timing: the implementation that last ran
                raise BenchCrash(name, running.impl, first_line(exc), rows) from exc
            if several:
                row["mode"] = mode
            rows.append(row)
            say(f"[{len(rows)}/{total}] {row_line(row)}")
    return rows


def candidate_ids(w: Workload) -> frozenset[str]:
    """The workload's candidates as `implementations` keys them: the first "ours"."""
    return frozenset("ours" if i == 0 else impl_id(name) for i, name in enumerate(w.candidates))


def flush_buffer() -> Any:
    """What the L2 is flushed with: 256 MB zeroed, more than any L2 (50 MB on an H100)."""
    return torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")


def _config(w: Workload, impls: Mapping[str, Bind], shape: Mapping[str, Any], name: str, index: int,
            warmup: int, input_sets: int, say: Say, optional: frozenset[str], running: _Running,
            **how: Any) -> BenchRowJson:
    """One shape in one mode: each implementation warmed up and its call estimated, the method
    planned, then timed."""
    mode = how["mode"]
    sets = [_input_set(w, 2000 + 10 * index + i, shape, mode) for i in range(input_sets)]
    bufs = [_buffer(w, s, shape, mode) for s in sets]
    runs: dict[str, Callable[[int], object]] = {}
    passes: list[Pass] = []
    estimate_ms: dict[str, float] = {}
    for impl, bind in impls.items():
        fn = Pass(w, bind(shape), mode, sets, bufs)
        try:
            for i in range(warmup):
                fn(i % input_sets)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(0)
            end.record()
            end.synchronize()
        except g.NoGrad as exc:
            if impl not in optional:
                raise BenchCrash(name, impl, first_line(exc), []) from exc
            say(f"  {impl}: no {mode} pass for {name} ({first_line(exc)[:100]})")
            continue
        except Exception as exc:  # a backend or compile path that does not take this shape
            if impl not in optional:
                raise BenchCrash(name, impl, first_line(exc), []) from exc
            say(f"  {impl}: not available for {name} ({first_line(exc)[:100]})")
            continue
        estimate_ms[impl] = start.elapsed_time(end)
        runs[impl] = running.wrap(impl, fn)
        passes.append(fn)
    records = audit_candidates(runs, how["checked"], name, len(sets), how["hold"], say, mode)
    event_ms = event_cost_ms(how["hold"] if how["hold"].works else None)
    anchor = torch.cuda.Event(enable_timing=True)
    anchor.record()
    anchor.synchronize()
    anchor_t = time.time()
    l2_bytes, free_bytes = how["memory"]
    # What a set's calls read comes back cold only after 2x L2 of other sets' reads: the outputs are
    # one pool a window a call (probes/workload/timed_check.py), not rotated with the sets.
    read = set_bytes(sets[0]) + sum(p.kept_bytes(0) for p in passes)
    plan = plan_config(min(estimate_ms.values(), default=1.0), l2_bytes, max(1, read), free_bytes,
                       held_per_set=read + set_bytes(bufs[0]))
    extra_s = min(EXTRA_SECONDS, 3 * how["budget_s"])
    spans: list[Span]
    timed: dict[str, TimedCalls] = {}
    if plan.method == "batch":  # short calls: batches between two events, inputs rotated past L2
        for i in range(len(sets), plan.input_sets):
            sets.append(_input_set(w, 2000 + 10 * index + i, shape, mode))
            bufs.append(_buffer(w, sets[-1], shape, mode))
        for p in passes:
            p.prime_all()  # the backward's forwards of the new sets, untimed, before any timing
        most = HELD_CALLS if how["hold"].works else MAX_CALLS_PER_BATCH  # a batch's calls at most
        timed = _shifted(w, shape, name, runs, passes, sets, bufs, how, (BATCHES_PER_TURN * most, warmup + 1),
                         running)
        per = {impl: batch_calls(ms) for impl, ms in estimate_ms.items()}
        cells, spans = batch_cells(runs, estimate_ms, per, len(sets), how["settle_ms"], index,
                                   max_s=min(MAX_SECONDS, 4 * how["budget_s"]), keep_times=how["keep_times"],
                                   hold=how["hold"], judge=how["judge"], anchor=anchor, anchor_t=anchor_t,
                                   event_ms=event_ms, extra_s=extra_s, ends=timed)
    else:
        n = max(how["reps"], min(1000, int(how["budget_s"] * 1000 / max(sum(estimate_ms.values()), 1e-3))))
        call_ms = {impl: ms + how["flush_cost"] for impl, ms in estimate_ms.items()}
        most = (COVER_TRIES + 1) * max(n, int(EXTRA_BLOCK_MS / max(min(call_ms.values()), 1e-3)) + 1)
        timed = _shifted(w, shape, name, runs, passes, sets, bufs, how, (most + GROUP_CALLS, warmup + 1),
                         running)
        cells, spans = per_call_cells(runs, how["flush"], call_ms, n, how["rounds"], how["settle_ms"], index,
                                      input_sets, hold=how["hold"], judge=how["judge"], anchor=anchor,
                                      anchor_t=anchor_t, keep_times=how["keep_times"], event_ms=event_ms,
                                      extra_s=extra_s, ends=timed)
    row = bench_row(w, shape, name, with_records(cells, records), anchor, anchor_t, spans, plan.why,
               plan.l2_note, mode)
    if timed:
        row["check_s"] = sum(t.check_s for t in timed.values())
        row["checked"] = sum(t.checked for t in timed.values())
    return row


def _shifted(w: Workload, shape: Mapping[str, Any], name: str, runs: dict[str, Callable[[int], object]],
             passes: Sequence[Pass], sets: list[Any], bufs: list[Any], how: Mapping[str, Any],
             calls: tuple[int, int], running: _Running) -> dict[str, TimedCalls]:
    """Forward: each run replaced by its timed calls; `calls`: a block's most, and the warm-up's."""
    if how["mode"] != "forward":
        return {}
    timed = timed_calls(w, shape, name, {i: p.fn for i, p in zip(runs, passes, strict=True)}, sets, bufs,
                        how["checked"], *calls)
    runs.update({impl: running.wrap(impl, made) for impl, made in timed.items()})
    return timed


def _input_set(w: Workload, seed: int, shape: Mapping[str, Any], mode: str) -> Any:
    """One input set; in backward modes its gradient-taking inputs are leaves that require grad
    (every implementation's forward on the set shares them)."""
    inputs = w.make_inputs(seed, **shape)
    if mode == "forward":
        return inputs
    return g.grad_leaves(inputs, g.grad_indices(w, inputs))


def _buffer(w: Workload, inputs: Any, shape: Mapping[str, Any], mode: str) -> Any:
    """One input set's output buffer: the forward's alone (backward modes call without one)."""
    return w.make_output(*inputs, **shape) if w.make_output is not None and mode == "forward" else None


class Pass:
    """run(k): one implementation's call in one mode on input set k (the lists grow when the batch
    path rotates more sets).

    forward: the call. full: the gradients cleared to None, the call, its backward seeded with the
    set's gradient. backward: the gradients cleared to None, then the backward of a forward done
    untimed before on that set, its graph kept (retain_graph), as Liger's harness and Triton's
    tutorial time it (`do_bench(lambda: y.backward(dy, retain_graph=True), grad_to_none=[x])`).
    Not a fresh forward before each timed backward: the timed calls queue back to back behind a
    spin or in a batch, so a forward between them would be in the device time (or need events of
    its own around every backward, which a batch of 1,000 short calls cannot afford). Clearing a
    `.grad` is host work only (it drops a reference): no device time, and each backward then writes
    its gradients afresh instead of accumulating into the last call's, as do_bench's grad_to_none."""

    def __init__(self, w: Workload, fn: Run, mode: str, sets: list[Any], bufs: list[Any]) -> None:
        self.w, self.fn, self.mode, self.sets, self.bufs = w, fn, mode, sets, bufs
        self.which: tuple[int, ...] = ()
        self.primed: dict[int, tuple[Any, list[Any]]] = {}
        """Set -> (the forward's result whose graph is kept (backward; None in full), its seeded
        gradient)."""

    def __call__(self, k: int) -> object:
        if self.mode == "forward":
            return self.fn(self.sets[k], self.bufs[k])
        value, seeded = self.primed.get(k) or self._prime(k)
        inputs = self.sets[k]
        g.clear(inputs, self.which)
        if self.mode == "full":
            value = self.fn(inputs, None)
            g.backward(value, seeded)
        else:
            g.backward(value, seeded, retain_graph=True)
        return None

    def _prime(self, k: int) -> tuple[Any, list[Any]]:
        """The forward on set k, untimed: its seeded gradient, and (backward) its graph."""
        inputs = self.sets[k]
        self.which = g.grad_indices(self.w, inputs)
        value = self.fn(inputs, None)
        if not g.outputs(value):
            g.backward(value, [])  # raises NoGrad, said as the implementation's
        seeded = g.seed_grad(self.w, value, k)
        self.primed[k] = (value if self.mode == "backward" else None, seeded)
        return self.primed[k]

    def prime_all(self) -> None:
        if self.mode != "forward":
            for k in range(len(self.sets)):
                if k not in self.primed:
                    self._prime(k)

    def kept_bytes(self, k: int) -> int:
        """About what one set holds for this implementation beyond its inputs: the kept output
        and its seeded gradient, a graph's saved tensors (taken as one more output) and the
        gradients (as large as the inputs)."""
        if self.mode == "forward" or k not in self.primed:
            return 0
        _, seeded = self.primed[k]
        return 3 * set_bytes(seeded) + sum(set_bytes(self.sets[k][i]) for i in self.which)
