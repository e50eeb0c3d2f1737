"""The bench gate's view: the speedup and its class, whether the GPU's conditions were clean and
what the watch saw, the next step, keep or revert; each config's times, speedups, share of peak
and the SM clocks ours and the baseline ran at."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.analysis.decide import class_words
from cockpit.gates.bench.checks import checks_line
from cockpit.gates.bench.result import BenchResult, BenchRow, ImplTime
from cockpit.gates.view import Cell, Column, Fact, GateView, ViewTable, fmt, present, speed_tone, unit
from cockpit.telemetry.window_evidence import BusyClock, ClockEvent, WindowEvidence

SHOWN_REFERENCES = 3
"""References whose times the configs table shows: the baseline and the ones ours does worst
against, then the others in their declared order."""
Rate = tuple[str, str, str]
"""A rate column: its title, its number format, the field of ImplTime it shows."""
RATES: tuple[Rate, ...] = (("TFLOP/s", ".1f", "tflops"), ("GB/s", ".0f", "gbps"),
                           ("% peak", ".0f", "pct_peak"))


def keep_label(action: str) -> str:
    """The pane's label of the bench's keep/revert verdict: "keep/revert (keep)" (the report's Decision
    line finds it by this label: report/headline.py)."""
    return f"keep/revert ({action})"


def bench_view(bench: BenchResult) -> GateView:
    validity = bench.validity
    facts = _headline_facts(bench)
    facts += _validity_facts(bench)
    if bench.next_step:
        facts.append(Fact("next step", bench.next_step, "strong"))
    if bench.keep is not None and bench.keep.summary:
        facts.append(Fact(keep_label(bench.keep.action), bench.keep.summary, "quiet"))
    payoff = bench.payoff
    if payoff is not None:
        facts.append(Fact("the profile's fix", payoff.line(), "strong"))
        facts.append(Fact("changed since it", payoff.changed_words(), "quiet"))
    checked = checks_line(bench.raw_rows)
    if checked:
        facts.append(Fact("checks", checked, "dim"))
    warnings = (validity.hint,) if validity is not None and validity.hint else ()
    return GateView(tuple(facts), warnings, (bench_table(bench),) if bench.rows else ())


def _headline_facts(bench: BenchResult) -> list[Fact]:
    """What was measured where, and ours' speedup over the baseline with its class."""
    facts = []
    if bench.schema >= 2:
        facts.append(Fact("workload", bench.workload + (f" ({bench.source})" if bench.source else "")))
    if bench.device:
        facts.append(Fact("device", bench.device))
    if bench.speedup is not None:
        facts.append(Fact("speedup", f"{bench.speedup:.2f}x {bench.vs_label(bench.baseline)} (geometric mean)"
                          + (f", {class_words(bench.level, bench.interval)}" if bench.level else ""),
                          speed_tone(bench.speedup)))
    return facts


def _validity_facts(bench: BenchResult) -> list[Fact]:
    """VALID or SUSPECT (of some configs, the rest deciding), then the conditions, the reasons, the
    notes and the evidence of the validity verdict."""
    validity = bench.validity
    facts = [Fact("validity", _validity_word(bench), "good" if bench.valid else "warn")]
    if validity is None:
        return facts
    if validity.valid:
        facts.append(Fact("conditions", validity.words(), "good"))
    facts += [Fact("why suspect", reason, "warn") for reason in validity.reasons]
    facts += [Fact("note", note, "dim") for note in validity.notes]
    if validity.evidence is not None:
        facts += [Fact("evidence", line, "dim") for line in evidence_lines(validity.evidence)]
    return facts


def _validity_word(bench: BenchResult) -> str:
    """VALID, SUSPECT, or SUSPECT of some configs only (the headline decides on the rest)."""
    if bench.valid:
        return "VALID"
    left = bench.left_out_words() if bench.decidable else ""
    return f"SUSPECT ({left}; the rest decide)" if left else "SUSPECT"


