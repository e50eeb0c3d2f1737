"""The search laid out before it starts: per head dim, every configuration of `[tune.space]`
held to the target GPU's limits, what is left to search, and whether the budget can hold the
seed. `cockpit tune --dry-run` prints this and stops."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from cockpit.config.reader import ConfigError
from cockpit.config.tune import TuneConfig, Value
from cockpit.config.workload import Workload
from cockpit.tune.feasibility import LIMITS, Rejection, check
from cockpit.tune.space import DEFAULTS, KernelParams, configurations, resolve_space
from cockpit.tune.target import Target

# A correctness check of the configuration before its timing, and the process and launch
# overheads around a trial: the part of a trial that does not scale with the shapes.
TRIAL_OVERHEAD_S = 1.0


@dataclass(frozen=True)
class HeadDimSpace:
    head_dim: int
    total: int
    feasible: tuple[KernelParams, ...]
    rejected: tuple[tuple[KernelParams, Rejection], ...]
    current: KernelParams
    """The configuration the build uses now: the search's first trial and its reference."""

    def rejected_by(self) -> dict[str, int]:
        counts = Counter(r.limit for _, r in self.rejected)
        return {limit: counts[limit] for limit in LIMITS if counts[limit]}


@dataclass(frozen=True)
class TunePlan:
    target: Target
    values: dict[str, tuple[Value, ...]]
    """`[tune.space]` resolved against the kernel's tunables: what every head dim's space is made of."""
    spaces: tuple[HeadDimSpace, ...]
    min_trial_s: float
    """The least a trial can take under the bench gate's method (settling before every timed
    block of every shape, short and full measurement): what the budget check counts with."""

    def space(self, head_dim: int) -> HeadDimSpace:
        return next(s for s in self.spaces if s.head_dim == head_dim)

    def as_json(self) -> dict[str, Any]:
        return {"target": {"arch": self.target.limits.arch, "gpu": self.target.limits.gpu,
                           "source": self.target.source},
                "min_trial_s": round(self.min_trial_s, 2),
                "head_dims": [{"head_dim": s.head_dim, "total": s.total, "left": len(s.feasible),
                               "rejected": len(s.rejected), "rejected_by": s.rejected_by(),
                               "current": s.current.as_dict(),
                               "examples": {r.limit: f"{p.label}: {r.text}" for p, r in reversed(s.rejected)}}
                              for s in self.spaces]}


def make_plan(tune: TuneConfig, workload: Workload, target: Target,
              current: dict[int, KernelParams] | None = None) -> TunePlan:
    """Hold the space to the target's limits; a space left empty, or a budget that cannot hold
    the seed, is a `cockpit.toml:LINE` error."""
    current = current or DEFAULTS
    values = resolve_space(tune)
    every = configurations(values)
    spaces = []
    for head_dim in tune.head_dims:
        judged = [(p, check(p, head_dim, target.limits, tune.occupancy_floor)) for p in every]
        feasible = tuple(p for p, r in judged if r is None)
        rejected = tuple((p, r) for p, r in judged if r is not None)
        if not feasible:
            reasons = ", ".join(f"{n} by {limit}" for limit, n in
                                HeadDimSpace(head_dim, len(every), (), rejected, current[head_dim])
                                .rejected_by().items())
            raise ConfigError(f"{tune.line('space')}: tune.space: no configuration for D={head_dim} fits "
                              f"{target.label} ({reasons}); widen the values or check --arch")
        spaces.append(HeadDimSpace(head_dim, len(every), feasible, rejected, current[head_dim]))
    plan = TunePlan(target, values, tuple(spaces), min_trial_seconds(tune, workload))
    seed_s = plan.min_trial_s * min(tune.seed_trials, min(len(s.feasible) for s in spaces)) * len(spaces)
    if tune.budget_min * 60 < seed_s:
        raise ConfigError(
            f"{tune.line('budget_min')}: tune.budget_min: {tune.budget_min:g} min cannot hold the seed: "
            f"{tune.seed_trials} configurations x {len(spaces)} head dims take at least "
            f"{seed_s / 60:.1f} min "
            f"({plan.min_trial_s:.1f} s each); raise budget_min or lower seed_trials")
    return plan


def min_trial_seconds(tune: TuneConfig, workload: Workload) -> float:
    """Every timed block is preceded by `settle_ms` untimed: per shape, one block for the short
    measurement and `rounds` for the full one."""
    return TRIAL_OVERHEAD_S + len(tune.seq_lens) * (1 + workload.rounds) * workload.settle_ms / 1000


def describe(plan: TunePlan, tune: TuneConfig) -> list[str]:
    """The dry run's lines."""
    lines = [f"target: {plan.target.label} ({plan.target.source}); "
             f"budget {tune.budget_min:g} min or {tune.trials} trials per head dim, seed {tune.seed_trials}"]
    for s in plan.spaces:
        by = ", ".join(f"{n} {limit}" for limit, n in s.rejected_by().items()) or "none"
        lines.append(f"D={s.head_dim}: {s.total} configurations, {len(s.rejected)} rejected ({by}), "
                     f"{len(s.feasible)} left to search; current {s.current.label}")
        seen: set[str] = set()
        for params, rejection in s.rejected:
            if rejection.limit not in seen:
                seen.add(rejection.limit)
                lines.append(f"  e.g. {params.label}: {rejection.limit}: {rejection.text}")
    return lines
