"""One worker's search of one head dim: ask the study, compile ahead, measure, tell.

The worker keeps `LOOKAHEAD` asked configurations compiling while the GPU times the current
one, so the GPU does not wait for nvcc. A configuration the sampler proposes that the limits
reject, or one already measured or in flight, is told as skipped (the sampler never counts it)
and replaced by the nearest configuration not yet seen, enqueued for the next ask: the search
keeps the sampler's intent and never spends a trial twice. Every outcome becomes a
`tune_trial` event; only measured ones (timed, pruned, incorrect, crashed, failed) count as trials.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cockpit.analysis.stats import Estimate, flops, geomean_tflops
from cockpit.hardware.limits import GpuLimits
from cockpit.session.journal import Event
from cockpit.tune import events
from cockpit.tune.compile import Compiled, CompilePool
from cockpit.tune.feasibility import after_compile
from cockpit.tune.measure import MeasureCrashed, MeasureFailed, Measurer
from cockpit.tune.runplan import HeadDimPlan, RunPlan
from cockpit.tune.space import TUNABLE_NAMES, KernelParams
from cockpit.tune.study import cut_off, measured, params_of, suggest

if TYPE_CHECKING:
    import optuna

LOOKAHEAD = 2
"""Configurations compiling ahead of the one being timed: nvcc takes ~3-4 s a configuration,
a trial several seconds of GPU time, so two keep the GPU fed without asking the sampler far
ahead of what it has learned."""


@dataclass
class SearchContext:
    plan: RunPlan
    head: HeadDimPlan
    limits: GpuLimits
    pool: CompilePool
    measurer: Measurer
    record: Callable[[Event], None]
    clock: Callable[[], float]
    deadline: float
    gpu: str

    def flops(self) -> list[float]:
        return [flops(s) for s in self.head.shapes]


def search(study: optuna.Study, ctx: SearchContext) -> int:
    """Search until the deadline, the trial budget or the space runs out; returns the trials
    this worker measured."""
    import optuna

    if "flash" not in study.user_attrs:
        flash = geomean_tflops(ctx.measurer.flash(ctx.head.head_dim), ctx.flops())
        study.set_user_attr("flash", flash.as_dict())
        ctx.record(events.tune_baseline(ctx.clock(), ctx.plan.run, ctx.head.head_dim, flash.as_dict()))
    pending: deque[tuple[optuna.Trial, KernelParams, Future[Compiled]]] = deque()
    done = 0
    while True:
        spent = len(measured(study.get_trials(deepcopy=False)))
        over = ctx.clock() >= ctx.deadline or spent >= ctx.plan.trials
        if not over:
            _top_up(study, ctx, pending)
        if over or not pending:
            break
        trial, params, future = pending.popleft()
        done += _run_trial(study, ctx, trial, params, future.result())
    for trial, _, _ in pending:  # asked, never timed: the budget ended first
        trial.set_user_attr("outcome", "unused")
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return done


def _seen(study: optuna.Study, asking: int) -> set[KernelParams]:
    """Configurations measured or in flight in any worker (the trial being asked aside, and
    trials a dead run left behind, whose configurations are queued again)."""
    return {p for t in study.get_trials(deepcopy=False)
            if t.number != asking and t.user_attrs.get("outcome") not in ("skipped", "unused")
            and not cut_off(t) and (p := params_of(t)) is not None}


def _top_up(study: optuna.Study, ctx: SearchContext,
            pending: deque[tuple[optuna.Trial, KernelParams, Future[Compiled]]]) -> None:
    import optuna

    allowed = set(ctx.head.feasible) | {ctx.head.current}
    while len(pending) < LOOKAHEAD + 1:
        trial = study.ask()
        params = suggest(trial, ctx.head.options)
        seen = _seen(study, trial.number) | {p for _, p, _ in pending}
        if params in allowed and params not in seen:
            trial.set_user_attr("config", params.label)
            pending.append((trial, params, ctx.pool.submit(params, ctx.head.head_dim)))
            continue
        trial.set_user_attr("outcome", "skipped")
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
        free = [p for p in ctx.head.feasible if p not in seen]
        if not free:
            return  # every configuration the limits allow is measured or in flight
        study.enqueue_trial(_nearest(params, free, ctx.head.options).as_dict())


def _nearest(params: KernelParams, free: Sequence[KernelParams],
             options: dict[str, tuple[Any, ...]]) -> KernelParams:
    def coords(p: KernelParams) -> tuple[float, ...]:
        return tuple(sorted(options[n], key=float).index(getattr(p, n)) / max(1, len(options[n]) - 1)
                     for n in TUNABLE_NAMES)
    here = coords(params)
    return min(free, key=lambda p: math.dist(coords(p), here))


def _run_trial(study: optuna.Study, ctx: SearchContext, trial: optuna.Trial, params: KernelParams,
               compiled: Compiled) -> int:
    """Measure one compiled configuration; 1 when it cost GPU time."""
    import optuna

    state = optuna.trial.TrialState
    facts: dict[str, Any] = {"compile_s": round(compiled.seconds, 2), "cached": compiled.cached,
                             "queued": ctx.pool.queued, "gpu": ctx.gpu}
    if params == ctx.head.current:
        facts["current"] = True
    if compiled.library is None:
        return _finish(study, ctx, trial, params, state.FAIL, "rejected", facts,
                       limit="compile", detail=compiled.error)
    rejection = after_compile(params, ctx.head.head_dim, ctx.limits, ctx.plan.occupancy_floor,
                              list(compiled.kernels))
    if rejection is not None and params != ctx.head.current:
        return _finish(study, ctx, trial, params, state.FAIL, "rejected", facts,
                       limit=rejection.limit, detail=rejection.text)
    try:
        check = ctx.measurer.correctness(compiled.library, ctx.head.head_dim)
        if not check.ok:
            return _finish(study, ctx, trial, params, state.FAIL, "incorrect", facts, detail=check.detail)
        short = geomean_tflops(ctx.measurer.timing(compiled.library, ctx.head.head_dim, True), ctx.flops())
        trial.set_user_attr("short", short.as_dict())
        trial.report(short.value, 0)
        if params != ctx.head.current and trial.should_prune():
            return _finish(study, ctx, trial, params, state.PRUNED, "pruned", facts, estimate=short)
        full = geomean_tflops(ctx.measurer.timing(compiled.library, ctx.head.head_dim, False), ctx.flops())
    except MeasureCrashed as exc:
        ctx.measurer.restart()
        return _finish(study, ctx, trial, params, state.FAIL, "crashed", facts, detail=str(exc)[:300])
    except MeasureFailed as exc:
        return _finish(study, ctx, trial, params, state.FAIL, "failed", facts, detail=str(exc)[:300])
    return _finish(study, ctx, trial, params, state.COMPLETE, "timed", facts, estimate=full)


def _finish(study: optuna.Study, ctx: SearchContext, trial: optuna.Trial, params: KernelParams,
            state: optuna.trial.TrialState, outcome: str, facts: dict[str, Any],
            estimate: Estimate | None = None, **more: Any) -> int:
    import optuna

    spent = outcome not in ("rejected",)
    trial.set_user_attr("outcome", outcome)
    trial.set_user_attr("measured", spent)
    for key, value in {**facts, **more}.items():
        trial.set_user_attr(key, value)
    numbers: dict[str, Any] = {}
    if estimate is not None:
        trial.set_user_attr("estimate", estimate.as_dict())
        numbers = {"tflops": round(estimate.value, 2), "lo": round(estimate.lo, 2),
                   "hi": round(estimate.hi, 2)}
    if state == optuna.trial.TrialState.COMPLETE and estimate is not None:
        study.tell(trial, estimate.value)
    else:
        study.tell(trial, state=state)
    ctx.record(events.tune_trial(ctx.clock(), ctx.plan.run, ctx.head.head_dim, trial.number, params.label,
                                 outcome, **numbers, **facts, **more))
    return int(spent)