def bench_table(bench: BenchResult) -> ViewTable:
    """Each config: every candidate's and the shown references' median, ours' speedup over each
    reference with a geometric mean, what ours achieves (TFLOP/s, GB/s, % of peak), and the SM
    clocks ours and the baseline ran at where the bench recorded them."""
    shown = bench.shown(SHOWN_REFERENCES)
    speedups = [r for r in shown if r in bench.vs]
    ours = [row.impl.get(bench.ours) for row in bench.rows]
    rates = _rates_recorded(ours)
    clocks = any(bench.config_mhz(row.config) for row in bench.rows)
    rows = [_config_cells(bench, row, time, shown, speedups, rates, clocks)
            for row, time in zip(bench.rows, ours, strict=True)]
    columns = (Column("config", share=2),
               *(Column(bench.label(i), True) for i in (*bench.candidates, *shown)),
               *(Column(bench.vs_label(r), True) for r in speedups),
               *(Column(title, True) for title, _, _ in rates),
               *((Column(f"MHz {bench.ours_label}/{bench.baseline_label}", True),) if clocks else ()))
    return ViewTable("configs (median ms)", columns, tuple(rows))


def _config_cells(bench: BenchResult, row: BenchRow, time: ImplTime | None, shown: Sequence[str],
                  speedups: Sequence[str], rates: Sequence[Rate], clocks: bool) -> tuple[Cell, ...]:
    """One config's cells: the medians, ours' speedups, ours' rates and, where recorded, the clocks."""
    return (Cell(row.config),
            *(Cell(fmt(row.median_ms(i), ".4f")) for i in (*bench.candidates, *shown)),
            *(Cell(fmt(row.speedups.get(r), ".2f") + "x", speed_tone(row.speedups.get(r))) for r in speedups),
            *(Cell(fmt(getattr(time, key) if time else None, spec)) for _, spec, key in rates),
            *((_clocks_cell(bench, row.config),) if clocks else ()))


def _rates_recorded(ours: Sequence[ImplTime | None]) -> list[Rate]:
    """The rate columns (title, format, field) that ours has a value for in some config."""
    return [(title, spec, key) for title, spec, key in RATES
            if any(getattr(t, key) is not None for t in ours if t is not None)]


def _clocks_cell(bench: BenchResult, config: str) -> Cell:
    """'1980/1755': the SM clocks ours and the baseline ran at on one config (empty when unrecorded)."""
    mhz = bench.config_mhz(config)
    return Cell("/".join(fmt(mhz.get(i), ".0f", "–") for i in (bench.ours, bench.baseline)) if mhz else "")


def evidence_lines(evidence: WindowEvidence) -> list[str]:
    """The validity evidence in words: window, clock events, clocks, other processes. Only the
    numbers the evidence holds are said; a line left with no number is dropped."""
    lines = [present(unit(evidence.window_s, ".1f", " s watched"),
                     unit(evidence.samples, ".0f", " NVML samples"), sep=", ")]
    lines += [_clock_event(t) for t in evidence.throttle if t.seconds is not None or t.reason is not None]
    for c in evidence.clocks:
        said = present(_busy_clock(c), _samples_below(c), sep="; ")
        if said:
            lines.append(_gpu(c.gpu) + said)
    lines += [f"another process on the GPU: {f.to_json()}" for f in evidence.foreign]
    return [line for line in lines if line]


def _clock_event(t: ClockEvent) -> str:
    """'GPU 0: power cap for 3.2 s (tolerated)': one clock event, with what the watch knows of it."""
    seconds = unit(t.seconds, ".1f", " s")
    return _gpu(t.gpu) + present(t.reason or "clock event", f"for {seconds}" if seconds else None,
                                 "(tolerated)" if t.tolerated else None)


def _gpu(index: int | None) -> str:
    return f"GPU {index}: " if index is not None else ""


def _busy_clock(c: BusyClock) -> str | None:
    """`busy SM clock 1380–1980 MHz of 1980`, with only the ends that were measured."""
    low, high = c.min_busy_mhz, c.max_busy_mhz
    top = unit(c.max_mhz, ".0f", "")
    if low is not None and high is not None:
        span = f"busy SM clock {low:.0f}–{high:.0f} MHz"
    elif low is not None:
        span = f"busy SM clock down to {low:.0f} MHz"
    elif high is not None:
        span = f"busy SM clock up to {high:.0f} MHz"
    else:
        return f"max SM clock {top} MHz" if top else None
    return span + (f" of {top}" if top else "")


def _samples_below(c: BusyClock) -> str | None:
    """`3 busy samples below 1800 MHz`; without the threshold, `below the threshold`."""
    count = unit(c.samples_below, ".0f", " busy samples below")
    if count is None:
        return None
    return f"{count} {unit(c.threshold_mhz, '.0f', ' MHz') or 'the threshold'}"
