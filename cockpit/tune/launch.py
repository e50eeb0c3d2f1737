"""Starting a search and its workers: the run plan, the studies with their seeds, one worker
process per GPU pinned by UUID, and the wait for them, resumable after any stop. With a shared
store (`[tune] storage`), a second box's run joins the study the first made: it queues only the
seeds no trial has yet, and its GPUs must be the model the study was measured on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cockpit
from cockpit.config import Config
from cockpit.errors import CockpitError
from cockpit.tune.measure import ProbeSettings
from cockpit.tune.plan import TunePlan
from cockpit.tune.runplan import PLAN_NAME, HeadDimPlan, RunPlan, read_plan, write_plan
from cockpit.tune.seeds import kept_tiles, profile_hints, seed_order
from cockpit.tune.space import TUNABLE_NAMES
from cockpit.tune.storage import SIDECAR, claim_gpu, one_model, owner_of, write_sidecar
from cockpit.tune.study import (
    choices,
    cut_torn_tail,
    fail_interrupted,
    open_run_study,
    run_store,
)
from cockpit.tune.target import Gpu
from cockpit.tune.trials import enqueue_new, joined
from cockpit.workload.manifest import Manifest

MONITOR_EVERY_S = 2.0


@dataclass(frozen=True)
class TuneChecks:
    """What a configuration must get right before it is timed, per head dim: the workload's
    correctness shapes of that head dim (its test grid and the bench grid's ends), and the tolerance."""

    shapes: dict[int, list[dict[str, Any]]]
    tolerance: float


def checks_from_manifest(manifest: Manifest, head_dims: Sequence[int], key: str = "D") -> TuneChecks:
    """The workload's correctness grid split by head dim (`key`), its largest tolerance."""
    grid = manifest.correctness_grid()
    shapes = {d: [dict(s.shape) for s in grid if s.shape.get(key) == d] for d in head_dims}
    tolerances = [float(v) for v in (manifest.check.get("tolerance") or {}).values()
                  if isinstance(v, (int, float))]
    return TuneChecks(shapes, max(tolerances, default=1e-2))


def new_run(config: Config, tune_plan: TunePlan, checks: TuneChecks, run_dir: Path, session_journal: Path,
            csrc: Path, cache: Path, now: float, say: Callable[[str], None] | None = None) -> RunPlan:
    """Lay out a new search and create (or, in a shared store, join) its studies, each seeded with
    the current configuration, the tiles other archs kept, its neighbours (the profile's moves
    first) and a Latin hypercube of the feasible ones (tune/seeds.py)."""
    tune = config.tune
    heads, how = [], ""
    kept = kept_tiles(csrc, tune_plan.target.limits.arch)  # where other archs' searches ended
    hints = profile_hints(session_journal, csrc.parent)  # what the session's profile points at
    for space in tune_plan.spaces:
        options = choices(tune_plan.values, space.current)
        seeds, how = seed_order(space.feasible, options, space.current,
                                min(tune.seed_trials, len(space.feasible) + 1),
                                kept.get(space.head_dim, ()),
                                hints.get(space.head_dim) or hints.get(None) or ())
        heads.append(HeadDimPlan(space.head_dim, space.feasible, options, space.current, tuple(seeds),
                                 tuple(tune.shapes(space.head_dim))))
    plan = RunPlan(
        run=time.strftime("tune-%Y%m%d-%H%M%S", time.localtime(now)), run_dir=run_dir,
        session_journal=session_journal, csrc=csrc, cache=cache, arch=tune_plan.target.limits.arch,
        target=tune_plan.target.label, max_smem=tune_plan.target.limits.smem_per_block_optin,
        occupancy_floor=tune.occupancy_floor, trials=tune.trials, prune_slower=tune.prune_slower,
        budget_s=tune.budget_min * 60, seed_how=how, head_dims=tuple(heads),
        probe=ProbeSettings(shapes={h.head_dim: h.shapes for h in heads},
                            checks={h.head_dim: checks.shapes.get(h.head_dim, []) for h in heads},
                            tolerance=checks.tolerance, reps=config.workload.reps,
                            warmup=config.workload.warmup, settle_ms=config.workload.settle_ms,
                            rounds=config.workload.rounds))
    for earlier in (plan.journal, run_dir / SIDECAR):
        if earlier.exists():
            raise CockpitError(f"{earlier} holds an earlier search: `cockpit tune --resume` continues it; "
                               "to start over, move that folder away or start a new session")
    store = run_store(plan, tune, fresh=True)
    names = []
    for head in heads:
        study = open_run_study(store, plan, head)
        queued = enqueue_new(study, [p.as_dict() for p in head.seeds], TUNABLE_NAMES)
        names.append(study.study_name)
        if store.shared:
            (say or _say)(joined(study, store.where, queued, len(head.seeds)))
    write_sidecar(run_dir, store, names)
    write_plan(plan)
    return plan


def resume_run(run_dir: Path, budget_s: float | None, trials: int | None) -> tuple[RunPlan, list[str]]:
    """The stopped search again: a write cut off mid-line is dropped, trials left running by the
    dead run are failed and their configurations queued again. Returns what was repaired."""
    path = run_dir / PLAN_NAME
    if not path.exists():
        raise CockpitError(f"no search to resume in {run_dir} (no {PLAN_NAME}); "
                           "start one with `cockpit tune`")
    plan = read_plan(path)
    if budget_s is not None:
        plan = replace(plan, budget_s=budget_s)
    if trials is not None:
        plan = replace(plan, trials=trials)
    notes = []
    store = run_store(plan)
    dropped = cut_torn_tail(plan.journal)
    if dropped:
        notes.append(f"{plan.journal}: dropped a write cut off mid-line ({dropped} bytes)")
    for head in plan.head_dims:
        study = open_run_study(store, plan, head)
        again = fail_interrupted(study, store.asking(owner_of(plan.run_dir, plan.run)))
        if again:
            notes.append(f"D={head.head_dim}: {len(again)} configurations interrupted mid-measurement, "
                         "queued again")
    write_plan(plan)
    return plan, notes


def spent_s(plan: RunPlan) -> float:
    return sum(max(0.0, end - start) for start, end in plan.segments)


def run_workers(plan: RunPlan, gpus: list[Gpu], logs: Path, on_tick: Callable[[], None],
                clock: Callable[[], float] = time.time) -> list[int]:
    """One worker per GPU, each pinned with CUDA_VISIBLE_DEVICES=<UUID>; waits for all of them,
    calling `on_tick` every couple of seconds. Returns their exit codes. Ctrl-C stops them (the
    search resumes with --resume)."""
    claim(plan, gpus)
    start = clock()
    spent = spent_s(plan)
    plan = replace(plan, segments=(*plan.segments, (start, start)))
    write_plan(plan)
    children = []
    for i, gpu in enumerate(gpus):
        env = worker_env(gpu)
        argv = [sys.executable, "-m", "cockpit.tune.worker", "--plan", str(plan.run_dir / PLAN_NAME),
                "--worker", str(i), "--workers", str(len(gpus)), "--gpu", gpu.uuid,
                "--nvml-index", str(gpu.index), "--start", f"{start:.3f}", "--spent", f"{spent:.3f}"]
        logs.mkdir(parents=True, exist_ok=True)
        with (logs / f"{plan.run}-gpu{gpu.index}.log").open("a", encoding="utf-8") as log:
            children.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                             start_new_session=True))
    def every() -> None:
        nonlocal plan
        plan = replace(plan, segments=(*plan.segments[:-1], (start, clock())))
        write_plan(plan)  # a hard stop loses at most a couple of seconds of the budget's count
        on_tick()

    try:
        return supervise(children, every)
    finally:
        write_plan(replace(plan, segments=(*plan.segments[:-1], (start, clock()))))


