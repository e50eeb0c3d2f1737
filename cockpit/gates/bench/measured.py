"""The bench probe's result file (cockpit/workload/result_wire.py's `BenchRowJson` rows and the
window they were timed in), parsed once where the gate reads it into frozen objects that the
validity rules, keep/revert and the verdict work on.

A replaced command's structured result (gates/structured.py) and the tuner's confirmation reply
(tune/finish.py) are read the same way. What the gate cannot judge from (rows that are not a list
of objects naming their config, NVML samples without their time, a timed block without its span)
is one COULD-NOT-RUN line saying to run the gate again, never a traceback; a field that is merely
missing reads as it did before the probe wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import cast

from cockpit.errors import CockpitError
from cockpit.gates.bench.result import SPEEDUP_PREFIX
from cockpit.hardware.peaks import Peak, peak_for, share_of_peak
from cockpit.json_fields import JsonObject, as_number, items, obj, objects, strings, text, whole
from cockpit.telemetry.block_clocks import Block
from cockpit.telemetry.probe_samples import ProbeSample
from cockpit.telemetry.sample import GpuStatic


@dataclass(frozen=True)
class TimedCell:
    """One implementation on one config, as the probe timed it."""

    median_ms: float | None
    tflops: float | None = None
    gbps: float | None = None
    eager_ms: float | None = None
    host_bound: bool = False
    """Its eager time is clearly over its device time (a note, never a reason)."""
    unclean: bool = False
    """Its blocks never got clean within the probe's budget."""
    unclean_why: str = "dirty"
    remeasured: int = 0
    remeasured_why: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class MeasuredRow:
    """One config in one mode: every implementation's cell, ours' speedups, the timed blocks."""

    config: str
    cells: Mapping[str, TimedCell]
    speedups: Mapping[str, float]
    """Implementation id -> ours' speedup over it on this config (as the probe computed it)."""
    blocks: tuple[Block, ...] = ()
    dtype: str | None = None
    flops: float | None = None
    bytes: float | None = None
    mode: str | None = None
    """forward, backward or full; None in a forward-only bench (read as forward)."""
    json: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The row as the probe wrote it (with each cell's share of peak once known): what the
    journal's result and the keep record hold."""

    def median_ms(self, impl: str) -> float | None:
        cell = self.cells.get(impl)
        return cell.median_ms if cell is not None else None


@dataclass(frozen=True)
class Caught:
    """A guard (workload/guards.py) that caught a candidate at one config, with its line; the rows
    before it were kept."""

    impl: str
    config: str
    guard: str
    line: str


@dataclass(frozen=True)
class Crash:
    """The implementation that raised at one config; the rows before it were kept."""

    impl: str | None
    config: str | None
    error: str | None


@dataclass(frozen=True)
class Measured:
    """One bench's measurements and the window they were taken in."""

    rows: tuple[MeasuredRow, ...]
    candidates: tuple[str, ...] = ("ours",)
    baseline: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    """Implementation id -> its name, as the probe declared them (in its order)."""
    compared: tuple[str, ...] | None = None
    """The references every speedup is stated against; None: the probe named none."""
    workload: str | None = None
    source: str | None = None
    device: str | None = None
    gpu: GpuStatic = field(default_factory=lambda: GpuStatic(0))
    gpu_json: object = None
    """The GPU as the probe named it, written back into the journal's result whole."""
    samples: tuple[ProbeSample, ...] = ()
    watch_error: str | None = None
    started: float | None = None
    finished: float | None = None
    pid: float | None = None
    judged_by_block: bool = False
    """The probe judged each timed block by its clocks and re-measured the dirty ones."""
    crash: Crash | None = None
    caught: Caught | None = None
    peak: Peak | None = None
    """The card's peak, once `with_peaks` looked it up."""
    guards_off: frozenset[str] = frozenset()
    """The checks the cheat catalogue's mutation test turned off for this run."""
    timed_unchecked: str | None = None
    """Why the timed outputs were not checked (no oracle)."""

    def label(self, impl: str) -> str:
        """How the result shows `impl` (its id where the probe gave it no label)."""
        return self.labels.get(impl) or impl

    @property
    def row_json(self) -> list[JsonObject]:
        """The rows as the probe wrote them, for the readers of stored rows (analysis/keep.py)."""
        return [r.json for r in self.rows]


def read_measured(data: Mapping[str, object]) -> Measured:
    """The probe's bench result (or a document of its shape) parsed; CockpitError, one line, when
    it cannot be judged from."""
    gpu_json = data.get("gpu")
    samples = _samples(data.get("gpu_samples"))
    compared = data.get("compared")
    crash = obj(data.get("crash"))
    error = data.get("gpu_watch_error")
    return Measured(
        tuple(_row(n, r) for n, r in enumerate(objects(data.get("rows")))),
        strings(data.get("candidates")) or ("ours",), text(data.get("baseline")),
        {k: name for k, v in obj(data.get("labels")).items() if (name := text(v)) is not None},
        tuple(compared) if isinstance(compared, list) and all(isinstance(c, str) for c in compared)
        else None,
        text(data.get("workload")), text(data.get("source")), text(data.get("device")),
        _gpu(obj(gpu_json), text(data.get("device")), samples), gpu_json, samples,
        str(error) if error else None,
        as_number(data.get("started")), as_number(data.get("finished")), as_number(data.get("pid")),
        isinstance(data.get("block_check"), Mapping),
        Crash(text(crash.get("impl")), text(crash.get("config")), text(crash.get("error")))
        if crash else None, _caught(obj(data.get("caught"))),
        guards_off=frozenset(strings(data.get("guards_off"))),
        timed_unchecked=text(data.get("timed_unchecked")))


def _caught(caught: Mapping[str, object]) -> Caught | None:
    line = text(caught.get("line"))
    if not line:
        return None
    return Caught(text(caught.get("impl")) or "ours", text(caught.get("config")) or "a config",
                  text(caught.get("guard")) or "a guard", line)


def with_peaks(measured: Measured) -> Measured:
    """The measurements with each implementation's share of the card's peak (compute for its
    dtype, memory bandwidth) in the rows the journal keeps, and the peak itself."""
    peak = peak_for(measured.device)
    rows = []
    for row in measured.rows:
        shares = {impl: share_of_peak(peak, row.dtype, c.tflops, c.gbps) for impl, c in row.cells.items()}
        stored = {impl: {**obj(cell), "pct_peak": shares[impl]}
                  for impl, cell in obj(row.json.get("impl")).items()}
        rows.append(replace(row, json={**row.json, "impl": stored}))
    return replace(measured, rows=tuple(rows), peak=peak)


def _refuse(what: str) -> CockpitError:
    return CockpitError(f"the bench result's {what}: not what the probe writes; run the gate again")


def _row(n: int, row: JsonObject) -> MeasuredRow:
    config = text(row.get("config"))
    if config is None:
        raise _refuse(f"row {n + 1} names no config")
    speedups = {key[len(SPEEDUP_PREFIX):]: v for key, value in row.items() if key.startswith(SPEEDUP_PREFIX)
                and not key.endswith("_ci") and (v := as_number(value)) is not None}
    mode = row.get("mode")
    return MeasuredRow(config, {impl: _cell(obj(c)) for impl, c in obj(row.get("impl")).items()}, speedups,
                       tuple(_block(config, b) for b in objects(row.get("blocks"))), text(row.get("dtype")),
                       as_number(row.get("flops")), as_number(row.get("bytes")),
                       (text(mode) or "forward") if "mode" in row else None, row)


def _cell(cell: JsonObject) -> TimedCell:
    number = {key: as_number(cell.get(key)) for key in ("median_ms", "tflops", "gbps", "eager_ms")}
    return TimedCell(number["median_ms"], number["tflops"], number["gbps"], number["eager_ms"],
                     cell.get("host_bound") is True, cell.get("clean") is False,
                     text(cell.get("unclean_why")) or "dirty", whole(cell.get("remeasured")) or 0,
                     {k: whole(v) or 0 for k, v in obj(cell.get("remeasured_why")).items()})


def _block(config: str, block: JsonObject) -> Block:
    impl, t0, t1 = text(block.get("impl")), as_number(block.get("t0")), as_number(block.get("t1"))
    if impl is None or t0 is None or t1 is None:
        raise _refuse(f"timed block at {config} has no implementation or span")
    return Block(config, impl, t0, t1)


def _samples(value: object) -> tuple[ProbeSample, ...]:
    """The NVML samples, each with its time (what the validity verdict places them by)."""
    found = items(value)
    if not all(isinstance(s, Mapping) and as_number(s.get("t")) is not None for s in found):
        raise _refuse("gpu_samples hold a sample without its time")
    return tuple(cast(ProbeSample, s) for s in found)


def _gpu(gpu: JsonObject, device: str | None, samples: tuple[ProbeSample, ...]) -> GpuStatic:
    """The GPU the probe ran on, as NVML knows it (a probe from before UUIDs: GPU 0, no UUID)."""
    index = gpu.get("nvml_index")
    first = samples[0] if samples else {}
    return GpuStatic(index if isinstance(index, int) else 0, name=text(gpu.get("name")) or device,
                     uuid=text(gpu.get("nvml_uuid")) or text(gpu.get("uuid")),
                     pci_bus_id=text(gpu.get("pci_bus_id")),
                     max_sm_clock_mhz=whole(gpu.get("max_sm_clock")) or whole(first.get("max_sm_clock")))
