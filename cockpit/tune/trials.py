"""A study's trials: which configurations are measured, held or queued, read from the study (never
from one box's memory), so seeds are queued once however many boxes start the same search; which
RUNNING trials are dead (the heartbeat rule of storage.py), failed with their configurations
queued again only where no other trial has them; and a worker's study in a shared store, which
tags every trial it asks with its owner and beats for it until told."""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from cockpit.workload.tuned import KnobValues

if TYPE_CHECKING:
    import optuna


class StoreHeartbeat(Protocol):
    """What the heartbeat rule reads of a store (storage.Store, which imports this module)."""

    @property
    def shared(self) -> bool: ...

    @property
    def owner(self) -> str: ...

    @property
    def heartbeat_s(self) -> int: ...

    @property
    def grace_s(self) -> int: ...

NOT_SETTLED = ("skipped", "unused")
"""Outcomes that leave a configuration free: proposed and passed over, or asked and never timed."""

OWNER = "cockpit:owner"
"""The system attr naming the run that asked a trial in a shared store: `host session run`."""
Key = tuple[tuple[str, Any], ...]


def config_of(trial: optuna.trial.FrozenTrial, names: Sequence[str]) -> KnobValues | None:
    """The configuration a trial has (its parameters) or waits for (an enqueued trial's)."""
    for source in (trial.params, trial.system_attrs.get("fixed_params")):
        if isinstance(source, dict) and source and all(n in source for n in names):
            return {n: source[n] for n in names}
    return None


def _key(config: Mapping[str, Any]) -> Key:
    return tuple(sorted(config.items()))


def _taken(trial: optuna.trial.FrozenTrial) -> bool:
    """Measured, in flight or queued: a configuration no one should queue or measure again."""
    import optuna

    if trial.state == optuna.trial.TrialState.FAIL:
        return "outcome" in trial.user_attrs and trial.user_attrs["outcome"] not in NOT_SETTLED
    return True


def taken(study: optuna.Study, names: Sequence[str], leave_out: Iterable[int] = ()) -> set[Key]:
    out = set()
    skip = set(leave_out)
    for t in study.get_trials(deepcopy=False):
        if t._trial_id not in skip and _taken(t) and (c := config_of(t, names)) is not None:
            out.add(_key(c))
    return out


def enqueue_new(study: optuna.Study, configs: Iterable[Mapping[str, Any]], names: Sequence[str]) -> int:
    """Queue the configurations no trial of the study has, holds or waits for; how many were queued."""
    seen = taken(study, names)
    queued = 0
    for config in configs:
        if _key(config) not in seen:
            study.enqueue_trial(dict(config))
            seen.add(_key(config))
            queued += 1
    return queued


def fail_and_requeue(study: optuna.Study, ids: set[int], names: Sequence[str]) -> list[KnobValues]:
    """Fail the RUNNING trials `ids` and queue their configurations again where no other trial has,
    holds or waits for them; returns those queued."""
    import optuna

    if not ids:
        return []
    state = optuna.trial.TrialState
    seen = taken(study, names, leave_out=ids)
    again = []
    for t in study.get_trials(deepcopy=False, states=(state.RUNNING,)):
        if t._trial_id not in ids:
            continue
        try:
            if not study._storage.set_trial_state_values(t._trial_id, state=state.FAIL):
                continue
        except optuna.exceptions.UpdateFinishedTrialError:
            continue  # another box failed it first, and queued it again
        config = config_of(t, names)
        if config is not None and _key(config) not in seen:
            study.enqueue_trial(config)
            seen.add(_key(config))
            again.append(config)
    return again


def joined(study: optuna.Study, where: str, queued: int, seeds: int) -> str:
    """What a run found in a shared study as it started, in a line."""
    measured = sum(1 for t in study.get_trials(deepcopy=False) if t.user_attrs.get("measured"))
    if not measured and queued == seeds:
        return f"study {study.study_name!r} in {where}: {queued} seed configurations queued"
    return (f"study {study.study_name!r} in {where}: joined, {measured} configurations measured there "
            f"already; {queued} of this box's {seeds} seed configurations queued (the others are queued "
            "or measured already)")


