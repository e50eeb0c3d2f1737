"""A bench gate's result: the one type for every version of it, read and written here.

Schema 2 (the bench of any workload) names its workload, its candidates, the baseline the
speedup is stated against, a display label per implementation, and the geometric mean against
each timed reference that ran (`vs`). A result without a "schema" key is from before workloads:
it is read through cockpit/before_workloads.py's upgrade to schema 2's keys, so old journals say
what they said before.
`to_json` writes schema 2, with every key it was read from that this type does not model.

Modes (issue 35): a workload timed in several modes (forward, backward, full) has a row per shape
and mode, each row's `mode` key naming it (a row without one is a forward row: every result from
before reads so), and `modes`, ours' geometric mean over the baseline per mode, side by side.
Schema 2 still: the keys are added, and a reader that knows none of them reads the rest alike.

Journals may be old, hand-edited or torn: a value of the wrong type is left out and a row that is
not one is skipped; reading never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Literal

from cockpit import before_workloads
from cockpit.analysis.decide import class_words
from cockpit.analysis.fix_payoff import FixPayoff
from cockpit.analysis.keep import KeepResult
from cockpit.analysis.stats import geomean
from cockpit.gates.bench.validity import BenchValidity
from cockpit.gates.result import HeadlineFigure, gpu_uuid
from cockpit.json_fields import (
    JsonObject,
    as_number,
    compact,
    obj,
    objects,
    pair,
    positive,
    strings,
    text,
    whole,
)

SCHEMA = 2
"""The schema `to_json` writes (1: no "schema" key, before workloads)."""
SPEEDUP_PREFIX = "speedup_vs_"
"""A row's speedup of ours over one reference: `speedup_vs_<reference id>`."""
BENCH_KEYS = ("rows", "geomean_speedup", "validity")
"""A result holding none of these is not a bench result (a run that died before measuring)."""


@dataclass(frozen=True)
class ImplTime:
    """One implementation on one config: its median call and what that achieves."""

    median_ms: float
    p20_ms: float | None = None
    p80_ms: float | None = None
    samples: int | None = None
    tflops: float | None = None
    gbps: float | None = None
    pct_peak: float | None = None
    """Of the GPU's peak for what bounds the kernel (compute or memory), where the bench knew it."""


@dataclass(frozen=True)
class BenchRow:
    """One config of the sweep: every implementation's time and ours' speedup over each reference."""

    config: str
    impl: Mapping[str, ImplTime]
    speedups: Mapping[str, float]
    """Reference id -> ours' speedup over it on this config (as the bench stored it)."""
    flops: float | None = None
    bytes: float | None = None
    mode: str = "forward"
    """forward, backward or full (a row that says none is a forward row)."""

    def median_ms(self, impl: str) -> float | None:
        time = self.impl.get(impl)
        return time.median_ms if time is not None else None