def claim(plan: RunPlan, gpus: Sequence[Gpu]) -> None:
    """The studies are this GPU model's, or the run stops here in one line (storage.py)."""
    model = one_model((f"GPU {g.index}", g.name) for g in gpus)
    store = run_store(plan)
    for head in plan.head_dims:
        claim_gpu(open_run_study(store, plan, head), model, store)


def worker_env(gpu: Gpu) -> dict[str, str]:
    """A search worker's environment: pinned to its GPU by UUID, this cockpit importable."""
    package_root = str(Path(cockpit.__file__).resolve().parent.parent)
    return dict(os.environ, CUDA_VISIBLE_DEVICES=gpu.uuid, PYTHONUNBUFFERED="1",
                PYTHONPATH=os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p))


def supervise(children: Sequence[subprocess.Popen[bytes]], every: Callable[[], None]) -> list[int]:
    """Wait for the workers, calling `every` every couple of seconds; returns their exit codes.
    Ctrl-C stops them all (each leads its own process group) and is raised again."""
    try:
        while any(c.poll() is None for c in children):
            time.sleep(MONITOR_EVERY_S)
            every()
    except KeyboardInterrupt:
        for c in children:
            if c.poll() is None:
                os.killpg(c.pid, signal.SIGTERM)
        for c in children:
            c.wait()
        raise
    return [c.returncode for c in children]


def _say(line: str) -> None:
    print(f"cockpit tune: {line}", file=sys.stderr, flush=True)
