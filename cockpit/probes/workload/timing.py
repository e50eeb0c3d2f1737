"""Every candidate and timed reference on every bench shape, timed the bench gate's way: in blocks
interleaved by implementation, each block after `settle_ms` untimed (every implementation timed
at its own power-capped clock), CUDA events around the call only, L2 flushed before every call
(outside the events), inputs rotated over several sets; median and p20/p80, TFLOP/s and GB/s
from the workload's counts, and each timed block's span in wall-clock time for the validity
verdict."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from cockpit.analysis.timing_method import MAX_SECONDS, batch_calls, plan_config
from cockpit.probes.batch_timing import (
    TimingCell,
    batch_cells,
    block_plan,
    block_spans,
    device_memory,
    flush_ms,
    per_call_cells,
    set_bytes,
    speedup_intervals,
)
from cockpit.probes.workload.check import KnobsFor, call
from cockpit.probes.workload_load import first_line
from cockpit.workload.spec import Workload

Say = Callable[[str], None]
BenchRow = dict[str, Any]
"""One bench shape's row as the result file holds it: config, shape (its axes at the top level
too), dtype, flops, bytes, impl -> TimingCell, blocks, method, speedup_vs_<impl>[_ci],
launch_bound. Its keys vary with the workload's axes and implementations: open JSON, read by
cockpit/analysis/results/bench.py."""


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


def bench(w: Workload, impls: Mapping[str, Bind], reps: int, warmup: int,
          input_sets: int, say: Say, budget_s: float = 0.5, settle_ms: float = 100.0, rounds: int = 2,
          optional: frozenset[str] = frozenset(), shapes: Sequence[Mapping[str, Any]] | None = None,
          keep_times: bool = False) -> list[BenchRow]:
    """Time every implementation on every bench shape (or `shapes`; see the module docstring). An
    optional reference that raises on a shape is left out of that shape, said in the log; a
    candidate or a required reference that raises stops the bench. `keep_times`: each cell keeps
    its per-call times (the tuner's intervals)."""
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")  # > any L2 (50 MB H100)
    flush_cost = flush_ms(flush)
    l2_bytes, free_bytes = device_memory()
    rows = []
    grid = list(w.bench_grid if shapes is None else shapes)
    for index, shape in enumerate(grid):
        name = w.shape_name(shape)
        sets = [w.make_inputs(2000 + 10 * index + i, **shape) for i in range(input_sets)]
        bufs = [w.make_output(*s, **shape) if w.make_output is not None else None for s in sets]
        runnable: dict[str, Run] = {}
        estimate_ms: dict[str, float] = {}
        for impl, bind in impls.items():
            fn = bind(shape)
            try:
                for i in range(warmup):
                    fn(sets[i % input_sets], bufs[i % input_sets])
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(sets[0], bufs[0])
                end.record()
                end.synchronize()
                estimate_ms[impl] = start.elapsed_time(end)
                runnable[impl] = fn
            except Exception as exc:  # a backend or compile path that does not take this shape
                if impl not in optional:
                    raise RuntimeError(f"{impl} failed on {name}: {first_line(exc)}") from exc
                say(f"  {impl}: not available for {name} ({first_line(exc)[:100]})")
        anchor = torch.cuda.Event(enable_timing=True)
        anchor.record()
        anchor.synchronize()
        anchor_t = time.time()
        plan = plan_config(min(estimate_ms.values(), default=1.0), l2_bytes,
                           set_bytes(sets[0]) + set_bytes(bufs[0]), free_bytes)
        if plan.method == "batch":  # short calls: batches between two events, inputs rotated past L2
            for i in range(len(sets), plan.input_sets):
                sets.append(w.make_inputs(2000 + 10 * index + i, **shape))
                bufs.append(w.make_output(*sets[-1], **shape) if w.make_output is not None else None)
            calls = {impl: (lambda k, fn=fn, ins=sets, outs=bufs: fn(ins[k], outs[k]))
                     for impl, fn in runnable.items()}
            per = {impl: batch_calls(ms) for impl, ms in estimate_ms.items()}
            cells, batched = batch_cells(calls, estimate_ms, per, len(sets), settle_ms, index,
                                         max_s=min(MAX_SECONDS, 4 * budget_s), keep_times=keep_times)
            rows.append(_row(w, shape, name, cells, anchor, anchor_t, batched, plan.why, plan.l2_note))
            say(f"[{index + 1}/{len(grid)}] {_line(rows[-1])}")
            del sets, bufs, calls
            continue
        n = max(reps, min(1000, int(budget_s * 1000 / max(sum(estimate_ms.values()), 1e-3))))
        call_ms = {impl: ms + flush_cost for impl, ms in estimate_ms.items()}
        events: dict[str, list[tuple[Any, Any]]] = {impl: [] for impl in runnable}
        spans: list[tuple[str, Any, Any, int]] = []
        rep = 0
        for impl, settle, timed in block_plan(call_ms, n, rounds, settle_ms, index):
            fn = runnable[impl]
            first = len(events[impl])
            for i in range(settle + timed):
                k = rep % input_sets
                rep += 1
                flush.zero_()  # outside the events: every call starts with a cold L2
                if i < settle:
                    fn(sets[k], bufs[k])
                    continue
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(sets[k], bufs[k])
                end.record()
                events[impl].append((start, end))
            spans.append((impl, events[impl][first][0], events[impl][-1][1], timed))
        torch.cuda.synchronize()
        rows.append(_row(w, shape, name, per_call_cells(events, keep_times), anchor, anchor_t, spans,
                         plan.why, plan.l2_note))
        say(f"[{index + 1}/{len(grid)}] {_line(rows[-1])}")
        del sets, bufs
    return rows


def _row(w: Workload, shape: Mapping[str, Any], name: str, cells: Mapping[str, TimingCell],
         anchor: Any, anchor_t: float, spans: Sequence[tuple[str, Any, Any, int]], method: str = "",
         l2_note: str | None = None) -> BenchRow:
    flops = float(w.flops(**shape)) if w.flops else None
    nbytes = float(w.bytes(**shape)) if w.bytes else None
    dtype = shape.get(w.dtype_key) if w.dtype_key else None
    row: BenchRow = {"config": name, "shape": dict(shape), **dict(shape), "dtype": dtype,
                           "flops": flops, "bytes": nbytes, "impl": {},
                           "blocks": block_spans(anchor, anchor_t, spans), "method": method}
    if l2_note:
        row["l2_note"] = l2_note
    for impl, cell in cells.items():
        median = cell["median_ms"]
        row["impl"][impl] = {**cell, "tflops": flops / (median * 1e-3) / 1e12 if flops else None,
                             "gbps": nbytes / (median * 1e-3) / 1e9 if nbytes else None}
    ours = row["impl"].get("ours")
    for impl, cell in row["impl"].items():
        if ours and impl != "ours":
            row[f"speedup_vs_{impl}"] = cell["median_ms"] / ours["median_ms"]
    speedup_intervals(row)
    return row


def _line(row: Mapping[str, Any]) -> str:
    def cell(impl: str, r: Mapping[str, Any]) -> str:
        rate = (f" ({r['tflops']:.0f} TF/s)" if r.get("tflops") else
                f" ({r['gbps']:.0f} GB/s)" if r.get("gbps") else "")
        return f"{impl} {r['median_ms']:.3f} ms{rate}"
    cells = "  ".join(cell(impl, r) for impl, r in row["impl"].items())
    return f"{row['config']:<36} {cells}"
