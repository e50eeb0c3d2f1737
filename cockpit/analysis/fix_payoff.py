"""Predicted against realized: the profile's one fix joined with what the next kept or reverted
bench of the same workload realized, so the loop learns whether the fixes it names pay.

The prediction is what the profile gate said (analysis/one_fix.py): ncu's rule and its estimate
with the estimate's scope ("of the whole kernel", or "of the part it measured", which bounds the
kernel's gain less tightly), or the decision tree's fix, for which ncu gave no number. ncu's
estimate is a share of the time it expects saved; the realized gain is said the same way beside
the speedup (1.20x is 16.7 % less time), never converted into ncu's words the other way.

Pure: gates/bench/payoff.py gathers the profile, the decision, what changed and the notes; the
bench pane, REPORT.md/PR.md, `cockpit history` and the pattern library read `FixPayoff`.
Version 1."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from cockpit.json_fields import as_number, obj, pair, text, texts, whole

_ESTIMATE = re.compile(r"^(?P<rule>[^:]+): .*\((?P<pct>[0-9.eE+-]+) % est\., "
                       r"(?P<scope>of the whole kernel|of the part it measured)\)$")
"""A fix as analysis/ncu_rules.RuleResult.line() writes one of ncu's estimates."""


@dataclass(frozen=True)
class Predicted:
    """The profile's one fix as the bench after it is held to."""

    line: str
    """The fix, as every surface printed it."""
    profile_run: str
    """`<session>/<run>` of the profile that named it."""
    rule: str | None = None
    """ncu's rule; None when the decision tree chose the fix (ncu estimated nothing that applied)."""
    estimate_pct: float | None = None
    scope: str | None = None

    @classmethod
    def of_fix(cls, line: str, estimates: Sequence[str], profile_run: str) -> Predicted:
        """The fix a profile's kernel verdict names: ncu's estimate when the fix is its first one."""
        found = _ESTIMATE.match(line) if estimates and estimates[0] == line else None
        if found is None:
            return cls(line, profile_run)
        return cls(line, profile_run, found["rule"].strip(), float(found["pct"]), found["scope"])

    def words(self) -> str:
        if self.rule is None:
            return f"the profile's fix (the decision tree's; ncu estimated nothing for it): {self.line}"
        if self.estimate_pct is None:
            return f"ncu's fix {self.rule} (no estimate)"
        return f"ncu estimated {self.estimate_pct:.3g} % for {self.rule} ({self.scope})"


@dataclass(frozen=True)
class FixPayoff:
    """One profile's fix and what the next decided bench of its workload realized."""

    SCHEMA: ClassVar[int] = 1

    predicted: Predicted
    bench_run: str
    action: str
    """"keep" or "revert": the decision the bench made."""
    realized: tuple[float, float, float] | None
    """Speedup over the bench it was compared with, and its interval; None when the two share no
    config timed with an interval."""
    configs: int = 0
    against: str | None = None
    """`<session>/<run>` of the bench it was compared with."""
    changed: str | None = None
    """What changed between the profile and the bench (commits, diff stat); None: not recorded."""
    notes: tuple[str, ...] = ()
    """What the engineer wrote in the session between the two."""

    def line(self) -> str:
        """"ncu estimated 47.7 % for TheoreticalOccupancy (of the whole kernel); this change
        realized 1.20x [1.18, 1.20] (16.7 % less time), KEEP"."""
        return f"{self.predicted.words()}; this change {self.realized_words()}, {self.action.upper()}"

    def changed_words(self) -> str:
        """What changed between the profile and the bench, and what the engineer wrote; what is
        missing said as missing."""
        changed = self.changed or ("not recorded (no commit for both runs: no git checkout, or a profile "
                                   "from before)")
        return changed + (f"; noted: {' / '.join(self.notes)}" if self.notes else "")

    def realized_words(self) -> str:
        if self.realized is None:
            return "realized nothing measurable: no config both benches timed with an interval"
        mid, lo, hi = self.realized
        saved = 100.0 * (1.0 - 1.0 / mid) if mid > 0 else 0.0
        how = f"{saved:.1f} % less time" if saved >= 0 else f"{-saved:.1f} % more time"
        return f"realized {mid:.2f}x [{lo:.2f}, {hi:.2f}] ({how})"

    def to_json(self) -> dict[str, object]:
        p = self.predicted
        return {"schema": self.SCHEMA, "fix": p.line, "profile_run": p.profile_run, "rule": p.rule,
                "estimate_pct": p.estimate_pct, "scope": p.scope, "bench_run": self.bench_run,
                "action": self.action, **_realized_keys(self.realized),
                "configs": self.configs, "against": self.against, "changed": self.changed,
                "notes": list(self.notes)}

    @classmethod
    def from_json(cls, value: object) -> FixPayoff | None:
        """None when `value` is not one (a result from before, another version, torn). Its journal
        headline (session/results.py: short texts and numbers only) may have lost a long fix line
        and its notes: the rule then stands for the line."""
        data = obj(value)
        line = text(data.get("fix")) or text(data.get("rule"))
        run, bench = text(data.get("profile_run")), text(data.get("bench_run"))
        action = text(data.get("action"))
        if whole(data.get("schema")) != cls.SCHEMA or not line or not run or not bench or not action:
            return None
        predicted = Predicted(line, run, text(data.get("rule")), as_number(data.get("estimate_pct")),
                              text(data.get("scope")))
        realized = _triple([data.get("realized"), data.get("realized_lo"), data.get("realized_hi")])
        return cls(predicted, bench, action, realized, whole(data.get("configs")) or 0,
                   text(data.get("against")), text(data.get("changed")), texts(data.get("notes")))


def _realized_keys(realized: tuple[float, float, float] | None) -> dict[str, float | None]:
    """Three numbers, not a list: a journal's headline keeps numbers, and history reads that."""
    mid, lo, hi = realized if realized is not None else (None, None, None)
    return {"realized": mid, "realized_lo": lo, "realized_hi": hi}


def _triple(values: list[object]) -> tuple[float, float, float] | None:
    mid, ends = as_number(values[0]), pair(values[1:])
    return (mid, *ends) if mid is not None and ends is not None else None


@dataclass(frozen=True)
class RulePaid:
    """How one fix rule paid across the payoffs that name it."""

    rule: str
    applied: int
    kept: int
    median: float | None
    """The median realized speedup over the ones measured; None when none was."""

    def words(self) -> str:
        median = f", realized median {self.median:.2f}x" if self.median is not None else ""
        return f"applied {self.applied} time{'s' if self.applied != 1 else ''}, kept {self.kept}{median}"


def paid_by_rule(payoffs: Iterable[FixPayoff]) -> dict[str, RulePaid]:
    """Each ncu rule (or, for the decision tree's fixes, the fix's own words) with how often it was
    applied and what it realized."""
    by: dict[str, list[FixPayoff]] = {}
    for p in payoffs:
        by.setdefault(p.predicted.rule or p.predicted.line, []).append(p)
    found = {}
    for rule, ps in by.items():
        measured = [p.realized[0] for p in ps if p.realized is not None]
        found[rule] = RulePaid(rule, len(ps), sum(p.action == "keep" for p in ps),
                               statistics.median(measured) if measured else None)
    return found
