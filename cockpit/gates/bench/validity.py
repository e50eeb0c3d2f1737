"""The bench's validity verdict, as journaled: were ours and the baseline measured under the same
clean conditions (gates/bench/validity_rules.py judges it from the probe's NVML samples).

Version 1: `valid`, `checked`, the `verdict` word ("comparable", "valid", "suspect",
"unwatched"), the `mode`, `reasons` (why suspect), `notes` (seen, not suspect), a `hint`, the
`power_cap` share of the window, the median SM clock per implementation (`clocks`) and per config
(`config_clocks`), the clock `comparisons`, the GPU, the baseline and its label, and the window's
`evidence`. Verdicts recorded before the redesign lack most of these and read all the same.
A verdict on a probe that judged each timed block itself (issue 32) adds the blocks it
re-measured (`remeasured`, `remeasured_why`), the configs re-measuring could not vouch for
(`suspect_configs`, with `suspect_why` in a few words) and whether they are all it is suspect of
(`configs_only`): verdicts without these read as suspect for the whole window, as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from cockpit import before_workloads
from cockpit.json_fields import (
    JsonObject,
    as_number,
    compact,
    numbers,
    obj,
    objects,
    strings,
    text,
    texts,
    whole,
)
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
    remeasured: int = 0
    """Timed blocks the probe dropped and timed again (the card slowed while they ran)."""
    remeasured_why: Mapping[str, int] = field(default_factory=dict)
    """Why, as counts: {"SW thermal slowdown": 9, "SM clock dip": 3}."""
    suspect_configs: tuple[str, ...] = ()
    """Configs whose numbers re-measuring could not vouch for (blocks never clean, a foreign
    process over their blocks), in the bench's order."""
    suspect_why: tuple[str, ...] = ()
    """What left them out, a few words each: "blocks never clean"."""
    configs_only: bool = False
    """Suspect of `suspect_configs` alone (some, not all), nothing window-wide: the other configs
    decide."""
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """What this type does not model, written back whole: the GPU, each implementation's clock
    record, the clock comparisons (the verdict as journaled, when read)."""

    @classmethod
    def from_json(cls, value: object) -> BenchValidity | None:
        """None when `value` is not a verdict (no `valid` flag). One from before workloads names
        its baseline once read (cockpit/before_workloads.py)."""
        data = before_workloads.validity(obj(value))
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
                   whole(data.get("remeasured")) or 0,
                   {k: n for k, v in obj(data.get("remeasured_why")).items() if (n := whole(v)) is not None},
                   strings(data.get("suspect_configs")), texts(data.get("suspect_why")),
                   data.get("configs_only") is True, data)

    @property
    def decidable(self) -> bool:
        """Keep/revert and the headline may decide on it: valid, or suspect only of named configs
        (left out, the reason stated)."""
        return self.valid or self.configs_only

    def clocks_apart(self, baseline: str) -> bool:
        """Ours and `baseline` ran at materially different SM clocks (the clock comparison said so)."""
        return any(c.get("baseline") == baseline and c.get("material") is True
                   for c in objects(self.raw.get("comparisons")))

    def left_out_words(self) -> str:
        """'6 configs left out: blocks never clean'; empty when none were. Read from the journal's
        headline too, which keeps the line but not the list."""
        n = len(self.suspect_configs)
        if not n:
            return text(self.raw.get("left_out")) or ""
        return f"{n} config{'s' if n != 1 else ''} left out: {', '.join(self.suspect_why) or 'suspect'}"

    def to_json(self) -> dict[str, object]:
        """The verdict as journaled: what it was read from (or built with), with the fields this type
        models."""
        cap = compact({"seconds": self.power_cap_s, "fraction": self.power_cap_fraction})
        return {**self.raw, **compact({
            "valid": self.valid, "verdict": self.verdict, "checked": self.checked, "mode": self.mode,
            "reasons": list(self.reasons), "notes": list(self.notes), "hint": self.hint,
            "power_cap": cap or None, "baseline": self.baseline, "baseline_label": self.baseline_label,
            "config_clocks": {c: dict(m) for c, m in self.config_mhz.items()} or None,
            "evidence": self.evidence.to_json() if self.evidence is not None else None,
            "remeasured": self.remeasured or None, "remeasured_why": dict(self.remeasured_why) or None,
            "suspect_configs": list(self.suspect_configs) or None,
            "suspect_why": list(self.suspect_why) or None, "configs_only": self.configs_only or None,
            "left_out": self.left_out_words() or None})}

    def words(self) -> str:
        """The verdict in the bench summary: 'comparable (power cap 32 % of the window; SM clock
        ours 1950, torch.softmax 1935 MHz)', or 'SUSPECT: …'. Reads verdicts recorded before the redesign."""
        if self.decidable and not self.valid:
            n = len(self.suspect_configs)
            return (f"SUSPECT at {n} config{'s' if n != 1 else ''} (left out; the rest decide): "
                    + "; ".join(self.reasons))
        if not self.valid:
            return "SUSPECT: " + "; ".join(self.reasons)
        shown = []
        if self.power_cap_fraction is not None:
            shown.append(f"power cap {self.power_cap_fraction:.0%} of the window")
        baseline = self.baseline or ""
        named = [(name, self.impl_mhz[impl]) for impl, name in
                 (("ours", "ours"), (baseline, self.baseline_label or baseline)) if impl in self.impl_mhz]
        if named:
            shown.append("SM clock " + ", ".join(f"{name} {mhz:.0f}" for name, mhz in named) + " MHz")
        if self.remeasured:
            shown.append(self.remeasured_line())
        return (self.verdict or "valid") + (f" ({'; '.join(shown)})" if shown else "")

    def remeasured_line(self) -> str:
        return remeasured_words(self.remeasured, self.remeasured_why)


def remeasured_words(blocks: int, why: Mapping[str, int]) -> str:
    """'12 blocks re-measured: SW thermal slowdown 9, SM clock dip 3' (most frequent first)."""
    said = ", ".join(f"{word} {count}" for word, count in sorted(why.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{blocks} block{'' if blocks == 1 else 's'} re-measured" + (f": {said}" if said else "")
