"""The confirmation's verdict on one group of a knob search, and how sure it is.

The confirmation re-measures the current configuration, the `confirm_top` best of the search (its
finalists) and the baseline reference, interleaved in the bench gate's blocks, in one watched
window. A winner must be faster than the current configuration beyond the noise (its bootstrapped
interval above 1) and by the bar (`[tune] keep_improvement`), in a window the validity verdict
passes. How sure that is (cockpit/tune/confidence.py): the search's regret against its finalists,
a runner-up whose interval overlaps the winner's read as a tie, and the re-confirm, which keeps a
winner only when it held.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cockpit.analysis.stats import Estimate, speedup
from cockpit.tune.confidence import GroupConfidence, Reconfirm, Regret, Tie, overlap, times_x
from cockpit.tune.plan import GroupPlan, KnobPlan
from cockpit.tune.space import KnobSetting, label

CURRENT = "current"
BASELINE = "baseline"
FIRST = "top1"
"""The search's first: the finalist its trials ranked best."""

Times = Mapping[str, Sequence[Sequence[float]]]
"""Per contender (CURRENT, top1..) and BASELINE, per shape, the per-call times."""


@dataclass(frozen=True)
class Contender:
    name: str
    config: KnobSetting
    vs_current: Estimate
    vs_baseline: Estimate


@dataclass(frozen=True)
class GroupVerdict:
    group: GroupPlan
    current: Contender
    contenders: tuple[Contender, ...]
    winner: Contender | None
    why: str
    validity: Mapping[str, Any]
    """The validity verdict on the confirmation's window (gates/bench/validity_rules.py)."""
    regret: Regret | None = None
    tie: Tie | None = None
    reconfirm: Reconfirm | None = None

    @property
    def confidence(self) -> GroupConfidence:
        return GroupConfidence(self.group.label, self.regret, self.tie, self.reconfirm)


def judge(
    group: GroupPlan,
    configs: Mapping[str, KnobSetting],
    times: Times,
    bar: float,
    validity: Mapping[str, Any],
    plan: KnobPlan,
) -> GroupVerdict:
    """`times`: per contender (CURRENT, top1..) and BASELINE, per shape, the per-call times."""

    def contender(name: str) -> Contender:
        return Contender(
            name, configs[name], speedup(times[name], times[CURRENT]), speedup(times[name], times[BASELINE])
        )

    current = contender(CURRENT)
    others = tuple(
        sorted(
            (contender(n) for n in configs if n != CURRENT), key=lambda c: c.vs_current.value, reverse=True
        )
    )
    if not others:
        return GroupVerdict(group, current, others, None, "the search found nothing to confirm", validity)
    winner, why = keep_rule(others[0], bar, validity, plan)
    tie = _tie(others, plan) if winner is not None else None
    return GroupVerdict(group, current, others, winner, why, validity, _regret(others, times, plan), tie)


def keep_rule(
    best: Contender, bar: float, validity: Mapping[str, Any], plan: KnobPlan
) -> tuple[Contender | None, str]:
    """The confirmation's fastest against the current values: a winner beyond the noise and the
    bar in a window the validity verdict passes (and its speedups), else none and why."""
    what = f"the best, {label(plan.knobs, best.config)}, is {best.vs_current.value:.2f}x the current values"
    if not validity["valid"]:
        return None, "the confirmation run is suspect (see validity): re-measure on a quiet GPU"
    if best.vs_current.lo <= 1.0:
        return None, (f"{what} but its interval [{best.vs_current.lo:.2f}, {best.vs_current.hi:.2f}] "
                      "reaches 1: not better beyond the noise")
    if best.vs_current.value < 1 + bar:
        return None, f"{what}, under the {bar:.0%} bar"
    return best, (f"{_ci(best.vs_current)} the current values (bar {1 + bar:.2f}x), "
                  f"{_ci(best.vs_baseline)} {plan.baseline}")


def _regret(others: Sequence[Contender], times: Times, plan: KnobPlan) -> Regret:
    """The search's first (`top1`) against the finalist the confirmation measured fastest."""
    fastest = others[0]
    pick = next((c for c in others if c.name == FIRST), fastest)
    slower = Estimate(1.0, 1.0, 1.0) if pick is fastest else speedup(times[fastest.name], times[pick.name])
    return Regret(label(plan.knobs, pick.config), label(plan.knobs, fastest.config), slower, len(others))


def _tie(others: Sequence[Contender], plan: KnobPlan) -> Tie | None:
    """The fastest and the runner-up when their intervals against the current values overlap."""
    if len(others) < 2 or not overlap(others[0].vs_current, others[1].vs_current):
        return None
    first, second = others[0], others[1]
    return Tie(label(plan.knobs, first.config), label(plan.knobs, second.config), first.vs_current,
               second.vs_current)


def reconfirmed(
    v: GroupVerdict, times: Times, validity: Mapping[str, Any], plan: KnobPlan
) -> GroupVerdict:
    """The verdict after the re-confirm (`times`: the winner's, the runner-up's and the current
    values'): it stands when the winner held; a runner-up found faster makes it a tie (kept on
    the keep rule the confirmation passed, the winner still beyond the noise); a winner no longer
    beyond the noise, or a suspect window, keeps nothing."""
    assert v.winner is not None
    winner = v.winner
    runner = v.contenders[1] if len(v.contenders) > 1 else None
    again = Reconfirm(
        label(plan.knobs, winner.config), speedup(times[winner.name], times[CURRENT]),
        label(plan.knobs, runner.config) if runner else None,
        speedup(times[runner.name], times[CURRENT]) if runner else None,
        bool(validity["valid"]), "; ".join(validity.get("reasons", [])),
    )
    if again.held:
        return replace(v, reconfirm=again)
    if again.beyond_noise and runner is not None and again.runner_up_vs_current is not None:
        tie = Tie(again.winner, label(plan.knobs, runner.config), winner.vs_current, runner.vs_current,
                  (again.winner_vs_current, again.runner_up_vs_current))
        return replace(v, reconfirm=again, tie=tie)
    why = (f"the winner, {again.winner}, did not hold on a re-confirm (the confirmation read "
           f"{times_x(winner.vs_current)} the current values): not kept")
    return replace(v, reconfirm=again, winner=None, tie=None, why=why)


def verdict_lines(v: GroupVerdict, plan: KnobPlan) -> list[str]:
    """The group's verdict (a tie said as one, the keep rule against the current values deciding
    what is kept), each contender, the regret and the re-confirm."""
    if v.winner is None:
        head = f"no winner — {v.why}"
    elif v.tie is not None:
        head = (f"TIE — {v.tie.words()}; {label(plan.knobs, v.winner.config)} kept on the keep rule: "
                f"{v.why}")
    else:
        head = f"WINNER {label(plan.knobs, v.winner.config)} — {v.why}"
    lines = [f"{v.group.label}: {head}"]
    for c in (v.current, *v.contenders):
        lines.append(
            f"  {c.name:<8} {label(plan.knobs, c.config):<48} vs current {_ci(c.vs_current)}  "
            f"vs {plan.baseline} {_ci(c.vs_baseline)}"
        )
    if v.regret is not None:
        lines.append(f"  {v.regret.words()}")
    if v.reconfirm is not None:
        lines.append(f"  re-confirm: {v.reconfirm.words()}")
    if not v.validity["valid"]:
        lines.append(f"  SUSPECT: {'; '.join(v.validity.get('reasons', []))}")
    return lines


def _ci(e: Estimate) -> str:
    return f"{e.value:.3f}x [{e.lo:.3f}, {e.hi:.3f}]"
