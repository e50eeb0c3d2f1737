"""The search of a workload's knobs in Optuna's terms, one study per group, and one worker's walk
through them: ask, build ahead, check, time short, prune, time in full, tell.

The study (cockpit/tune/study.py) lives in a JournalStorage file shared by the workers of every GPU,
or in the database `[tune] storage` names, shared by several boxes (storage.py: the name, the GPU
model, the heartbeat); TPE multivariate with the constant liar, the pruner on the short
measurement's interval. A configuration whose build spills registers (ptxas -v) is rejected before
it is timed. Its value is the configuration's speedup over the workload's
baseline reference on the group's bench shapes (geometric mean, bootstrapped interval), each
worker timing that reference on its own GPU first. A configuration proposed twice, or one the rule
rejected, is told as skipped and replaced by the nearest one not yet seen, so no trial is spent
twice.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from cockpit.analysis.speed_of_light import impossible
from cockpit.analysis.stats import Estimate, speedup
from cockpit.config.tune import TuneConfig
from cockpit.hardware.peaks import Peak
from cockpit.session.journal import Event
from cockpit.tune import events
from cockpit.tune.build import BuildPool, Built
from cockpit.tune.measure import MeasureCrashed, MeasureFailed, ProbeMeasurer
from cockpit.tune.plan import GroupPlan, KnobPlan
from cockpit.tune.seeds import coords, nearest
from cockpit.tune.space import KnobSetting, as_dict, has_defines, label, variant, with_current
from cockpit.tune.storage import Store, as_store, for_run, open_named
from cockpit.tune.study import cut_off, slower_than_best
from cockpit.workload.probe_wire import ConfigJson, TimesReply
from cockpit.workload.tuned import group_label

if TYPE_CHECKING:
    import optuna

LOOKAHEAD = 2
"""Configurations asked ahead of the one being timed; with define knobs, at least as many as build
side by side (a variant's build, torch's headers included, takes tens of seconds, a trial a few)."""
NOTHING_TO_BUILD: Future[Built] = Future()
NOTHING_TO_BUILD.set_result(Built("", True, 0.0, True))


class TrialFacts(TypedDict, total=False):
    """What a trial's event and its user attrs say besides its outcome and numbers."""

    compile_s: float
    cached: bool
    queued: int
    gpu: str
    spills: int
    current: bool


def study_name(group: str) -> str:
    return f"knobs {group}"


def choices(plan: KnobPlan, group: GroupPlan) -> dict[str, list[Any]]:
    """Each knob's values as the sampler sees them: the plan's, plus the group's current one."""
    return with_current(plan.options, plan.knobs, group.current)


def store_of(workspace: Path, plan: KnobPlan, tune: TuneConfig | None = None, fresh: bool = False) -> Store:
    """Where a knob search's studies are: the workspace's `[tune] storage`, else its journal file."""
    if tune is None:
        from cockpit.config import load_config

        tune = load_config(workspace).tune
    return for_run(tune, workspace, workspace / plan.run_dir, plan.journal(workspace), fresh)


def open_study(plan: KnobPlan, group: GroupPlan, where: Path | Store, seed: int = 0) -> optuna.Study:
    """A group's study; in a shared store named by the workload, its baseline, the group's bench
    shapes, the knobs and the values offered, the defines of the other groups' winners and the arch."""
    import optuna

    store = as_store(where)
    sampler = optuna.samplers.TPESampler(
        multivariate=True,
        constant_liar=True,
        n_startup_trials=len(group.seeds),
        seed=store.sampler_seed(seed),
    )
    names = [k.name for k in plan.knobs]
    facts = {
        "kernel": "knobs",
        "workload": plan.workload,
        "baseline": plan.baseline,
        "arch": plan.arch,
        "group": dict(group.group.key),
        "bench": list(group.group.bench),
        "knobs": [[k.name, k.via, k.macro] for k in plan.knobs],
        "options": {k: list(v) for k, v in choices(plan, group).items()},
        "others": list(group.others),
    }
    title = f"knobs {plan.workload} {group.label} {plan.arch}"
    return open_named(
        store, study_name(group.label), title, facts, names, sampler, slower_than_best(plan.prune_slower)
    )


