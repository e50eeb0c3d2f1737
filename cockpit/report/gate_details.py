"""What each kind of gate run adds to the report: facts, warnings and tables from its result.

Results come from journals that may be old, hand-edited or torn, so every field is checked
before use: a field that is missing or of the wrong type leaves its cell empty, never an error.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from cockpit.analysis.bench_result import BenchResult, read_bench_result
from cockpit.report.model import Fact, Table
from cockpit.report.text import clean_value

Details = tuple[tuple[Fact, ...], tuple[str, ...], tuple[Table, ...]]


def details(gate: str, result: dict[str, Any]) -> Details:
    """(facts, warnings, tables) for one finished run of `gate`."""
    reader = _READERS.get(gate)
    return reader(result) if reader else ((), (), ())


def _s(value: Any) -> str:
    return clean_value(value)


def _present(*parts: str | None, sep: str = " ") -> str:
    """The parts that were recorded, joined; empty when none was."""
    return sep.join(p for p in parts if p)


def _unit(value: Any, spec: str, unit: str) -> str | None:
    """`12.3 s`, or None when the number was not recorded."""
    number = _num(value)
    return None if number is None else f"{format(number, spec)}{unit}"


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _fmt(value: Any, spec: str, none: str = "n/a") -> str:
    number = _num(value)
    return none if number is None else format(number, spec)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def env_details(result: dict[str, Any]) -> Details:
    checks = _dicts(result.get("checks"))
    order = {"fail": 0, "warn": 1, "pass": 2}
    rows = tuple((_s(c.get("status")).upper(), _s(c.get("name")), _s(c.get("value")),
                  _s(c.get("fix")) if c.get("status") != "pass" else "")
                 for c in sorted(checks, key=lambda c: order.get(str(c.get("status")), 3)))
    warnings = tuple(_present(_s(c.get("name")), _s(c.get("value")), sep=": ") for c in checks
                     if c.get("status") in ("warn", "fail") and (c.get("name") or c.get("value")))
    table = Table("checks", ("status", "check", "value", "fix"), rows, (False,) * 4)
    return (), warnings, (table,) if rows else ()


@cache
def short_name(mangled: str) -> str:
    """Demangled once per name: a session rebuilds the same kernels, and c++filt is a process."""
    from cockpit.hardware.symbols import demangle
    from cockpit.hardware.symbols import short_name as shortened

    return shortened(demangle(mangled))


def _occupancy(kernel: dict[str, Any]) -> str:
    """`H100 80GB HBM3 1 blk 8 warps (registers); L4 1 blk 8 warps (registers + shared memory)`;
    what a GPU's entry did not record is left out."""
    return "; ".join(filter(None, (
        _present(_s(o.get("gpu")), _unit(o.get("blocks_per_sm"), ".0f", " blk"),
                 _unit(o.get("warps_per_sm"), ".0f", " warps"),
                 f"({_s(o.get('limiter'))})" if o.get("limiter") is not None else None)
        for o in _dicts(kernel.get("occupancy")))))


def build_details(result: dict[str, Any]) -> Details:
    took = ("up to date (ninja had no work)" if result.get("up_to_date") is True
            else _present(_unit(result.get("build_s"), ".1f", " s"),
                          _unit(result.get("steps"), ".0f", " ninja steps"), sep=", "))
    facts = [Fact("build", took)] if took else []
    if result.get("arch"):
        facts.append(Fact("arch", _s(result["arch"])))
    imported = result.get("import")
    if isinstance(imported, dict):
        facts.append(Fact("import", ("ok" if imported.get("ok") else "FAILED")
                          + (f": {_s(imported.get('detail'))}" if imported.get("detail") else "")))
    errors = tuple((f"{_s(e.get('file'))}:{_s(e.get('line'))}" if e.get("file") else "",
                    _s(e.get("kind")), _s(e.get("message"))) for e in _dicts(result.get("errors")))
    kernels = []
    for k in _dicts(result.get("kernels")):
        spills = (_num(k.get("spill_stores")) or 0) + (_num(k.get("spill_loads")) or 0)
        # Shared memory per block as launched (dynamic) where the build recorded it, else ptxas's.
        smem = _num(k.get("smem_per_block")) if k.get("smem_per_block") is not None else _num(k.get("smem"))
        kernels.append((_s(k.get("label") or short_name(str(k.get("name", "")))), _s(k.get("arch")),
                        _fmt(k.get("registers"), ".0f", ""), _fmt((smem or 0) / 1024, ".1f"),
                        _fmt(k.get("stack"), ".0f", ""), f"{spills:.0f}", _occupancy(k)))
    tables = []
    if errors:
        tables.append(Table("errors", ("where", "kind", "message"), errors, (False,) * 3))
    if kernels:
        tables.append(Table("resources per kernel", ("kernel", "arch", "regs", "smem KB/block",
                                                     "stack", "spills", "occupancy per SM"),
                            tuple(kernels), (False, False, True, True, True, True, False)))
    warnings = tuple(_s(w) for w in result.get("warnings", []) if isinstance(w, str)) \
        if isinstance(result.get("warnings"), list) else ()
    return tuple(facts), warnings, tuple(tables)