@dataclass(frozen=True)
class BenchResult:
    """A bench run's result, whichever schema wrote it."""

    schema: int
    """1 (no "schema" key: before workloads) or 2."""
    workload: str
    ours: str
    """The id under which the first candidate's times are stored."""
    candidates: tuple[str, ...]
    baseline: str
    """The reference the speedup is stated against."""
    labels: Mapping[str, str]
    """Implementation id -> how it is shown, in the order the bench declared them."""
    speedup: float | None
    """Geometric mean over the configs of ours' speedup over the baseline."""
    configs: int | None
    vs: Mapping[str, float]
    """Timed reference -> geometric-mean speedup of ours over it; the baseline first."""
    level: str | None = None
    next_step: str | None = None
    device: str | None = None
    validity: BenchValidity | None = None
    keep: KeepResult | None = None
    source: str | None = None
    raw_rows: tuple[JsonObject, ...] = field(default=(), repr=False)
    """The result's rows as stored; `rows` reads them when first asked (a report of 300 bench
    runs needs the headline of each and the table of a few)."""
    interval: tuple[float, float] | None = None
    """The headline's interval (benches that measured one)."""
    launch_bound: tuple[str, ...] = ()
    """Configs a bench from before device time (issue 32) left out of its headline as launch-bound;
    read and written back, never set now (every config is in the headline)."""
    record: str | None = None
    """The bench record file of a result from before the journal was the past (results/bench-*.json)."""
    modes: Mapping[str, float] = field(default_factory=dict)
    """Mode -> ours' geometric mean over the baseline in that mode ({"forward": 1.57, "backward":
    1.21, "full": 1.30}); empty for a forward-only bench."""
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The document it was read from: `to_json` writes back what this type does not model (the
    GPU's identity and peak, the speedup class's tool, the harness of a replaced command)."""

    SCHEMA: ClassVar[int] = SCHEMA

    @classmethod
    def from_json(cls, value: object) -> BenchResult | None:
        """`read_bench_result`: None when `value` is not a bench result."""
        return read_bench_result(value)

    def to_json(self) -> dict[str, object]:
        """The result as schema 2 writes it (a schema 1 result is written as 2)."""
        document = {
            **self.raw, "schema": SCHEMA, "workload": self.workload, "source": self.source,
            "ours": self.ours, "candidates": list(self.candidates), "baseline": self.baseline,
            "labels": dict(self.labels), "rows": [dict(r) for r in self.raw_rows], "device": self.device,
            "geomean_speedup": self.speedup, "configs": self.configs, "vs": dict(self.vs),
            "interval": list(self.interval) if self.interval else None,
            "launch_bound": list(self.launch_bound), "level": self.level, "next_step": self.next_step,
            "validity": self.validity.to_json() if self.validity else None,
            "keep": self.keep.to_json() if self.keep else None, "record": self.record,
            "modes": dict(self.modes) or None}
        return compact(document)

    @property
    def payoff(self) -> FixPayoff | None:
        """The profile's fix this bench paid off or not (gates/bench/payoff.py); None when no
        profile waited for it, or the result is from before."""
        return FixPayoff.from_json(self.raw.get("payoff"))

    @cached_property
    def rows(self) -> tuple[BenchRow, ...]:
        return _rows(self.raw_rows)

    @property
    def valid(self) -> bool:
        """Measured on a quiet GPU (the validity verdict said so)."""
        return self.validity is not None and self.validity.valid

    @property
    def decidable(self) -> bool:
        """A measurement that counts: valid, or suspect of named configs alone (its headline is over
        the others, `left_out` says how many)."""
        return self.validity is not None and self.validity.decidable

    @property
    def left_out(self) -> tuple[str, ...]:
        """The configs its headline leaves out (those the validity verdict could not vouch for)."""
        return self.validity.suspect_configs if self.validity is not None else ()

    def headline(self) -> HeadlineFigure | None:
        """The speedup over the baseline, coloured by whether it counts (decidable) and by which
        side of 1.0 it is on, with what it asks of the engineer; None before it has one."""
        if self.speedup is None:
            return None
        tone: Literal["good", "bad", "warn"] = ("good" if self.speedup >= 1.0 else "bad") if self.decidable \
            else "warn"
        return HeadlineFigure(f"{self.speedup:.2f}x", self.baseline_label, tone,
                              class_words(self.level, self.interval), self.configs or None)

    def ran_on(self) -> str | None:
        return gpu_uuid(self.raw.get("gpu"))

    def left_out_words(self) -> str:
        """'6 configs left out: blocks never clean'; empty when none were (a headline read from
        the journal has the words, not the list)."""
        return self.validity.left_out_words() if self.validity is not None else ""

    def config_mhz(self, config: str) -> Mapping[str, float]:
        """Implementation -> the median SM clock of its blocks on this config (where measured)."""
        return self.validity.config_mhz.get(config, {}) if self.validity else {}

    def modes_words(self) -> str:
        """'forward 1.57x, backward 1.21x, full 1.30x': the modes side by side (empty when the
        bench timed the forward alone)."""
        return ", ".join(f"{mode} {speedup:.2f}x" for mode, speedup in self.modes.items())

    def label(self, impl: str) -> str:
        return self.labels.get(impl, impl)

    @property
    def ours_label(self) -> str:
        return self.label(self.ours)

    @property
    def baseline_label(self) -> str:
        return self.label(self.baseline)

    def vs_label(self, reference: str) -> str:
        """"vs torch.softmax"."""
        return f"vs {self.label(reference)}"

    @property
    def references(self) -> tuple[str, ...]:
        """Every timed reference: the baseline first, then in the order the bench declared them."""
        seen = [i for row in self.rows for i in row.impl] + list(self.vs)
        found = {i for i in seen if i not in self.candidates}
        found.discard(self.baseline)
        return (self.baseline, *sorted(found, key=self._order))

    @property
    def hardest(self) -> tuple[str, float] | None:
        """The timed reference ours does worst against, with its geometric mean."""
        return min(self.vs.items(), key=lambda item: item[1]) if self.vs else None

    def compared(self, limit: int) -> tuple[str, ...]:
        """At most `limit` references: the baseline, then of those with a geometric mean the
        ones ours does worst against; in the declared order (what a narrow table has room for)."""
        others = sorted((r for r in self.vs if r != self.baseline), key=lambda r: self.vs[r])
        chosen = [self.baseline, *others][:max(1, limit)]
        return tuple(sorted(chosen, key=lambda r: (r != self.baseline, self._order(r))))

    def shown(self, limit: int) -> tuple[str, ...]:
        """At most `limit` references to show times of: those `compared` picks, then the others
        in the declared order; the baseline first."""
        chosen = list(self.compared(limit))
        chosen += [r for r in self.references if r not in chosen][:max(0, limit - len(chosen))]
        return tuple(sorted(chosen, key=lambda r: (r != self.baseline, self._order(r))))

    @property
    def ours_ms(self) -> tuple[tuple[str, float], ...]:
        """Our median per config: what keep/revert and regressions compare."""
        return tuple((row.config, ms) for row in self.rows
                     if (ms := row.median_ms(self.ours)) is not None)

    def _order(self, impl: str) -> tuple[int, int]:
        declared = list(self.labels)
        if impl in declared:
            return 0, declared.index(impl)
        seen = list(dict.fromkeys(i for row in self.rows for i in row.impl))
        return 1, seen.index(impl) if impl in seen else len(seen)


def read_bench_result(result: object) -> BenchResult | None:
    """A bench gate's `gate_finished` result read, whichever schema wrote it; None when it is not
    one (not an object, a schema this cockpit does not know, nothing measured)."""
    if not isinstance(result, Mapping) or not any(k in result for k in BENCH_KEYS):
        return None
    return _read(obj(result))


def _read(result: JsonObject) -> BenchResult | None:
    schema = result.get("schema")
    if schema is None:  # before workloads: read as schema 2 once upgraded
        raw = objects(result.get("rows"))
        return _read_schema_2(before_workloads.bench_result(result, lambda ref: _raw_geomean(raw, ref)), 1)
    if schema == SCHEMA and not isinstance(schema, bool):
        return _read_schema_2(result)
    return None


def _read_schema_2(result: JsonObject, schema: int = SCHEMA) -> BenchResult | None:
    workload, baseline = text(result.get("workload")), text(result.get("baseline"))
    if workload is None or baseline is None:
        return None  # a schema 2 result always names both
    candidates = strings(result.get("candidates"))
    ours = text(result.get("ours")) or (candidates[0] if candidates else "ours")
    if ours not in candidates:
        candidates = (ours, *candidates)
    labels = {k: name for k, value in obj(result.get("labels")).items() if (name := text(value)) is not None}
    speedup = positive(result.get("geomean_speedup"))
    vs = {k: v for k, value in obj(result.get("vs")).items() if (v := positive(value)) is not None}
    if speedup is None:
        speedup = vs.get(baseline)
    elif baseline not in vs:
        vs[baseline] = speedup
    return _result(result, schema, workload, ours, candidates, baseline, labels, speedup,
                   whole(result.get("configs")), vs, source=text(result.get("source")))


def _raw_geomean(raw: tuple[JsonObject, ...], reference: str) -> tuple[float | None, int]:
    """The geometric mean of one speedup over the stored rows, without reading them whole (a
    report of 300 bench runs needs each one's headline, and the table of a few)."""
    key = SPEEDUP_PREFIX + reference
    values = [v for row in raw if isinstance(row.get("config"), str)
              and (v := positive(row.get(key))) is not None]
    return (geomean(values) if values else None), len(values)


def _result(result: JsonObject, schema: int, workload: str, ours: str,
            candidates: tuple[str, ...], baseline: str, labels: dict[str, str],
            speedup: float | None, configs: int | None,
            vs: dict[str, float], source: str | None = None) -> BenchResult:
    declared = list(labels)
    others = sorted((k for k in vs if k != baseline and k not in candidates),
                    key=lambda k: declared.index(k) if k in declared else len(declared))
    ordered = {k: vs[k] for k in ([baseline] if baseline in vs else []) + others}
    return BenchResult(
        schema=schema, workload=workload, ours=ours, candidates=candidates, baseline=baseline,
        labels=labels, raw_rows=objects(result.get("rows")), speedup=speedup, configs=configs,
        vs=ordered, level=text(result.get("level")), next_step=text(result.get("next_step")),
        device=text(result.get("device")), validity=BenchValidity.from_json(result.get("validity")),
        keep=KeepResult.from_json(before_workloads.keep(obj(result.get("keep")))), source=source,
        interval=pair(result.get("interval")), launch_bound=strings(result.get("launch_bound")),
        record=text(result.get("record")), modes=_modes(result.get("modes")), raw=result)


def _modes(value: object) -> dict[str, float]:
    """Mode -> speedup, in the order stored (a probe's list of mode names, or junk, reads as none)."""
    return {k: v for k, number in obj(value).items() if (v := positive(number)) is not None}


def _rows(value: tuple[JsonObject, ...]) -> tuple[BenchRow, ...]:
    rows = []
    for row in value:
        config = row.get("config")
        if not isinstance(config, str):
            continue
        impl = {k: t for k, entry in obj(row.get("impl")).items() if (t := _impl_time(entry)) is not None}
        speedups = {k[len(SPEEDUP_PREFIX):]: v for k, value in row.items()
                    if k.startswith(SPEEDUP_PREFIX) and k != SPEEDUP_PREFIX
                    and (v := positive(value)) is not None}
        rows.append(BenchRow(config, impl, speedups, positive(row.get("flops")), positive(row.get("bytes")),
                             text(row.get("mode")) or "forward"))
    return tuple(rows)


def _impl_time(entry: object) -> ImplTime | None:
    data = obj(entry)
    median = positive(data.get("median_ms"))
    if median is None:
        return None
    return ImplTime(median, as_number(data.get("p20_ms")), as_number(data.get("p80_ms")),
                    whole(data.get("samples")), as_number(data.get("tflops")),
                    as_number(data.get("gbps")), as_number(data.get("pct_peak")))
