"""Starting a search of a workload's knobs: the plan (the space the workload's rule allows on the
target GPU, asked of the child that loads the workload), the studies with their seeds, one worker
per GPU pinned by UUID, and the wait for them, resumable after any stop. In a shared store
(`[tune] storage`) a second box joins the first's studies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import cast

from cockpit.config import Config, ConfigError
from cockpit.errors import CockpitError
from cockpit.session.paths import stored_path
from cockpit.tune.plan import (
    PLAN_NAME,
    BenchSettings,
    GroupPlan,
    KnobPlan,
    PlanBuild,
    read_plan,
    write_plan,
)
from cockpit.tune.search import open_study, store_of
from cockpit.tune.seeds import findings, profile_moves, seed_order, session_verdict
from cockpit.tune.space import (
    current,
    decls,
    elsewhere,
    groups,
    label,
    narrowed,
    options,
    picked,
    searchable,
    untuned,
    with_current,
)
from cockpit.tune.storage import SIDECAR, claim_gpu, one_model, owner_of, write_sidecar
from cockpit.tune.study import cut_torn_tail
from cockpit.tune.supervise import supervise, worker_env
from cockpit.tune.target import Gpu, Target
from cockpit.tune.trials import enqueue_new, fail_interrupted, joined
from cockpit.workload.describe import WorkloadArgs, ask
from cockpit.workload.manifest import Manifest
from cockpit.workload.probe_wire import GroupSpaceJson, SpaceJson
from cockpit.workload.tuned import Tuned, TunedFileError, group_of, read_winners, tuned_path

SPACE_LINE = "SPACE "
TRIAL_OVERHEAD_S = 2.0
"""The check and the child's round trips around a trial: what does not scale with the shapes."""


def make_plan(
    workspace: Path,
    manifest: Manifest,
    config: Config,
    target: Target,
    wargs: WorkloadArgs,
    run_dir: Path,
    session_journal: Path,
    now: float,
    python: str = sys.executable,
    only: Sequence[str] | None = None,
) -> tuple[KnobPlan, SpaceJson]:
    """The search laid out, and what the child said of the space (for the dry run); `only`: the
    `--group KEY=VALUE` filters."""
    searchable(manifest)
    tune = config.tune
    knobs = decls(manifest)
    values = options(manifest, tune)
    limits = {**asdict(target.limits), "gpu": target.limits.gpu, "occupancy_floor": tune.occupancy_floor}
    space = cast(SpaceJson, ask(
        workspace, python, wargs, "space", SPACE_LINE, "judging the knobs", ["--limits", json.dumps(limits)]
    ))
    allowed = {_key(g["key"]): narrowed([tuple(c) for c in g["feasible"]], knobs, values)
               for g in space.get("groups", [])}
    path = tuned_path(workspace, manifest.source)
    try:
        winners = read_winners(path)
    except TunedFileError as exc:
        raise CockpitError(str(exc)) from exc
    arch = target.limits.arch
    kept = Tuned(knobs, manifest.keep_per, arch, winners)
    names = [k.name for k in knobs]
    verdict = session_verdict(session_journal, workspace)
    hints = {k.name: dict(k.hints) for k in manifest.knobs}
    hinted = group_of(manifest.profile.shape.shape, manifest.keep_per) if manifest.profile else None
    plans = []
    how = ""
    for group in picked(groups(manifest), only):
        feasible = allowed.get(_key(group.key), [])
        if not feasible:
            said = group_space(space, group.key)
            reasons = "; ".join(said["examples"].values() if said else ())
            raise ConfigError(
                f"{tune.line('space')}: no knob combination of {manifest.name} is allowed for "
                f"{group.label} on {target.limits.label} ({reasons or 'the values of [tune.space]'}); "
                "widen the values or check --arch"
            )
        now_config = current(knobs, group, winners, arch, untuned(manifest, group))
        moves = profile_moves(hints, findings(verdict)) if hinted in (None, group.key) else []
        seeds, how = seed_order(
            feasible, with_current(values, knobs, now_config), names, now_config,
            min(tune.seed_trials, len(feasible) + 1), elsewhere(knobs, group, winners, arch), moves,
        )
        plans.append(GroupPlan(group, tuple(feasible), now_config, tuple(seeds),
                               tuple(kept.defines(leave_out=group.key))))
    settings = BenchSettings(
        config.workload.reps, config.workload.warmup, 4, config.workload.settle_ms, config.workload.rounds
    )
    plan = KnobPlan(
        run=time.strftime("tune-%Y%m%d-%H%M%S", time.localtime(now)),
        run_dir=stored_path(run_dir, workspace),
        session_journal=stored_path(session_journal, workspace),
        workload=manifest.name,
        workload_argv=tuple(wargs.argv()),
        build=PlanBuild(
            manifest.build.name,
            manifest.build.sources,
            manifest.build.include_dirs,
            manifest.build.variant_build,
            manifest.build.tuned_header,
        ),
        tuned_file=stored_path(path, workspace) if path else "",
        keep_per=manifest.keep_per,
        knobs=knobs,
        options=values,
        arch=arch,
        target=target.label,
        trials=tune.trials,
        prune_slower=tune.prune_slower,
        budget_s=tune.budget_min * 60,
        seed_how=how,
        baseline=manifest.baseline.name if manifest.baseline else "",
        groups=tuple(plans),
        settings=settings,
    )
    seed_s = min_trial_seconds(plan) * max(len(g.seeds) for g in plans)  # a worker's seed per group
    if tune.budget_min * 60 < seed_s:
        raise ConfigError(
            f"{tune.line('budget_min')}: tune.budget_min: {tune.budget_min:g} min cannot hold "
            f"the seed: {tune.seed_trials} configurations x {len(plans)} groups take at least "
            f"{seed_s / 60:.1f} min; raise budget_min or lower seed_trials"
        )
    return plan, space


