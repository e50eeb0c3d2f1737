"""The tune gate's events in the session journal: small, one per trial, so the panel, the
status line and the report read a search from the journal like everything else."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from cockpit.session.events import event
from cockpit.session.journal import Event

TUNE_STARTED = "tune_started"
TUNE_BASELINE = "tune_baseline"
TUNE_TRIAL = "tune_trial"
TUNE_FINISHED = "tune_finished"


class SpaceCount(TypedDict):
    """One group's space in `tune_started`: every combination, those left to search, those the
    workload's rule rejected by reason."""

    group: str
    total: int
    left: int
    rejected_by: dict[str, int]


def tune_started(t: float, run: str, target: str, gpus: list[str], budget_s: float, trials: int,
                 spaces: Sequence[SpaceCount], seed: str, resumed: bool, **fields: Any) -> Event:
    """`spaces`: per group, total / left / rejected by limit (the dry run's numbers);
    a workload's knob search adds `workload`, `unit` ("x torch.softmax") and `baseline`."""
    return event(TUNE_STARTED, t, run=run, target=target, gpus=gpus, budget_s=budget_s, trials=trials,
                 spaces=spaces, seed=seed, resumed=resumed, **fields)


def tune_baseline(t: float, run: str, group: str, reference: dict[str, float]) -> Event:
    """The reference the search is stated against, in the search's unit (value, lo, hi): 1.0 per
    group (the unit is "x baseline"). Older journals' keys are upgraded where they are read
    (cockpit/before_workloads.py's `tune_event`)."""
    return event(TUNE_BASELINE, t, run=run, group=group, reference=reference)


def tune_trial(t: float, run: str, group: str, number: int, config: str, outcome: str,
               **fields: Any) -> Event:
    """One configuration of one group (a label such as "N=4096"): timed |
    pruned | incorrect | crashed | failed | rejected (+ tflops or value, lo, hi,
    compile_s, cached, queued, gpu, limit, detail where they apply)."""
    return event(TUNE_TRIAL, t, run=run, group=group, n=number, config=config, outcome=outcome, **fields)


def tune_finished(t: float, run: str, outcome: str, summary: str, **fields: Any) -> Event:
    """outcome: keep | revert | stopped; `keep` (the decision), `bench` (the confirmation as a
    bench result) and `confidence` (per group the regret, tie and re-confirm, version 1:
    cockpit/tune/confidence.py; an event from before it reads as "not recorded")."""
    return event(TUNE_FINISHED, t, run=run, outcome=outcome, summary=summary, **fields)
