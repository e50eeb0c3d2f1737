"""The bench run a report is about, config by config: every implementation's time with its
interval and clock, ours' speedup over the baseline with its interval, the workload's FLOP and
byte counts (the bytes from the workload's model where the run stored none: `byte_model.py`), and
whether the config's time is mostly the launch. The speedup-by-shape and roofline charts
(`bench_charts.py`), the per-config table and PR.md's table are drawn from it.

The run is the session's best valid bench; with none, its last bench that measured rows, marked
as not valid (its numbers are shown, never as the result).
"""

from __future__ import annotations

from collections.abc import Mapping

from cockpit.gates.bench.result import SPEEDUP_PREFIX, BenchResult, BenchRow, ImplTime, read_bench_result
from cockpit.hardware.peaks import peak_for
from cockpit.json_fields import JsonObject, obj, pair, text
from cockpit.report.byte_model import ByteModel, byte_model
from cockpit.report.history import bench_runs, best_valid
from cockpit.report.model import BenchConfigs, ConfigRow, ConfigTime
from cockpit.report.text import clean_line
from cockpit.session.state import SessionState

LAUNCH_COST_MS = 0.015
"""A call this short on ours or the baseline is mostly its launch: per-call times of 8-15 µs
configs moved 2.5-3.4x between two benches of one binary, where every config over
~20 µs agreed within 1.5 % (DESIGN.md, third round). Such a row is shown, never as the fastest."""


def bench_configs(state: SessionState) -> BenchConfigs | None:
    """The best valid bench of the session (else its last bench with rows), config by config."""
    best = best_valid(state)
    run, valid = (best[0], True) if best is not None else (None, False)
    if run is None:
        measured = [r for r, _ in bench_runs(state)]
        run = next((r for r in reversed(measured) if _rows_of(r.result)), None)
    if run is None:
        return None
    result = read_bench_result(run.result)
    if result is None or not result.rows:
        return None
    return configs_of(result, clean_line(run.run_id), valid)


def _rows_of(result: object) -> bool:
    read = read_bench_result(result)
    return read is not None and bool(read.raw_rows)


def configs_of(result: BenchResult, run_id: str, valid: bool) -> BenchConfigs:
    impls = (result.ours, *result.references)
    labels = tuple(clean_line(result.label(i)) for i in impls)
    raw = [r for r in result.raw_rows if isinstance(r.get("config"), str)]  # as `rows` reads them
    several_modes = len({r.mode for r in result.rows}) > 1
    model = byte_model(result)
    rows = tuple(_row(result, row, stored, impls, labels, several_modes, model)
                 for row, stored in zip(result.rows, raw, strict=True))
    return BenchConfigs(run_id, valid, clean_line(result.workload), labels[0], labels[1], labels,
                        clean_line(result.device) if result.device else None, peak_for(result.device),
                        rows, _interval_kind(result, raw),
                        model.sentence(clean_line(run_id)) if model and any(r.bytes for r in rows) else None)


def _interval_kind(result: BenchResult, raw: list[JsonObject]) -> str:
    """What the speedup intervals are: the bench's 95 % CI when it stored any, else the p20-p80
    spread the report works out."""
    ci_key = SPEEDUP_PREFIX + result.baseline + "_ci"
    return "95 % CI" if any(isinstance(stored.get(ci_key), list) for stored in raw) else "p20-p80"


def _row(result: BenchResult, row: BenchRow, stored: JsonObject, impls: tuple[str, ...],
         labels: tuple[str, ...], several_modes: bool, model: ByteModel | None) -> ConfigRow:
    mhz = result.config_mhz(row.config)
    times = tuple(_time(label, row, stored, impl, mhz) for impl, label in zip(impls, labels, strict=True)
                  if impl in row.impl)
    speedup, interval = _speedup_and_interval(result, row, stored)
    shape = obj(stored.get("shape"))
    dtype = text(stored.get("dtype")) or text(shape.get("dtype"))
    name = f"{row.config} {row.mode}" if several_modes and row.mode not in row.config else row.config
    nbytes = row.bytes or (model.bytes_of(stored) if model else None)
    return ConfigRow(clean_line(name), times, speedup, interval, clean_line(dtype) if dtype else None,
                     row.flops, nbytes, _launch_cost(stored, (result.ours, result.baseline), row))


def _speedup_and_interval(result: BenchResult, row: BenchRow,
                          stored: JsonObject) -> tuple[float | None, tuple[float, float] | None]:
    """Ours over the baseline and its interval as the bench stored them; where it did not, from
    the two medians and the p20-p80 spread (the slowest ours against the fastest baseline)."""
    speedup = row.speedups.get(result.baseline)
    ours, base = row.impl.get(result.ours), row.impl.get(result.baseline)
    if speedup is None and ours is not None and base is not None:
        speedup = base.median_ms / ours.median_ms
    interval = pair(stored.get(SPEEDUP_PREFIX + result.baseline + "_ci"))
    if interval is None and ours is not None and base is not None:
        interval = _spread_interval(ours, base)
    return speedup, interval


def _spread_interval(ours: ImplTime, base: ImplTime) -> tuple[float, float] | None:
    """The speedup's range over the two p20-p80 spreads; None unless both have them."""
    if ours.p20_ms and ours.p80_ms and base.p20_ms and base.p80_ms:
        return (base.p20_ms / ours.p80_ms, base.p80_ms / ours.p20_ms)
    return None


def _time(label: str, row: BenchRow, stored: JsonObject, impl: str, mhz: Mapping[str, float]) -> ConfigTime:
    time = row.impl[impl]
    ci = pair(obj(obj(stored.get("impl")).get(impl)).get("ci_ms"))
    low, high = ci if ci is not None else (time.p20_ms, time.p80_ms)
    return ConfigTime(label, time.median_ms, low, high, mhz.get(impl), time.tflops, time.gbps)


def _launch_cost(stored: JsonObject, impls: tuple[str, str], row: BenchRow) -> str:
    """Why the config's time is mostly the launch: the bench said so, the probe found the host
    unable to keep up, or the call is under `LAUNCH_COST_MS`; empty when none holds."""
    if stored.get("launch_bound") is True:
        return "the bench found it launch-bound"
    cells = obj(stored.get("impl"))
    if any(obj(cells.get(i)).get("host_bound") is True for i in impls):
        return "host-bound: the eager call is slower than its device time"
    short = [ms for i in impls if (ms := row.median_ms(i)) is not None and ms < LAUNCH_COST_MS]
    if short:
        return f"a {min(short) * 1000:.1f} µs call: mostly its launch"
    return ""

