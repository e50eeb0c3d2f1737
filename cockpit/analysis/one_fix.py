"""The profile's ONE fix for a launch, chosen here and nowhere else: the profile gate's verdict and
`cockpit analyze` both ask this function and print the line it gives, so the two never disagree.

The rule: ncu's own estimates lead when its details page has one that applies to the launch
(ncu_rules.ranked: global estimates before local ones, each by its size; a tensor-core rule only
for a kernel that does matrix math). With none (no details page, a page whose rules estimate
nothing, or only rules that do not apply) the decision tree's fix (bottleneck_fix.py) is the one;
with neither (a details page read alone, no estimate on it) there is no fix to name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from cockpit.analysis.ncu_rules import RuleResult, ranked

ESTIMATES_SHOWN = 5
"""How many of ncu's estimates a surface lists under the fix (the fix first)."""


@dataclass(frozen=True)
class OneFix:
    line: str
    """The fix, as every surface prints it."""
    estimates: tuple[RuleResult, ...] = ()
    """ncu's estimates that apply, best first; the first is `line` when there are any."""
    tree_fix: str | None = None
    """The decision tree's fix, when ncu's estimate chose the one fix instead."""

    def estimate_lines(self) -> tuple[str, ...]:
        """The estimates a surface shows, each as one line, the fix first."""
        return tuple(r.line() for r in self.estimates[:ESTIMATES_SHOWN])


@overload
def one_fix(rules: Sequence[RuleResult], launch_id: int | str | None, tree_fix: str,
            matrix_math: bool | None = None) -> OneFix: ...
@overload
def one_fix(rules: Sequence[RuleResult], launch_id: int | str | None, tree_fix: None,
            matrix_math: bool | None = None) -> OneFix | None: ...
def one_fix(rules: Sequence[RuleResult], launch_id: int | str | None, tree_fix: str | None,
            matrix_math: bool | None = None) -> OneFix | None:
    """The one fix for the launch with ncu's `launch_id` (the raw page's number or the details
    page's text; None: a report whose launches carry no ID, every rule is this launch's): ncu's
    best estimate that applies, else `tree_fix` (the decision tree's; None without a raw page to
    run it on); None when there is neither."""
    mine = [r for r in rules if launch_id is None or r.launch == str(launch_id)]
    estimates = tuple(ranked(mine, matrix_math))
    if estimates:
        return OneFix(estimates[0].line(), estimates, tree_fix)
    return OneFix(tree_fix) if tree_fix is not None else None