def _key(group: Mapping[str, object]) -> str:
    return json.dumps(group, sort_keys=True)


def group_space(space: SpaceJson, key: Mapping[str, object]) -> GroupSpaceJson | None:
    """What the child said of this group's space; None when it said nothing (a resumed search)."""
    return next((g for g in space.get("groups", []) if g["key"] == key), None)


def min_trial_seconds(plan: KnobPlan) -> float:
    """Every timed block is preceded by `settle_ms` untimed: per bench shape one block for the short
    measurement and `rounds` for the full one, over every group."""
    s = plan.settings
    shapes = sum(len(g.group.bench) for g in plan.groups)
    per_block = float(s.settle_ms) / 1000
    return TRIAL_OVERHEAD_S * len(plan.groups) + shapes * (1 + s.rounds) * per_block


def describe_plan(plan: KnobPlan, space: SpaceJson, budget_min: float) -> list[str]:
    """The dry run's lines."""
    lines = [
        f"{plan.workload}: target {plan.target}; budget {budget_min:g} min or {plan.trials} trials per "
        f"group; speedups against {plan.baseline}",
        "knobs: " + "; ".join(f"{k.name} ({k.via}) {list(plan.options[k.name])}" for k in plan.knobs),
        f"{plan.combinations} combinations",
    ]
    for g in plan.groups:
        said = group_space(space, g.group.key)
        rejected = said["rejected"] if said else {}
        lines.append(
            f"{g.label}: {len(g.feasible)} left to search on {len(g.group.bench)} shapes, checked on "
            f"{len(g.group.checks)}; current {label(plan.knobs, g.current)}; "
            f"{sum(rejected.values())} rejected by the workload's rule"
            + "".join(f"; {n}: {said['examples'][r]}" for r, n in rejected.items() if said)
        )
    if plan.tuned_file:
        lines.append(
            f"winners are kept in {plan.tuned_file} (per {plan.arch}"
            + (f" and {', '.join(plan.keep_per)}" if plan.keep_per else "")
            + ")"
            + (f" and {plan.build.tuned_header}" if plan.build.tuned_header else "")
        )
    lines.append(f"seed: {plan.seed_how}")
    return lines


