"""`sessions/<ID>/tune/plan.json`: what every worker of one search needs, written once by
`cockpit tune` before the workers start, read again by `--resume`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cockpit.config.tune import Value
from cockpit.errors import CockpitError
from cockpit.tune.measure import ProbeSettings
from cockpit.tune.space import KernelParams

PLAN_NAME = "plan.json"
JOURNAL_NAME = "journal.log"


@dataclass(frozen=True)
class HeadDimPlan:
    head_dim: int
    feasible: tuple[KernelParams, ...]
    options: dict[str, tuple[Value, ...]]
    """Each tunable's values as the sampler offers them."""
    current: KernelParams
    seeds: tuple[KernelParams, ...]
    shapes: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class RunPlan:
    run: str
    run_dir: Path
    session_journal: Path
    csrc: Path
    cache: Path
    arch: str
    target: str
    max_smem: int
    occupancy_floor: float
    trials: int
    prune_slower: float
    budget_s: float
    seed_how: str
    head_dims: tuple[HeadDimPlan, ...]
    probe: ProbeSettings
    segments: tuple[tuple[float, float], ...] = ()
    """(start, end) of each stretch of the search so far; a resumed run appends one."""

    @property
    def journal(self) -> Path:
        return self.run_dir / JOURNAL_NAME

    def head_dim(self, d: int) -> HeadDimPlan:
        return next(h for h in self.head_dims if h.head_dim == d)

    def deadlines(self, start: float, spent_s: float) -> dict[int, float]:
        """When each head dim's search must stop: the budget left, shared evenly, and what one
        head dim leaves unused flows to the next."""
        left = max(0.0, self.budget_s - spent_s)
        n = len(self.head_dims)
        return {h.head_dim: start + left * (i + 1) / n for i, h in enumerate(self.head_dims)}

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run, "run_dir": str(self.run_dir), "session_journal": str(self.session_journal),
            "csrc": str(self.csrc), "cache": str(self.cache), "arch": self.arch, "target": self.target,
            "max_smem": self.max_smem, "occupancy_floor": self.occupancy_floor, "trials": self.trials,
            "prune_slower": self.prune_slower, "budget_s": self.budget_s, "seed_how": self.seed_how,
            "segments": [list(s) for s in self.segments],
            "probe": {"shapes": {str(k): list(v) for k, v in self.probe.shapes.items()},
                      "checks": {str(k): list(v) for k, v in self.probe.checks.items()},
                      "tolerance": self.probe.tolerance, "reps": self.probe.reps, "warmup": self.probe.warmup,
                      "settle_ms": self.probe.settle_ms, "rounds": self.probe.rounds},
            "head_dims": [{"head_dim": h.head_dim, "feasible": [p.as_dict() for p in h.feasible],
                           "options": {k: list(v) for k, v in h.options.items()},
                           "current": h.current.as_dict(), "seeds": [p.as_dict() for p in h.seeds],
                           "shapes": list(h.shapes)} for h in self.head_dims],
        }


def write_plan(plan: RunPlan) -> Path:
    path = plan.run_dir / PLAN_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(plan.to_json(), indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_plan(path: Path) -> RunPlan:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        probe = data["probe"]
        return RunPlan(
            run=data["run"], run_dir=Path(data["run_dir"]), session_journal=Path(data["session_journal"]),
            csrc=Path(data["csrc"]), cache=Path(data["cache"]), arch=data["arch"], target=data["target"],
            max_smem=int(data["max_smem"]), occupancy_floor=float(data["occupancy_floor"]),
            trials=int(data["trials"]), prune_slower=float(data["prune_slower"]),
            budget_s=float(data["budget_s"]), seed_how=data["seed_how"],
            segments=tuple((float(a), float(b)) for a, b in data.get("segments", [])),
            probe=ProbeSettings(
                shapes={int(k): tuple(v) for k, v in probe["shapes"].items()},
                checks={int(k): tuple(v) for k, v in probe["checks"].items()},
                tolerance=float(probe["tolerance"]), reps=int(probe["reps"]), warmup=int(probe["warmup"]),
                settle_ms=float(probe["settle_ms"]), rounds=int(probe["rounds"])),
            head_dims=tuple(HeadDimPlan(
                head_dim=int(h["head_dim"]),
                feasible=tuple(KernelParams.from_dict(p) for p in h["feasible"]),
                options={k: tuple(v) for k, v in h["options"].items()},
                current=KernelParams.from_dict(h["current"]),
                seeds=tuple(KernelParams.from_dict(p) for p in h["seeds"]),
                shapes=tuple(h["shapes"])) for h in data["head_dims"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CockpitError(f"{path}: not a tune plan ({exc}); start a new search in a new session") from exc
