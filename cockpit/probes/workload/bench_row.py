"""One bench row from an implementation's timed cells on one shape in one mode: the shape's axes,
the workload's counts (FLOPs, bytes; the backward's in backward modes, both in full), each cell
with the rates its median makes, the speedups of ours against every other implementation with
their intervals, and the blocks' spans; and the row's line in the bench's log."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from cockpit.probes.timing_pieces import Span, block_spans, speedup_intervals
from cockpit.workload.result_wire import BenchRowJson, TimingCell
from cockpit.workload.spec import Workload


def bench_row(w: Workload, shape: Mapping[str, Any], name: str, cells: Mapping[str, TimingCell],
         anchor: Any, anchor_t: float, spans: Sequence[Span], method: str = "",
         l2_note: str | None = None, mode: str = "forward") -> BenchRowJson:
    flops, nbytes = _counts(w, shape, mode)
    dtype = shape.get(w.dtype_key) if w.dtype_key else None
    # open JSON while it is built: the shape's axes and the speedups are keys of their own
    row: dict[str, Any] = {"config": name, "shape": dict(shape), **dict(shape), "dtype": dtype,
                           "flops": flops, "bytes": nbytes, "impl": {},
                           "blocks": block_spans(anchor, anchor_t, spans), "method": method}
    if l2_note:
        row["l2_note"] = l2_note
    for impl, cell in cells.items():
        row["impl"][impl] = _with_rates(cell, flops, nbytes)
    ours = row["impl"].get("ours")
    for impl, cell in row["impl"].items():
        if ours and impl != "ours" and ours["median_ms"] > 0:
            row[f"speedup_vs_{impl}"] = cell["median_ms"] / ours["median_ms"]
    speedup_intervals(row)
    return cast(BenchRowJson, row)


def _with_rates(cell: TimingCell, flops: float | None, nbytes: float | None) -> TimingCell:
    """The cell with the rates its median makes (TFLOP/s, GB/s), where the counts are declared."""
    median = cell["median_ms"]
    timed = median > 0  # a call that put no work on the GPU reads 0: no rate (the gate refuses it)
    return {**cell, "tflops": flops / (median * 1e-3) / 1e12 if flops and timed else None,
            "gbps": nbytes / (median * 1e-3) / 1e9 if nbytes and timed else None}


def _counts(w: Workload, shape: Mapping[str, Any], mode: str) -> tuple[float | None, float | None]:
    """(FLOPs, bytes) of one call in a mode: the workload's counts for the forward, its backward
    counts for the backward, both for full (None where one is not declared: no rate is made up)."""
    fwd = (float(w.flops(**shape)) if w.flops else None, float(w.bytes(**shape)) if w.bytes else None)
    bwd = (float(w.backward_flops(**shape)) if w.backward_flops else None,
           float(w.backward_bytes(**shape)) if w.backward_bytes else None)
    if mode == "forward":
        return fwd
    if mode == "backward":
        return bwd
    return _both_counted(fwd[0], bwd[0]), _both_counted(fwd[1], bwd[1])


def _both_counted(forward: float | None, backward: float | None) -> float | None:
    """A full pass's count: the forward's and the backward's, or None when either is not declared."""
    return forward + backward if forward is not None and backward is not None else None


def row_line(row: Mapping[str, Any]) -> str:
    def cell(impl: str, r: Mapping[str, Any]) -> str:
        rate = (f" ({r['tflops']:.0f} TF/s)" if r.get("tflops") else
                f" ({r['gbps']:.0f} GB/s)" if r.get("gbps") else "")
        eager = f", eager {r['eager_ms']:.3f}" if r.get("host_bound") else ""
        again = f", {r['remeasured']} blocks again" if r.get("remeasured") else ""
        return f"{impl} {r['median_ms']:.3f} ms{rate}{eager}{again}"
    cells = "  ".join(cell(impl, r) for impl, r in row["impl"].items())
    checks = (f"  ({row['checked']} timed outputs checked in {row['check_s']:.2f} s)"
              if row.get("checked") else "")
    return f"{row['config']:<36} {cells}{checks}"