def new_run(workspace: Path, plan: KnobPlan, say: Callable[[str], None] | None = None) -> KnobPlan:
    """Create (or, in a shared store, join) the groups' studies, each seeded with what no trial has."""
    run_dir = workspace / plan.run_dir
    for earlier in (plan.journal(workspace), run_dir / SIDECAR):
        if earlier.exists():
            raise CockpitError(
                f"{earlier} holds an earlier search: `cockpit tune --resume` continues it; "
                "to start over, move that folder away or start a new session"
            )
    store = store_of(workspace, plan, fresh=True)
    names = [k.name for k in plan.knobs]
    studies = []
    for group in plan.groups:
        study = open_study(plan, group, store)
        queued = enqueue_new(study, [dict(zip(names, c, strict=True)) for c in group.seeds], names)
        studies.append(study.study_name)
        if store.shared:
            (say or _say)(joined(study, store.where, queued, len(group.seeds)))
    write_sidecar(run_dir, store, studies)
    write_plan(workspace, plan)
    return plan


def resume_run(
    workspace: Path, run_dir: Path, budget_s: float | None, trials: int | None
) -> tuple[KnobPlan, list[str]]:
    """The stopped search again: its trials left running are failed and queued again (in a shared
    store only its own run's and the stale ones: another box's live trials stay)."""
    plan = read_plan(run_dir / PLAN_NAME)
    plan = replace(
        plan,
        budget_s=plan.budget_s if budget_s is None else budget_s,
        trials=plan.trials if trials is None else trials,
    )
    notes = []
    store = store_of(workspace, plan)
    dropped = cut_torn_tail(plan.journal(workspace))
    if dropped:
        notes.append(f"{plan.journal(workspace)}: dropped a write cut off mid-line ({dropped} bytes)")
    names = [k.name for k in plan.knobs]
    for group in plan.groups:
        study = open_study(plan, group, store)
        again = len(fail_interrupted(study, store.asking(owner_of(plan.run_dir, plan.run)), names))
        if again:
            notes.append(f"{group.label}: {again} configurations interrupted mid-measurement, queued again")
    write_plan(workspace, plan)
    return plan, notes


def spent_s(plan: KnobPlan) -> float:
    return sum(max(0.0, end - start) for start, end in plan.segments)


def run_workers(
    workspace: Path,
    plan: KnobPlan,
    gpus: list[Gpu],
    logs: Path,
    on_tick: Callable[[], None],
    clock: Callable[[], float] = time.time,
) -> list[int]:
    """One worker per GPU, pinned with CUDA_VISIBLE_DEVICES=<UUID>; Ctrl-C stops them (--resume)."""
    model = one_model((f"GPU {g.index}", g.name) for g in gpus)
    store = store_of(workspace, plan)
    for group in plan.groups:
        claim_gpu(open_study(plan, group, store), model, store)
    start, spent = clock(), spent_s(plan)
    plan = plan.with_segment(start, start, new=True)
    write_plan(workspace, plan)
    children = []
    logs.mkdir(parents=True, exist_ok=True)
    for i, gpu in enumerate(gpus):
        env = worker_env(gpu)
        argv = [
            sys.executable,
            "-m",
            "cockpit.tune.worker",
            "--workspace",
            str(workspace),
            "--plan",
            str(workspace / plan.run_dir / PLAN_NAME),
            "--worker",
            str(i),
            "--workers",
            str(len(gpus)),
            "--gpu",
            gpu.uuid,
            "--start",
            f"{start:.3f}",
            "--spent",
            f"{spent:.3f}",
        ]
        with (logs / f"{plan.run}-gpu{gpu.index}.log").open("a", encoding="utf-8") as log:
            # from the root: `-m` puts the current folder first on sys.path, where a clone's own
            # cockpit/ or optuna.py would be imported (the worker's children run in the workspace)
            children.append(
                subprocess.Popen(
                    argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=os.sep, start_new_session=True
                )
            )
    def every() -> None:
        nonlocal plan
        plan = plan.with_segment(start, clock(), new=False)
        write_plan(workspace, plan)
        on_tick()

    try:
        return supervise(children, every)
    finally:
        write_plan(workspace, plan.with_segment(start, clock(), new=False))


def _say(line: str) -> None:
    print(f"cockpit tune: {line}", file=sys.stderr, flush=True)