@dataclass
class Walk:
    """One worker's search of one group."""

    plan: KnobPlan
    group: GroupPlan
    pool: BuildPool
    measurer: ProbeMeasurer
    record: Callable[[Event], None]
    clock: Callable[[], float]
    deadline: float
    gpu: str
    baseline_ms: list[list[float]] | None = None
    peak: Peak | None = None
    """The measuring GPU's datasheet peaks: a time no card can reach stops the trial."""

    def config_of(self, trial: optuna.trial.FrozenTrial | optuna.Trial) -> KnobSetting | None:
        params = trial.params
        if not all(k.name in params for k in self.plan.knobs):
            return None
        return tuple(params[k.name] for k in self.plan.knobs)

    def build_of(self, config: KnobSetting) -> Future[Built]:
        v = variant(self.plan.knobs, config, self.group.group, self.group.others)
        return NOTHING_TO_BUILD if v is None else self.pool.submit(v)

    def current_spills(self) -> int:
        """What the current configuration's build spills (every kernel of the build is counted, the
        other groups' too): a configuration is judged by the spills it adds."""
        return self.build_of(self.group.current).result().spills

    def request(self, config: KnobSetting) -> ConfigJson:
        return request_for(self.plan, self.group, config)


def request_for(plan: KnobPlan, group: GroupPlan, config: KnobSetting) -> ConfigJson:
    """A configuration as the measuring child takes it: kwarg values, and the build of its defines."""
    v = variant(plan.knobs, config, group.group, group.others)
    return {"knobs": as_dict(plan.knobs, config), "variant": v.to_json() if v is not None else None}


def search(study: optuna.Study, walk: Walk) -> int:
    """Until the deadline, the trial budget or the space runs out; returns the trials measured."""
    import optuna

    shapes = list(walk.group.group.bench)
    if walk.baseline_ms is None:
        walk.baseline_ms = [
            list(map(float, t))
            for t in walk.measurer.request({"op": "baseline", "shapes": shapes})["times_ms"]
        ]
        walk.record(
            events.tune_baseline(
                walk.clock(), walk.plan.run, walk.group.label, {"value": 1.0, "lo": 1.0, "hi": 1.0}
            )
        )
    pending: deque[tuple[optuna.Trial, KnobSetting, Future[Built]]] = deque()
    done = 0
    while True:
        spent = len([t for t in study.get_trials(deepcopy=False) if t.user_attrs.get("measured")])
        over = walk.clock() >= walk.deadline or spent >= walk.plan.trials
        if not over:
            _top_up(study, walk, pending)
        if over or not pending:
            break
        trial, config, future = pending.popleft()
        done += _run_trial(study, walk, trial, config, future.result())
    for trial, _, _ in pending:  # asked, never timed: the budget ended first
        trial.set_user_attr("outcome", "unused")
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return done


def _seen(study: optuna.Study, walk: Walk, asking: int) -> set[KnobSetting]:
    return {
        c
        for t in study.get_trials(deepcopy=False)
        if t.number != asking
        and t.user_attrs.get("outcome") not in ("skipped", "unused")
        and not cut_off(t)
        and (c := walk.config_of(t)) is not None
    }


def _top_up(
    study: optuna.Study, walk: Walk, pending: deque[tuple[optuna.Trial, KnobSetting, Future[Built]]]
) -> None:
    import optuna

    options = choices(walk.plan, walk.group)
    names = [k.name for k in walk.plan.knobs]
    allowed = set(walk.group.feasible) | {walk.group.current}
    ahead = max(LOOKAHEAD, walk.pool.workers if has_defines(walk.plan.knobs) else 0)
    while len(pending) < ahead + 1:
        trial = study.ask()
        config = tuple(trial.suggest_categorical(n, options[n]) for n in names)
        seen = _seen(study, walk, trial.number) | {c for _, c, _ in pending}
        if config in allowed and config not in seen:
            trial.set_user_attr("config", label(walk.plan.knobs, config))
            pending.append((trial, config, walk.build_of(config)))
            continue
        trial.set_user_attr("outcome", "skipped")
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
        free = [c for c in walk.group.feasible if c not in seen]
        if not free:
            return
        closest = nearest(free, coords(config, options, names), options, names)
        study.enqueue_trial(dict(zip(names, closest, strict=True)))


