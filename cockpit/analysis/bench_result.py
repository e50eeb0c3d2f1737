"""A bench gate's result as read back from a journal: the one reader for every version of it.

Schema 2 (the bench of any workload) names its workload, its candidates, the baseline the
speedup is stated against, a display label per implementation, and the geometric mean against
each timed reference that ran (`vs`). A result without a "schema" key is the attention bench's:
ours against PyTorch SDPA and its FLASH, cuDNN and EFFICIENT backends; it reads as the workload
"attention" with baseline "sdpa", so old journals say what they said before ("0.70x vs SDPA").

Journals may be old, hand-edited or torn: a value of the wrong type is left out and a row that is
not one is skipped; reading never raises.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from cockpit.analysis.keep import number
from cockpit.analysis.stats import geomean
from cockpit.telemetry.block_clocks import IMPL_NAMES

ATTENTION = "attention"
"""The workload of every result written before results named theirs."""
ATTENTION_LABELS = IMPL_NAMES
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

    def median_ms(self, impl: str) -> float | None:
        time = self.impl.get(impl)
        return time.median_ms if time is not None else None


@dataclass(frozen=True)
class BenchResult:
    """A bench run's result, whichever schema wrote it."""

    schema: int
    """1 (no "schema" key: the attention bench) or 2."""
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
    validity: Mapping[str, Any] | None = None
    keep: Mapping[str, Any] | None = None
    source: str | None = None
    raw_rows: Any = field(default=(), repr=False)
    """The result's rows as stored; `rows` reads them when first asked (a report of 300 bench
    runs needs the headline of each and the table of a few)."""

    @cached_property
    def rows(self) -> tuple[BenchRow, ...]:
        return _rows(self.raw_rows)

    @property
    def valid(self) -> bool:
        """Measured on a quiet GPU (the validity verdict said so)."""
        return self.validity is not None and self.validity.get("valid") is True

    def label(self, impl: str) -> str:
        return self.labels.get(impl, impl)

    @property
    def ours_label(self) -> str:
        return self.label(self.ours)

    @property
    def baseline_label(self) -> str:
        return self.label(self.baseline)

    def vs_label(self, reference: str) -> str:
        """"vs SDPA", "vs torch.softmax"."""
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
    one (not an object, a schema this cockpit does not know, nothing measured). The same result
    object is read once (a report and the gate board ask for each run several times)."""
    if not isinstance(result, Mapping) or not any(k in result for k in BENCH_KEYS):
        return None
    seen = _READ.get(id(result))
    if seen is not None and seen[0] is result:
        return seen[1]
    read = _read(result)
    if len(_READ) >= 4096:
        _READ.clear()
    _READ[id(result)] = (result, read)
    return read


_READ: dict[int, tuple[object, BenchResult | None]] = {}


def _read(result: Mapping[str, Any]) -> BenchResult | None:
    schema = result.get("schema")
    if schema is None:
        return _read_attention(result)
    if schema == 2 and not isinstance(schema, bool):
        return _read_schema_2(result)
    return None


def _read_schema_2(result: Mapping[str, Any]) -> BenchResult | None:
    workload, baseline = result.get("workload"), result.get("baseline")
    if not isinstance(workload, str) or not workload or not isinstance(baseline, str) or not baseline:
        return None  # a schema 2 result always names both
    candidates = _strings(result.get("candidates"))
    ours = result.get("ours")
    if not isinstance(ours, str) or not ours:
        ours = candidates[0] if candidates else "ours"
    if ours not in candidates:
        candidates = (ours, *candidates)
    labels = {k: v for k, v in _dict(result.get("labels")).items()
              if isinstance(k, str) and isinstance(v, str) and v}
    rows = result.get("rows")
    speedup = _positive(result.get("geomean_speedup"))
    stored = _dict(result.get("vs"))
    vs = {k: v for k, value in stored.items()
          if isinstance(k, str) and (v := _positive(value)) is not None}
    if speedup is None:
        speedup = vs.get(baseline)
    elif baseline not in vs:
        vs[baseline] = speedup
    configs = number(result.get("configs"))
    return _result(result, 2, workload, ours, candidates, baseline, labels, rows, speedup,
                   int(configs) if configs is not None else None, vs,
                   source=result["source"] if isinstance(result.get("source"), str) else None)


def _read_attention(result: Mapping[str, Any]) -> BenchResult:
    """A result from before the schema: the attention bench, against SDPA and its FLASH backend."""
    raw = result.get("rows")
    speedup = _positive(result.get("geomean_speedup"))
    vs: dict[str, float] = {"sdpa": speedup} if speedup is not None else {}
    flash = _positive(result.get("geomean_vs_flash"))
    if flash is None:  # journals from before the gate stored it: read from the rows
        flash = _raw_geomean(raw, "flash")[0]
    if flash is not None:
        vs["flash"] = flash
    return _result(result, 1, ATTENTION, "ours", ("ours",), "sdpa", dict(ATTENTION_LABELS), raw,
                   speedup, _raw_geomean(raw, "sdpa")[1] if speedup is not None else None, vs)


def _raw_geomean(raw: Any, reference: str) -> tuple[float | None, int]:
    """`_rows_geomean` of the stored rows, without reading them whole (a report of 300 bench runs
    needs each one's headline, and the table of a few)."""
    key = SPEEDUP_PREFIX + reference
    values = [v for row in (raw if isinstance(raw, list) else [])
              if isinstance(row, Mapping) and isinstance(row.get("config"), str)
              and (v := _positive(row.get(key))) is not None]
    return (geomean(values) if values else None), len(values)


def _result(result: Mapping[str, Any], schema: int, workload: str, ours: str,
            candidates: tuple[str, ...], baseline: str, labels: dict[str, str],
            raw_rows: Any, speedup: float | None, configs: int | None,
            vs: dict[str, float], source: str | None = None) -> BenchResult:
    declared = list(labels)
    others = sorted((k for k in vs if k != baseline and k not in candidates),
                    key=lambda k: declared.index(k) if k in declared else len(declared))
    ordered = {k: vs[k] for k in ([baseline] if baseline in vs else []) + others}
    validity, keep = result.get("validity"), result.get("keep")
    return BenchResult(
        schema=schema, workload=workload, ours=ours, candidates=candidates, baseline=baseline,
        labels=labels, raw_rows=raw_rows, speedup=speedup, configs=configs, vs=ordered,
        level=_text(result.get("level")), next_step=_text(result.get("next_step")),
        device=_text(result.get("device")),
        validity=validity if isinstance(validity, Mapping) else None,
        keep=keep if isinstance(keep, Mapping) else None, source=source)


def _rows(value: Any) -> tuple[BenchRow, ...]:
    rows = []
    for row in value if isinstance(value, list) else []:
        if not isinstance(row, Mapping) or not isinstance(row.get("config"), str):
            continue
        impl = {k: t for k, entry in _dict(row.get("impl")).items()
                if isinstance(k, str) and (t := _impl_time(entry)) is not None}
        speedups = {k[len(SPEEDUP_PREFIX):]: v for k, value in row.items()
                    if isinstance(k, str) and k.startswith(SPEEDUP_PREFIX)
                    and k != SPEEDUP_PREFIX and (v := _positive(value)) is not None}
        rows.append(BenchRow(row["config"], impl, speedups, _positive(row.get("flops")),
                             _positive(row.get("bytes"))))
    return tuple(rows)


def _impl_time(entry: Any) -> ImplTime | None:
    if not isinstance(entry, Mapping):
        return None
    median = _positive(entry.get("median_ms"))
    if median is None:
        return None
    samples = number(entry.get("samples"))
    return ImplTime(median, number(entry.get("p20_ms")), number(entry.get("p80_ms")),
                    int(samples) if samples is not None else None, number(entry.get("tflops")),
                    number(entry.get("gbps")), number(entry.get("pct_peak")))


def _rows_geomean(rows: Sequence[BenchRow], reference: str) -> tuple[float | None, int]:
    """The geometric mean of the rows' speedups over one reference, and over how many configs."""
    values = [row.speedups[reference] for row in rows if reference in row.speedups]
    return (geomean(values) if values else None), len(values)


def _positive(value: Any) -> float | None:
    found = number(value)
    return found if found is not None and found > 0 else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else []
    return tuple(dict.fromkeys(v for v in items if isinstance(v, str) and v))
