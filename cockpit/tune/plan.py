"""`sessions/<ID>/tune/plan.json` for a search of a workload's knobs: what every worker needs,
written once by `cockpit tune` before the workers start, read again by `--resume`. Paths in it are
relative to the workspace (a session is committed and cloned), the workspace itself is not stored."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypedDict

from cockpit.errors import CockpitError
from cockpit.tune.space import Group, KnobSetting, ShapeSize
from cockpit.workload.probe_wire import ShapeJson
from cockpit.workload.tuned import GroupKey, KnobDecl

PLAN_NAME = "plan.json"
JOURNAL_NAME = "journal.log"
KIND = "knobs"


class PlanBuildJson(TypedDict):
    name: str | None
    sources: list[str]
    include_dirs: list[str]
    variant_build: str
    tuned_header: str | None


class SettingsJson(TypedDict):
    reps: int
    warmup: int
    input_sets: int
    settle_ms: float
    rounds: int


class _GroupFields(TypedDict):
    key: GroupKey
    bench: list[ShapeJson]
    checks: list[ShapeJson]
    feasible: list[list[Any]]
    current: list[Any]
    seeds: list[list[Any]]
    others: list[str]


class GroupJson(_GroupFields, total=False):
    sizes: list[list[Any]]
    """(bytes, FLOPs, dtype) per bench shape; plans written before it lack it."""


class PlanJson(TypedDict):
    """plan.json on disk: as every earlier version wrote it, so a stopped search resumes."""

    kind: str
    run: str
    run_dir: str
    session_journal: str
    workload: str
    workload_argv: list[str]
    build: PlanBuildJson
    tuned_file: str
    keep_per: list[str]
    knobs: list[list[Any]]
    options: dict[str, list[Any]]
    arch: str
    target: str
    trials: int
    prune_slower: float
    budget_s: float
    seed_how: str
    baseline: str
    settings: SettingsJson
    segments: list[list[float]]
    groups: list[GroupJson]


@dataclass(frozen=True)
class PlanBuild:
    """What the search builds define knobs from: the manifest's Extension."""

    name: str | None
    """Its module name."""
    sources: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    variant_build: str = "rebuild"
    """"rebuild" or "relink" (spec.Extension)."""
    tuned_header: str | None = None
    """The C header the kept winners are written into (workspace-relative), if any."""

    def to_json(self) -> PlanBuildJson:
        return {"name": self.name, "sources": list(self.sources), "include_dirs": list(self.include_dirs),
                "variant_build": self.variant_build, "tuned_header": self.tuned_header}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PlanBuild:
        """An earlier plan may lack variant_build and tuned_header: a rebuild, no header."""
        header = d.get("tuned_header")
        return cls(d.get("name"), tuple(d.get("sources", ())), tuple(d.get("include_dirs", ())),
                   "relink" if d.get("variant_build") == "relink" else "rebuild",
                   header if isinstance(header, str) and header else None)


@dataclass(frozen=True)
class BenchSettings:
    """The bench gate's method, which the measuring child times every configuration with."""

    reps: int
    warmup: int
    input_sets: int
    settle_ms: float
    rounds: int

    def to_json(self) -> SettingsJson:
        return {"reps": self.reps, "warmup": self.warmup, "input_sets": self.input_sets,
                "settle_ms": self.settle_ms, "rounds": self.rounds}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> BenchSettings:
        # settle_ms as written (100 stays 100): a resumed plan is written back unchanged
        return cls(int(d["reps"]), int(d["warmup"]), int(d["input_sets"]), d["settle_ms"], int(d["rounds"]))


@dataclass(frozen=True)
class GroupPlan:
    group: Group
    feasible: tuple[KnobSetting, ...]
    current: KnobSetting
    seeds: tuple[KnobSetting, ...]
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
    """How the workload probe is told which workload: --workload SRC [--task FILE]."""
    build: PlanBuild
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
    settings: BenchSettings
    segments: tuple[tuple[float, float], ...] = ()

    @property
    def combinations(self) -> int:
        """Every combination of the knobs' values, before the workload's rule."""
        return math.prod(len(v) for v in self.options.values())

    def journal(self, workspace: Path) -> Path:
        return workspace / self.run_dir / JOURNAL_NAME

    def deadlines(self, start: float, spent_s: float) -> dict[str, float]:
        """The budget left, shared evenly over the groups; what one leaves unused flows to the next."""
        left = max(0.0, self.budget_s - spent_s)
        n = len(self.groups)
        return {g.label: start + left * (i + 1) / n for i, g in enumerate(self.groups)}

    def with_segment(self, start: float, end: float, new: bool) -> KnobPlan:
        kept = self.segments if new else self.segments[:-1]
        return replace(self, segments=(*kept, (start, end)))

    def to_json(self) -> PlanJson:
        return {
            "kind": KIND,
            "run": self.run,
            "run_dir": self.run_dir,
            "session_journal": self.session_journal,
            "workload": self.workload,
            "workload_argv": list(self.workload_argv),
            "build": self.build.to_json(),
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
            "settings": self.settings.to_json(),
            "segments": [list(s) for s in self.segments],
            "groups": [
                {
                    "key": dict(g.group.key),
                    "bench": list(g.group.bench),
                    "checks": list(g.group.checks),
                    "feasible": [list(c) for c in g.feasible],
                    "current": list(g.current),
                    "seeds": [list(c) for c in g.seeds],
                    "others": list(g.others),
                    "sizes": [list(s) for s in g.group.sizes],
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


def read_plan(path: Path) -> KnobPlan:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        return KnobPlan(
            run=d["run"],
            run_dir=d["run_dir"],
            session_journal=d["session_journal"],
            workload=d["workload"],
            workload_argv=tuple(d["workload_argv"]),
            build=PlanBuild.from_json(d["build"]),
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
            settings=BenchSettings.from_json(d["settings"]),
            segments=tuple((float(a), float(b)) for a, b in d.get("segments", [])),
            groups=tuple(
                GroupPlan(
                    Group(dict(g["key"]), tuple(g["bench"]), tuple(g["checks"]),
                          tuple(_size(s) for s in g.get("sizes", []))),
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


def _size(value: list[Any]) -> ShapeSize:
    """A plan's (bytes, FLOPs, dtype) as written; anything else reads as unknown."""
    nbytes, flops, dtype = [*list(value), None, None, None][:3]
    number = (int, float)
    return (float(nbytes) if isinstance(nbytes, number) else None,
            float(flops) if isinstance(flops, number) else None, dtype if isinstance(dtype, str) else None)
