"""The profile gate's result: Nsight Compute's bottleneck verdict per kernel and the ONE fix.

Version 1: the `kernels` ncu profiled (name, id, grid, block, `verdict`: bottleneck, headline,
evidence, recommendation, confidence and why, notes), the `report` and `csv` it wrote, the
`clock_note` (locked or free clocks), the `shape` profiled and our bench time for it
(`bench_ms`), and, when nothing matched the kernel regex, the `kernels_seen`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from cockpit.analysis.roofline import Roofline
from cockpit.gates.result import HeadlineFigure, gpu_uuid
from cockpit.json_fields import (
    JsonObject,
    as_number,
    compact,
    items,
    obj,
    objects,
    strings,
    text,
    texts,
    whole,
)

COMPUTE = ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "compute")
MEMORY = ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory")
"""The evidence names of the compute and memory share of peak (ncu's, then the verdict's own)."""


@dataclass(frozen=True)
class KernelVerdict:
    bottleneck: str
    headline: str
    recommendation: str
    confidence: str
    confidence_reason: str = ""
    notes: tuple[str, ...] = ()
    evidence: Mapping[str, float] = field(default_factory=dict)
    """Metric -> the value the verdict leaned on (% of peak, counts)."""
    units: Mapping[str, str] = field(default_factory=dict)
    """Metric -> its unit, as ncu wrote it."""
    estimates: tuple[str, ...] = ()
    """ncu's rule results that apply, best estimate first, each as one line; the first is the fix
    when there are any (empty: the decision tree chose it)."""
    tree_fix: str | None = None
    """What the decision tree alone would have said, when ncu's estimate chose another fix."""

    def to_json(self) -> dict[str, object]:
        return {"bottleneck": self.bottleneck, "headline": self.headline,
                "evidence": {n: {"value": v, "unit": self.units.get(n, "")}
                             for n, v in self.evidence.items()},
                "recommendation": self.recommendation, "confidence": self.confidence,
                "confidence_reason": self.confidence_reason, "notes": list(self.notes),
                **compact({"estimates": list(self.estimates) or None, "tree_fix": self.tree_fix})}

    def percent(self, names: tuple[str, ...]) -> float | None:
        """The first of `names` the evidence holds."""
        return next((self.evidence[n] for n in names if n in self.evidence), None)


@dataclass(frozen=True)
class ProfiledKernel:
    name: str
    verdict: KernelVerdict
    kernel: str | None = None
    """The demangled name where the probe recorded one."""
    id: int | None = None
    """ncu's launch id."""
    grid: tuple[int, ...] = ()
    block: tuple[int, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "id": self.id, "grid": list(self.grid), "block": list(self.block),
                "verdict": self.verdict.to_json(), **compact({"kernel": self.kernel})}


@dataclass(frozen=True)
class ProfileResult:
    SCHEMA: ClassVar[int] = 1

    kernels: tuple[ProfiledKernel, ...] = ()
    report: str | None = None
    csv: str | None = None
    clock_note: str | None = None
    shape: str | None = None
    bench_ms: float | None = None
    kernels_seen: tuple[str, ...] = ()
    roofline: Roofline | None = None
    """The kernel on the card's roofline at the bench's time for this shape (none without a bench
    of it this session, or without the workload's counts)."""
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, value: object) -> ProfileResult:
        data = obj(value)
        kernels = tuple(ProfiledKernel(text(k.get("name")) or "", _verdict(obj(k.get("verdict"))),
                                       text(k.get("kernel")), whole(k.get("id")), _ints(k.get("grid")),
                                       _ints(k.get("block"))) for k in objects(data.get("kernels")))
        return cls(kernels, text(data.get("report")), text(data.get("csv")), text(data.get("clock_note")),
                   text(data.get("shape")), as_number(data.get("bench_ms")),
                   strings(data.get("kernels_seen")), _roofline(obj(data.get("roofline"))),
                   data)

    def headline(self) -> HeadlineFigure | None:
        """None: the gate pane leads with the summary (only a bench has a number to lead with)."""
        return None

    def ran_on(self) -> str | None:
        return gpu_uuid(self.raw.get("gpu"))

    def to_json(self) -> dict[str, object]:
        """The result as the profile gate writes it: where ncu's report is, and the verdict on each
        kernel it profiled (or the kernels it saw when none matched)."""
        return {**self.raw, "report": self.report, "csv": self.csv, "clock_note": self.clock_note,
                **compact({"shape": self.shape, "bench_ms": self.bench_ms,
                           "kernels": [k.to_json() for k in self.kernels] or None,
                           "kernels_seen": list(self.kernels_seen) or None,
                           "roofline": self.roofline.as_json() if self.roofline else None})}


def _roofline(data: JsonObject) -> Roofline | None:
    """A recorded roofline (every number there), else None."""
    keys = ("intensity", "ridge", "gbps", "tflops", "pct_memory", "pct_compute", "ms", "peak_tflops",
            "peak_gbps")
    numbers = [n for k in keys if (n := as_number(data.get(k))) is not None]
    if len(numbers) != len(keys):
        return None
    i, ridge, gbps, tflops, pct_m, pct_c, ms, peak_t, peak_g = numbers
    return Roofline(i, ridge, gbps, tflops, pct_m, pct_c, ms, peak_t, peak_g, text(data.get("dtype")))


def _verdict(v: JsonObject) -> KernelVerdict:
    evidence = {name: value for name, m in obj(v.get("evidence")).items()
                if (value := as_number(obj(m).get("value"))) is not None}
    units = {name: unit for name, m in obj(v.get("evidence")).items() if (unit := text(obj(m).get("unit")))}
    return KernelVerdict(text(v.get("bottleneck")) or "?", text(v.get("headline")) or "",
                         text(v.get("recommendation")) or "", text(v.get("confidence")) or "?",
                         text(v.get("confidence_reason")) or "", texts(v.get("notes")), evidence, units,
                         texts(v.get("estimates")), text(v.get("tree_fix")))


def _ints(value: object) -> tuple[int, ...]:
    return tuple(n for v in items(value) if (n := whole(v)) is not None)