def correctness_details(result: dict[str, Any]) -> Details:
    rows = tuple(("ok" if r.get("ok") else "FAIL", _s(r.get("config")), _fmt(r.get("max_abs"), ".2e"),
                  _fmt(r.get("rel_l2"), ".2e"), _fmt(r.get("tolerance"), "g"),
                  _fmt(r.get("nonfinite"), ".0f"))
                 for r in _dicts(result.get("rows")))
    facts = (Fact("device", _s(result["device"])),) if result.get("device") else ()
    table = Table("configs", ("", "config", "max |Δ|", "rel L2", "tolerance", "NaN/Inf"), rows,
                  (False, False, True, True, True, True))
    return facts, (), (table,) if rows else ()


SHOWN_REFERENCES = 3
"""References whose times the configs table shows: the baseline and the ones ours does worst
against, then the others (the attention bench's EFFICIENT backend is left out)."""


def bench_details(result: dict[str, Any]) -> Details:
    bench = read_bench_result(result)
    if bench is None:
        return (), (), ()
    validity = bench.validity or {}
    facts = []
    if bench.schema >= 2:
        facts.append(Fact("workload", _s(bench.workload) + (f" ({_s(bench.source)})" if bench.source
                                                             else "")))
    if bench.device:
        facts.append(Fact("device", _s(bench.device)))
    if bench.speedup is not None:
        facts.append(Fact("speedup", f"{bench.speedup:.2f}x {_s(bench.vs_label(bench.baseline))} "
                                     "(geometric mean)" + (f", {_s(bench.level)}" if bench.level else "")))
    facts.append(Fact("validity", "VALID" if bench.valid else "SUSPECT"))
    for reason in validity.get("reasons", []) if isinstance(validity.get("reasons"), list) else []:
        facts.append(Fact("why suspect", _s(reason)))
    for note in validity.get("notes", []) if isinstance(validity.get("notes"), list) else []:
        facts.append(Fact("note", _s(note)))
    facts += [Fact("evidence", line) for line in evidence_lines(validity.get("evidence"))]
    if bench.next_step:
        facts.append(Fact("next step", _s(bench.next_step)))
    keep = _dict(bench.keep)
    if keep.get("summary"):
        facts.append(Fact(f"keep/revert ({_s(keep['action'])})" if keep.get("action") else "keep/revert",
                          _s(keep["summary"])))
    warnings = (_s(validity["hint"]),) if validity.get("hint") else ()
    return tuple(facts), warnings, (bench_table(bench),) if bench.rows else ()


def bench_table(bench: BenchResult) -> Table:
    """Each config: every candidate's and the shown references' median, ours' speedup over each
    reference with a geometric mean, and what ours achieves (TFLOP/s, GB/s, % of peak)."""
    shown = bench.shown(SHOWN_REFERENCES)
    speedups = [r for r in shown if r in bench.vs]
    ours = [row.impl.get(bench.ours) for row in bench.rows]
    rates = [(title, spec, key) for title, spec, key in (("TFLOP/s", ".1f", "tflops"),
                                                         ("GB/s", ".0f", "gbps"),
                                                         ("% peak", ".0f", "pct_peak"))
             if any(getattr(t, key) is not None for t in ours if t is not None)]
    rows = []
    for row, time in zip(bench.rows, ours, strict=True):
        rows.append((_s(row.config), *(_fmt(row.median_ms(i), ".4f") for i in (*bench.candidates, *shown)),
                     *(_fmt(row.speedups.get(r), ".2f") + "x" for r in speedups),
                     *(_fmt(getattr(time, key) if time else None, spec) for _, spec, key in rates)))
    columns = ("config", *(_s(bench.label(i)) for i in (*bench.candidates, *shown)),
               *(_s(bench.vs_label(r)) for r in speedups), *(title for title, _, _ in rates))
    return Table("configs (median ms)", columns, tuple(rows), (False,) + (True,) * (len(columns) - 1))