def fail_interrupted(study: optuna.Study, store: StoreHeartbeat, names: Sequence[str]) -> list[KnobValues]:
    """On --resume: fail the RUNNING trials its dead run left (one box: all of them; shared: the
    run's own and the stale ones, never another box's live trial); their configurations are queued
    again. Returns those."""
    import optuna

    running = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
    if not store.shared:
        return fail_and_requeue(study, {t._trial_id for t in running}, names)
    mine = {t._trial_id for t in running if t.system_attrs.get(OWNER) == store.owner}
    return fail_and_requeue(study, mine | stale_ids(study, store), names)


def fail_stale(study: optuna.Study, store: StoreHeartbeat, names: Sequence[str]) -> list[KnobValues]:
    return fail_and_requeue(study, stale_ids(study, store), names) if store.shared else []


def stale_ids(study: optuna.Study, store: StoreHeartbeat) -> set[int]:
    """RUNNING trials whose heartbeat is older than the grace period; and those with neither a beat
    nor an owner (a worker died between its ask and its first beat) started long before that."""
    import optuna
    from optuna.storages._heartbeat import BaseHeartbeat, is_heartbeat_enabled

    storage = study._storage
    if not (isinstance(storage, BaseHeartbeat) and is_heartbeat_enabled(storage)):
        return set()
    ids = set(storage._get_stale_trial_ids(study._study_id))
    old = time.time() - 3 * store.grace_s
    for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        started = t.datetime_start.timestamp() if t.datetime_start is not None else None
        if OWNER not in t.system_attrs and started is not None and started < old:
            ids.add(t._trial_id)
    return ids


class _Beat:
    """Beats for the trials a worker holds, in a thread of its own."""

    def __init__(self, storage: Any, every_s: int) -> None:
        self.storage = storage
        self.every_s = every_s
        self.held: set[int] = set()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def hold(self, trial_id: int) -> None:
        self._beat(trial_id)
        with self.lock:
            self.held.add(trial_id)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="tune-heartbeat", daemon=True)
                self.thread.start()

    def drop(self, trial_id: int) -> None:
        with self.lock:
            self.held.discard(trial_id)

    def _run(self) -> None:
        while True:
            time.sleep(self.every_s)
            with self.lock:
                held = list(self.held)
            for trial_id in held:
                self._beat(trial_id)

    def _beat(self, trial_id: int) -> None:
        with suppress(Exception):  # the database out of reach: the next beat tries again (GRACE_S)
            self.storage.record_heartbeat(trial_id)


_BEATS: dict[int, _Beat] = {}
_BEATS_LOCK = threading.Lock()


@cache
def shared_study() -> type:
    import optuna

    class SharedStudy(optuna.Study):
        """A worker's study in a shared store: every trial it asks carries its owner and is beaten
        until told; stale trials (a dead box's) are failed and queued again as it asks."""

        def __init__(self, name: str, storage: Any, sampler: Any, pruner: Any, store: StoreHeartbeat,
                     names: tuple[str, ...]) -> None:
            super().__init__(study_name=name, storage=storage, sampler=sampler, pruner=pruner)
            self.store = store
            self.names = names
            with _BEATS_LOCK:
                self.beat = _BEATS.setdefault(id(storage), _Beat(storage, store.heartbeat_s))
            self.swept = 0.0

        def ask(self, fixed_distributions: Any = None) -> optuna.Trial:
            if time.monotonic() - self.swept >= self.store.heartbeat_s:
                self.swept = time.monotonic()
                fail_stale(self, self.store, self.names)
            with warnings.catch_warnings():  # "heartbeat is meant for study.optimize": known
                warnings.simplefilter("ignore")
                trial = super().ask(fixed_distributions)
            self._storage.set_trial_system_attr(trial._trial_id, OWNER, self.store.owner)
            self.beat.hold(trial._trial_id)
            return trial

        def tell(self, trial: Any, values: Any = None, state: Any = None,
                 skip_if_finished: bool = False) -> optuna.trial.FrozenTrial:
            trial_id = trial._trial_id if isinstance(trial, optuna.Trial) else \
                self._storage.get_trial_id_from_study_id_trial_number(self._study_id, trial)
            try:
                return super().tell(trial, values, state, skip_if_finished)
            finally:
                self.beat.drop(trial_id)

    return SharedStudy
