"""The bench's validity verdict, as journaled: were ours and the baseline measured under the same
clean conditions (gates/bench_validity.py judges it from the probe's NVML samples).

Version 1: `valid`, `checked`, the `verdict` word ("comparable", "valid", "suspect",
"unwatched"), the `mode`, `reasons` (why suspect), `notes` (seen, not suspect), a `hint`, the
`power_cap` share of the window, the median SM clock per implementation (`clocks`) and per config
(`config_clocks`), the clock `comparisons`, the GPU, the baseline and its label, and the window's
`evidence`. Verdicts recorded before the redesign lack most of these and read all the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from cockpit import before_workloads
from cockpit.json_fields import JsonObject, as_number, compact, numbers, obj, text, texts
from cockpit.telemetry.window_evidence import WindowEvidence


@dataclass(frozen=True)
class BenchValidity:
    """Comparable, valid, suspect or unwatched, and why."""

    SCHEMA: ClassVar[int] = 1

    valid: bool
    verdict: str | None = None
    checked: bool | None = None
    mode: str | None = None
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    hint: str | None = None
    power_cap_fraction: float | None = None
    power_cap_s: float | None = None
    impl_mhz: Mapping[str, float] = field(default_factory=dict)
    """Implementation -> the median SM clock of its timed blocks."""
    config_mhz: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Config -> implementation -> the median SM clock of its blocks there."""
    baseline: str | None = None
    baseline_label: str | None = None
    evidence: WindowEvidence | None = None
    """What the watch saw (none when the GPU was not watched)."""
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """What this type does not model, written back whole: the GPU, each implementation's clock
    record, the clock comparisons (the verdict as journaled, when read)."""

    @classmethod
    def from_json(cls, value: object) -> BenchValidity | None:
        """None when `value` is not a verdict (no `valid` flag)."""
        data = obj(value)
        if not isinstance(data.get("valid"), bool):
            return None
        cap = obj(data.get("power_cap"))
        impl = {k: mhz for k, c in obj(data.get("clocks")).items()
                if (mhz := as_number(obj(c).get("median_mhz"))) is not None}
        config = {k: numbers(v) for k, v in obj(data.get("config_clocks")).items()}
        checked = data.get("checked")
        evidence = data.get("evidence")
        return cls(data["valid"] is True, text(data.get("verdict")),
                   checked if isinstance(checked, bool) else None, text(data.get("mode")),
                   texts(data.get("reasons")), texts(data.get("notes")), text(data.get("hint")),
                   as_number(cap.get("fraction")), as_number(cap.get("seconds")), impl, config,
                   text(data.get("baseline")), text(data.get("baseline_label")),
                   WindowEvidence.from_json(evidence) if isinstance(evidence, Mapping) and evidence else None,
                   data)

    def to_json(self) -> dict[str, object]:
        """The verdict as journaled: what it was read from (or built with), with the fields this type
        models."""
        cap = compact({"seconds": self.power_cap_s, "fraction": self.power_cap_fraction})
        return {**self.raw, **compact({
            "valid": self.valid, "verdict": self.verdict, "checked": self.checked, "mode": self.mode,
            "reasons": list(self.reasons), "notes": list(self.notes), "hint": self.hint,
            "power_cap": cap or None, "baseline": self.baseline, "baseline_label": self.baseline_label,
            "config_clocks": {c: dict(m) for c, m in self.config_mhz.items()} or None,
            "evidence": self.evidence.to_json() if self.evidence is not None else None})}

    def words(self) -> str:
        """The verdict in the bench summary: 'comparable (power cap 32 % of the window; SM clock
        ours 1950, torch.softmax 1935 MHz)', or 'SUSPECT: …'. Reads verdicts recorded before the redesign."""
        if not self.valid:
            return "SUSPECT: " + "; ".join(self.reasons)
        shown = []
        if self.power_cap_fraction is not None:
            shown.append(f"power cap {self.power_cap_fraction:.0%} of the window")
        baseline = self.baseline or before_workloads.BASELINE
        label = self.baseline_label or before_workloads.LABELS.get(baseline, baseline)
        named = [(name, self.impl_mhz[impl]) for impl, name in (("ours", "ours"), (baseline, label))
                 if impl in self.impl_mhz]
        if named:
            shown.append("SM clock " + ", ".join(f"{name} {mhz:.0f}" for name, mhz in named) + " MHz")
        return (self.verdict or "valid") + (f" ({'; '.join(shown)})" if shown else "")
