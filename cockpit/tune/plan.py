"""`sessions/<ID>/tune/plan.json` for a search of a workload's knobs: what every worker needs,
written once by `cockpit tune` before the workers start, read again by `--resume`. Paths in it are
relative to the workspace (a session is committed and cloned), the workspace itself is not stored."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cockpit.errors import CockpitError
from cockpit.tune.space import Config, Group
from cockpit.workload.tuned import KnobDecl

PLAN_NAME = "plan.json"
JOURNAL_NAME = "journal.log"
KIND = "knobs"


@dataclass(frozen=True)
class GroupPlan:
    group: Group
    feasible: tuple[Config, ...]
    current: Config
    seeds: tuple[Config, ...]
    others: tuple[str, ...]
    """The -D flags the other groups' kept winners add to every build of this group."""

    @property
    def label(self) -> str:
        return self.group.label


@dataclass(frozen=True)
class KnobPlan:
    run: str
    run_dir: str
    """Relative to the workspace, as every path here."""
    session_journal: str
    workload: str
    """The workload's name (history, the tuned file)."""
    workload_argv: tuple[str, ...]
    """How the workload probe is told which workload: --workload SRC [--task JSON]."""
    build: dict[str, Any]
    """The manifest's build: name, sources, include_dirs (define knobs are built from them)."""
    tuned_file: str
    keep_per: tuple[str, ...]
    knobs: tuple[KnobDecl, ...]
    options: dict[str, tuple[Any, ...]]
    arch: str
    target: str
    trials: int
    prune_slower: float
    budget_s: float
    seed_how: str
    baseline: str
    """The timed reference the search's numbers are stated against."""
    groups: tuple[GroupPlan, ...]
    settings: dict[str, Any]
    """reps, warmup, input_sets, settle_ms, rounds: the bench gate's method."""
    segments: tuple[tuple[float, float], ...] = ()

    @property
    def combinations(self) -> int:
        """Every combination of the knobs' values, before the workload's rule."""
        return math.prod(len(v) for v in self.options.values())

    def journal(self, workspace: Path) -> Path:
        return workspace / self.run_dir / JOURNAL_NAME

    def group(self, label: str) -> GroupPlan:
        return next(g for g in self.groups if g.label == label)

    def deadlines(self, start: float, spent_s: float) -> dict[str, float]:
        """The budget left, shared evenly over the groups; what one leaves unused flows to the next."""
        left = max(0.0, self.budget_s - spent_s)
        n = len(self.groups)
        return {g.label: start + left * (i + 1) / n for i, g in enumerate(self.groups)}

    def with_segment(self, start: float, end: float, new: bool) -> KnobPlan:
        kept = self.segments if new else self.segments[:-1]
        return replace(self, segments=(*kept, (start, end)))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "run": self.run,
            "run_dir": self.run_dir,
            "session_journal": self.session_journal,
            "workload": self.workload,
            "workload_argv": list(self.workload_argv),
            "build": self.build,
            "tuned_file": self.tuned_file,
            "keep_per": list(self.keep_per),
            "knobs": [[k.name, k.via, k.macro, k.start] for k in self.knobs],
            "options": {k: list(v) for k, v in self.options.items()},
            "arch": self.arch,
            "target": self.target,
            "trials": self.trials,
            "prune_slower": self.prune_slower,
            "budget_s": self.budget_s,
            "seed_how": self.seed_how,
            "baseline": self.baseline,
            "settings": self.settings,
            "segments": [list(s) for s in self.segments],
            "groups": [
                {
                    "key": g.group.key,
                    "bench": list(g.group.bench),
                    "checks": list(g.group.checks),
                    "feasible": [list(c) for c in g.feasible],
                    "current": list(g.current),
                    "seeds": [list(c) for c in g.seeds],
                    "others": list(g.others),
                }
                for g in self.groups
            ],
        }


def write_plan(workspace: Path, plan: KnobPlan) -> Path:
    path = workspace / plan.run_dir / PLAN_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(plan.to_json(), indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


def is_knob_plan(path: Path) -> bool:
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("kind") == KIND)
    except (OSError, ValueError, AttributeError):
        return False


def read_plan(path: Path) -> KnobPlan:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        return KnobPlan(
            run=d["run"],
            run_dir=d["run_dir"],
            session_journal=d["session_journal"],
            workload=d["workload"],
            workload_argv=tuple(d["workload_argv"]),
            build=dict(d["build"]),
            tuned_file=d["tuned_file"],
            keep_per=tuple(d["keep_per"]),
            knobs=tuple(KnobDecl(*k) for k in d["knobs"]),
            options={k: tuple(v) for k, v in d["options"].items()},
            arch=d["arch"],
            target=d["target"],
            trials=int(d["trials"]),
            prune_slower=float(d["prune_slower"]),
            budget_s=float(d["budget_s"]),
            seed_how=d["seed_how"],
            baseline=d["baseline"],
            settings=dict(d["settings"]),
            segments=tuple((float(a), float(b)) for a, b in d.get("segments", [])),
            groups=tuple(
                GroupPlan(
                    Group(dict(g["key"]), tuple(g["bench"]), tuple(g["checks"])),
                    tuple(tuple(c) for c in g["feasible"]),
                    tuple(g["current"]),
                    tuple(tuple(c) for c in g["seeds"]),
                    tuple(g["others"]),
                )
                for g in d["groups"]
            ),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CockpitError(f"{path}: not a tune plan ({exc}); start a new search in a new session") from exc
