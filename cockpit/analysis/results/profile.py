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

from cockpit.analysis.results.fields import JsonObject, number, obj, objects, strings, text, texts

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

    def percent(self, names: tuple[str, ...]) -> float | None:
        """The first of `names` the evidence holds."""
        return next((self.evidence[n] for n in names if n in self.evidence), None)


@dataclass(frozen=True)
class ProfiledKernel:
    name: str
    verdict: KernelVerdict
    kernel: str | None = None
    """The demangled name where the probe recorded one."""


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
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, value: object) -> ProfileResult:
        data = obj(value)
        kernels = tuple(ProfiledKernel(text(k.get("name")) or "", _verdict(obj(k.get("verdict"))),
                                       text(k.get("kernel"))) for k in objects(data.get("kernels")))
        return cls(kernels, text(data.get("report")), text(data.get("csv")), text(data.get("clock_note")),
                   text(data.get("shape")), number(data.get("bench_ms")), strings(data.get("kernels_seen")),
                   data)

    def to_json(self) -> dict[str, object]:
        """The result as the profile gate wrote it (this type reads it; it does not rewrite it)."""
        return dict(self.raw)


def _verdict(v: JsonObject) -> KernelVerdict:
    evidence = {name: value for name, m in obj(v.get("evidence")).items()
                if (value := number(obj(m).get("value"))) is not None}
    return KernelVerdict(text(v.get("bottleneck")) or "?", text(v.get("headline")) or "",
                         text(v.get("recommendation")) or "", text(v.get("confidence")) or "?",
                         text(v.get("confidence_reason")) or "", texts(v.get("notes")), evidence)