def evidence_lines(evidence: Any) -> list[str]:
    """The validity evidence in words: window, clock events, clocks, other processes. Only the
    numbers the evidence holds are said; a line left with no number is dropped."""
    if not isinstance(evidence, dict) or not evidence:
        return []
    lines = [_present(_unit(evidence.get("window_s"), ".1f", " s watched"),
                      _unit(evidence.get("samples"), ".0f", " NVML samples"), sep=", ")]
    for t in _dicts(evidence.get("throttle")):
        seconds = _unit(t.get("seconds"), ".1f", " s")
        if seconds is not None or t.get("reason") is not None:
            lines.append(_gpu(t) + _present(_s(t.get("reason")) or "clock event",
                                            f"for {seconds}" if seconds else None,
                                            "(tolerated)" if t.get("tolerated") else None))
    for c in _dicts(evidence.get("clocks")):
        said = _present(_busy_clock(c), _samples_below(c), sep="; ")
        if said:
            lines.append(_gpu(c) + said)
    for f in _dicts(evidence.get("foreign")):
        lines.append(f"another process on the GPU: {_s(f)}")
    return [line for line in lines if line]


def _gpu(item: dict[str, Any]) -> str:
    return f"GPU {_s(item['gpu'])}: " if item.get("gpu") is not None else ""


def _busy_clock(c: dict[str, Any]) -> str | None:
    """`busy SM clock 1380–1980 MHz of 1980`, with only the ends that were measured."""
    low, high = _num(c.get("min_busy_sm_clock_mhz")), _num(c.get("max_busy_sm_clock_mhz"))
    top = _unit(c.get("max_sm_clock_mhz"), ".0f", "")
    if low is not None and high is not None:
        span = f"busy SM clock {low:.0f}–{high:.0f} MHz"
    elif low is not None:
        span = f"busy SM clock down to {low:.0f} MHz"
    elif high is not None:
        span = f"busy SM clock up to {high:.0f} MHz"
    else:
        return f"max SM clock {top} MHz" if top else None
    return span + (f" of {top}" if top else "")


def _samples_below(c: dict[str, Any]) -> str | None:
    """`3 busy samples below 1800 MHz`; without the threshold, `below the threshold`."""
    count = _unit(c.get("samples_below"), ".0f", " busy samples below")
    if count is None:
        return None
    return f"{count} {_unit(c.get('threshold_mhz'), '.0f', ' MHz') or 'the threshold'}"


def profile_details(result: dict[str, Any]) -> Details:
    facts = []
    for k in _dicts(result.get("kernels"))[:3]:
        v = _dict(k.get("verdict"))
        said = (("kernel", _s(k.get("name")).split("(")[0]),
                ("verdict", _present(_s(v.get("bottleneck")), _s(v.get("headline")), sep=": ")),
                ("the one fix", _s(v.get("recommendation"))),
                ("confidence", _present(_s(v.get("confidence")), _s(v.get("confidence_reason")), sep=": ")))
        facts += [Fact(label, value) for label, value in said if value]
    if result.get("clock_note"):
        facts.append(Fact("clocks", _s(result["clock_note"])))
    if result.get("report"):
        facts.append(Fact("ncu report", _s(result["report"])))
    seen = result.get("kernels_seen")
    if isinstance(seen, list) and seen:
        facts.append(Fact("kernels that ran", ", ".join(_s(n) for n in seen)))
    return tuple(facts), (), ()


_READERS: dict[str, Callable[[dict[str, Any]], Details]] = {
    "env": env_details, "build": build_details, "correctness": correctness_details,
    "bench": bench_details, "profile": profile_details,
}
