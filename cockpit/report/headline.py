"""What a session came to, in the words REPORT.md, report.html and PR.md open with, in the order a
reviewer asks: the result (the headline speedup with its interval, against the baseline), whether
the kernel is correct and clean under the sanitizer, whether the bench is valid, the last
keep/revert decision (against what, and the change in words), what the profile's one fix realized;
then the profile's one fix."""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.gates.bench.view import keep_label
from cockpit.gates.catalog import measures
from cockpit.report.decision_line import decision_line
from cockpit.report.model import CheckRun, GateReport, Report

NOT_RUN = "not run in this session"


@dataclass(frozen=True)
class Headline:
    number: str
    """"0.77x [0.76, 0.78] vs SDPA", or "no valid benchmark"."""
    valid: bool
    """A valid run stands behind `number`."""
    text: str
    """The outcome's sentence (every reference, the run)."""
    verdict: str | None
    """The bench's validity verdict, its first word and what it says of the configs ("SUSPECT (6
    configs left out: ...)"); None without a bench."""
    note: str | None
    """Its conditions ("comparable (power cap 36% of the window; ...)"), why it is suspect, or its
    note; None when it says nothing."""
    decision: str | None
    """"KEEP: 1.20x [1.18, 1.20] vs ...; done, commit abc123"; None when no decision was taken."""
    profile: str | None
    """The last passing profile's verdict."""
    fix: str | None
    """Its one fix."""
    correctness: str = NOT_RUN
    """The last correctness run in words, with its run ("..., run 007-correctness")."""
    sanitizer: str = NOT_RUN
    realized: str = "no profile in this session"
    """The profile's fix against what the bench after it realized (gates/bench/payoff.py), with
    what changed; or what is missing."""

    @property
    def validity(self) -> str | None:
        """The verdict with its conditions ("VALID: comparable (...)"); None without a bench."""
        if self.verdict is None:
            return None
        return self.verdict + (f": {self.note}" if self.note else "")

    def opening(self) -> tuple[tuple[str, str], ...]:
        """The lines every report opens with, in the order a reviewer asks: (label, words)."""
        return (("Result", self.text), ("Correctness", self.correctness), ("Sanitizer", self.sanitizer),
                ("Validity", self.validity or "no bench in this session"),
                ("Decision", self.decision or "no keep/revert decision was taken in this session"),
                ("Fix realized", self.realized))


def headline(report: Report) -> Headline:
    o = report.outcome
    spread = f" [{o.interval[0]:.2f}, {o.interval[1]:.2f}]" if o.interval else ""
    number = (f"{o.best_speedup:.2f}x{spread} vs {o.baseline}" if o.best_speedup is not None and o.baseline
              else "no valid benchmark")
    verdict, note = _bench_validity(_judged_bench(report))
    return Headline(number, o.best_speedup is not None, o.text, verdict, note,
                    decision_line(report.decisions[-1], report.decision_words) if report.decisions
                    else _bench_verdict(report),
                    *_profile_finding(report), _check(report.correctness), _check(report.sanitizer),
                    _realized(report))


def _judged_bench(report: Report) -> GateReport | None:
    """The bench the outcome stands on; without a valid one, the last bench (its verdict says why)."""
    best = next((g for g in report.gates if g.run_id == report.outcome.run_id), None)
    return best or next((g for g in reversed(report.gates) if measures(g.gate)), None)


def _bench_validity(bench: GateReport | None) -> tuple[str | None, str | None]:
    """A bench's validity verdict and what it says: the conditions of a valid one, the reasons of
    a suspect one, else its note; neither without a bench."""
    if bench is None:
        return None, None
    reasons = "; ".join(f.value for f in bench.facts if f.label == "why suspect")
    return (fact(bench, "validity") or ("VALID" if bench.valid else "SUSPECT"),
            fact(bench, "conditions") or reasons or fact(bench, "note"))


def _bench_verdict(report: Report) -> str | None:
    """Where no answer was journaled (the bench ran from the command line, or the dialog was left
    unanswered): the last bench's own keep or revert verdict, said as the bench's, not as done."""
    for gate in reversed([g for g in report.gates if measures(g.gate)]):
        said = next((f.value for f in gate.facts if f.label in _VERDICTS), None)
        if said is not None:
            return f"{said} (the verdict of run {gate.run_id}; no keep or revert answer was journaled)"
    return None


_VERDICTS = (keep_label("keep"), keep_label("revert"))
"""The bench pane's labels of a verdict that decides."""


def _check(run: CheckRun | None) -> str:
    return f"{run.text} (run {run.run_id})" if run is not None else NOT_RUN


def _profile_finding(report: Report) -> tuple[str | None, str | None]:
    """The last passing profile's bottleneck verdict and its one fix; neither without one."""
    profile = next((g for g in reversed(report.gates) if g.gate == "profile" and g.status == "pass"), None)
    if profile is None:
        return None, None
    return fact(profile, "verdict") or profile.summary, fact(profile, "the one fix")


def _realized(report: Report) -> str:
    """The last bench that paid a profile's fix off, in its pane's words with what changed; else
    what is missing: no profile, or no bench that kept or reverted after it."""
    for gate in reversed(report.gates):
        paid = fact(gate, "the profile's fix") if measures(gate.gate) else None
        if paid is not None:
            changed = fact(gate, "changed since it")
            return f"{paid} (run {gate.run_id}" + (f"; changed: {changed})" if changed else ")")
        if gate.gate == "profile" and gate.status == "pass":
            return "the profile's fix has no bench that kept or reverted after it in this session"
    return "no profile in this session"


def fact(gate: GateReport, label: str) -> str | None:
    return next((f.value for f in gate.facts if f.label == label), None)
