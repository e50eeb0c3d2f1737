"""How each pattern's fix paid across sessions: a pattern that names a profile fix rule (ncu's rule,
"TheoreticalOccupancy", as a word of its title, problem, when, solution or body) is shown with how
often a bench after a profile naming that rule kept or reverted, and the median speedup it realized
("applied 5 times, kept 3, realized median 1.15x"), from every session's journal
(gates/bench/payoff.py records each join; analysis/fix_payoff.py sums them).

Reading every journal is the cost of the answer: `cockpit pattern list` and `show` ask for it, once
per call."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from cockpit.analysis.fix_payoff import FixPayoff, RulePaid, paid_by_rule
from cockpit.gates.bench.past import finished_benches
from cockpit.patterns.pattern import Pattern
from cockpit.report.reading import read_session
from cockpit.session.workspace import Workspace, list_sessions


def workspace_payoffs(ws: Workspace) -> list[FixPayoff]:
    """Every payoff the workspace's sessions recorded, oldest session first (an unreadable journal
    has none)."""
    found: list[FixPayoff] = []
    for ref in list_sessions(ws):
        state = read_session(ref).state
        if state is not None:
            found += [p for _, bench in finished_benches(state) if (p := bench.payoff) is not None]
    return found


def names_rule(p: Pattern, rule: str) -> bool:
    """Whether the pattern names `rule` as a word anywhere in what it says."""
    said = " ".join((p.title, p.problem, p.when, p.solution, p.body))
    return re.search(rf"(?<![\w]){re.escape(rule)}(?![\w])", said) is not None


def paid_for(patterns: Sequence[Pattern], payoffs: Iterable[FixPayoff]) -> Mapping[int, list[RulePaid]]:
    """Pattern id -> how each rule it names paid (ncu's rules only: a decision tree's fix is
    words, not a name a pattern can be matched by)."""
    paid = [r for r in paid_by_rule(p for p in payoffs if p.predicted.rule).values()]
    return {p.id: found for p in patterns if (found := [r for r in paid if names_rule(p, r.rule)])}


def paid_line(paid: Sequence[RulePaid]) -> str:
    """"paid: TheoreticalOccupancy applied 5 times, kept 3, realized median 1.15x"."""
    return "paid: " + "; ".join(f"{r.rule} {r.words()}" for r in paid)