def _run_trial(study: optuna.Study, walk: Walk, trial: optuna.Trial, config: KnobSetting,
               built: Built) -> int:
    import optuna

    state = optuna.trial.TrialState
    facts: TrialFacts = {
        "compile_s": round(built.seconds, 2),
        "cached": built.cached,
        "queued": walk.pool.queued,
        "gpu": walk.gpu,
    }
    if built.spills:
        facts["spills"] = built.spills
    if config == walk.group.current:
        facts["current"] = True
    if not built.ok:
        return _finish(
            study, walk, trial, config, state.FAIL, "rejected", facts, limit="compile", detail=built.error
        )
    if built.spills > walk.current_spills() and config != walk.group.current:  # it made them spill
        return _finish(study, walk, trial, config, state.FAIL, "rejected", facts, limit="spills",
                       detail=f"ptxas spills {built.spills} bytes per thread ({built.registers} registers)")
    request = walk.request(config)
    shapes = list(walk.group.group.bench)
    assert walk.baseline_ms is not None
    try:
        check = walk.measurer.request(
            {"op": "check", "config": request, "shapes": list(walk.group.group.checks)}
        )
        if not check["ok"]:
            return _finish(study, walk, trial, config, state.FAIL, "incorrect", facts, detail=check["detail"])
        short = _times(
            walk.measurer.request({"op": "time", "config": request, "shapes": shapes, "short": True})
        )
        refused = refusal(walk, short)
        if refused:
            return _finish(study, walk, trial, config, state.FAIL, "incorrect", facts, detail=refused)
        estimate = speedup(short, walk.baseline_ms)
        trial.set_user_attr("short", estimate.as_dict())
        trial.report(estimate.value, 0)
        if config != walk.group.current and trial.should_prune():
            return _finish(study, walk, trial, config, state.PRUNED, "pruned", facts, estimate=estimate)
        full = _times(
            walk.measurer.request({"op": "time", "config": request, "shapes": shapes, "short": False})
        )
    except MeasureCrashed as exc:
        walk.measurer.restart()
        return _finish(study, walk, trial, config, state.FAIL, "crashed", facts, detail=str(exc)[:300])
    except MeasureFailed as exc:
        return _finish(study, walk, trial, config, state.FAIL, "failed", facts, detail=str(exc)[:300])
    return _finish(
        study, walk, trial, config, state.COMPLETE, "timed", facts, estimate=speedup(full, walk.baseline_ms)
    )


def refusal(walk: Walk, times: Sequence[Sequence[float]]) -> str | None:
    """The line that refuses a configuration whose median on a shape no card can reach (the bench
    gate's check, cockpit/analysis/speed_of_light.py), or None."""
    group = walk.group.group
    for shape, size, samples in zip(group.bench, group.sizes, times, strict=False):
        if not samples:
            continue
        nbytes, flops, dtype = size
        hit = impossible("this configuration", group_label(shape), statistics.median(samples), walk.peak,
                         nbytes, flops, dtype)
        if hit is not None:
            return hit.line("this configuration")
    return None


def _times(reply: TimesReply) -> list[list[float]]:
    return [list(map(float, t)) for t in reply["times_ms"]]


def _finish(
    study: optuna.Study,
    walk: Walk,
    trial: optuna.Trial,
    config: KnobSetting,
    state: optuna.trial.TrialState,
    outcome: str,
    facts: TrialFacts,
    estimate: Estimate | None = None,
    **more: Any,
) -> int:
    import optuna

    spent = outcome != "rejected"
    trial.set_user_attr("outcome", outcome)
    trial.set_user_attr("measured", spent)
    for key, value in {**facts, **more}.items():
        trial.set_user_attr(key, value)
    numbers: dict[str, float] = {}
    if estimate is not None:
        trial.set_user_attr("estimate", estimate.as_dict())
        numbers = {
            "value": round(estimate.value, 4),
            "lo": round(estimate.lo, 4),
            "hi": round(estimate.hi, 4),
        }
    if state == optuna.trial.TrialState.COMPLETE and estimate is not None:
        study.tell(trial, estimate.value)
    else:
        study.tell(trial, state=state)
    walk.record(
        events.tune_trial(
            walk.clock(),
            walk.plan.run,
            walk.group.label,
            trial.number,
            label(walk.plan.knobs, config),
            outcome,
            **numbers,
            **facts,
            **more,
        )
    )
    return int(spent)
