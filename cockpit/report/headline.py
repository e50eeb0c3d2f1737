"""What a session came to, in the words REPORT.md, report.html and PR.md open with: the headline
speedup against the baseline and whether the run it comes from is valid, the last keep/revert
decision, and the profile's one fix."""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.report.model import GateReport, Report


@dataclass(frozen=True)
class Headline:
    number: str
    """"0.77x vs SDPA", or "no valid benchmark"."""
    valid: bool
    """A valid run stands behind `number`."""
    text: str
    """The outcome's sentence (every reference, the run)."""
    verdict: str | None
    """The run's validity verdict, its first word and what it says of the configs ("SUSPECT (6
    configs left out: ...)"); None without a bench."""
    note: str | None
    """Why it is suspect, or the bench's note; None when it says nothing."""
    decision: str | None
    """"KEEP: ... (done, commit abc123)"; None when no decision was taken."""
    profile: str | None
    """The last passing profile's verdict."""
    fix: str | None
    """Its one fix."""

    @property
    def validity(self) -> str | None:
        """The verdict with its note ("VALID: GPU 0 ..."); None without a bench."""
        if self.verdict is None:
            return None
        return self.verdict + (f": {self.note}" if self.note else "")


def headline(report: Report) -> Headline:
    o = report.outcome
    number = (f"{o.best_speedup:.2f}x vs {o.baseline}" if o.best_speedup is not None and o.baseline
              else "no valid benchmark")
    bench = next((g for g in report.gates if g.run_id == o.run_id), None)
    verdict, note = _bench_validity(bench)
    return Headline(number, o.best_speedup is not None, o.text, verdict, note, _last_decision(report),
                    *_profile_finding(report))


def _bench_validity(bench: GateReport | None) -> tuple[str | None, str | None]:
    """The best bench's validity verdict and its note; neither without a bench."""
    if bench is None:
        return None, None
    return (fact(bench, "validity") or ("VALID" if bench.valid else "SUSPECT"),
            fact(bench, "why suspect") or fact(bench, "note"))


def _profile_finding(report: Report) -> tuple[str | None, str | None]:
    """The last passing profile's bottleneck verdict and its one fix; neither without one."""
    profile = next((g for g in reversed(report.gates) if g.gate == "profile" and g.status == "pass"), None)
    if profile is None:
        return None, None
    return fact(profile, "verdict") or profile.summary, fact(profile, "the one fix")


def _last_decision(report: Report) -> str | None:
    """The session's last keep/revert, and whether it was carried out (with its commit)."""
    if not report.decisions:
        return None
    last = report.decisions[-1]
    done = "done" if last.confirmed else "not carried out"
    return f"{last.summary} ({done}{f', commit {last.commit}' if last.commit else ''})"


def fact(gate: GateReport, label: str) -> str | None:
    return next((f.value for f in gate.facts if f.label == label), None)
