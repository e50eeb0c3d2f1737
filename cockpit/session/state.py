"""Session state as a pure fold of journal events — the one place events become state."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cockpit.config import PhaseSpec
from cockpit.errors import CockpitError
from cockpit.session import bounds
from cockpit.session import events as ev
from cockpit.session.gate_run import GateRunRecord as GateRunRecord
from cockpit.session.gate_run import gate_update, int_or_none
from cockpit.session.journal import Event
from cockpit.session.paths import resolve_stored


@dataclass(frozen=True)
class PhaseRun:
    """One stretch of time spent in a phase (a phase can be revisited)."""

    phase: str
    started_t: float
    ended_t: float | None = None
    outcome: str | None = None  # "done" | "skipped" once ended


@dataclass(frozen=True)
class Pause:
    started_t: float
    ended_t: float | None = None


@dataclass(frozen=True)
class StatusEntry:
    t: float
    text: str
    auto: bool


@dataclass(frozen=True)
class SessionState:
    id: str
    objective: str
    template: str
    phases: tuple[PhaseSpec, ...]
    created_t: float
    gpu_cost_per_hour: float
    runs: tuple[PhaseRun, ...] = ()
    pauses: tuple[Pause, ...] = ()
    statuses: tuple[StatusEntry, ...] = ()
    notes: tuple[StatusEntry, ...] = ()
    gate_runs: tuple[GateRunRecord, ...] = ()
    applied_patterns: tuple[int, ...] = ()
    """Ids of the patterns marked applied in this session, in order."""
    overrun_runs: frozenset[int] = field(default_factory=frozenset)
    """Indices into `runs` whose budget overrun has been journaled."""
    ended_t: float | None = None
    attached_pid: int | None = None
    """pid of a cockpit that opened the session and has not closed it (still running, or crashed)."""
    last_event_t: float = 0.0
    event_count: int = 0
    status_count: int = 0
    """Statuses in the whole journal (`statuses` holds the latest `recent` of them when bounded)."""
    note_count: int = 0
    gate_run_count: int = 0
    recent: int | None = None
    """None: every status, note and gate run is here; else only the latest `recent` of each (and
    the latest tune's events): what the TUI and `cockpit status` need of a week-long journal."""
    tune_events: tuple[Event, ...] = ()
    """The `cockpit tune` events (tune_*), as journaled: the tune panel folds its progress from them."""
    refused: tuple[str, ...] = ()
    """Values of the first event shown otherwise than written (session/bounds.py), one line each."""

    @property
    def is_open(self) -> bool:
        return self.ended_t is None

    @property
    def started(self) -> bool:
        return bool(self.runs)

    @property
    def current_run(self) -> PhaseRun | None:
        if self.runs and self.runs[-1].ended_t is None:
            return self.runs[-1]
        return None

    @property
    def paused(self) -> bool:
        return bool(self.pauses) and self.pauses[-1].ended_t is None

    def last_run(self, gate: str, finished: bool = False) -> GateRunRecord | None:
        """The latest run of `gate` (only finished ones if asked)."""
        for run in reversed(self.gate_runs):
            if run.gate == gate and (run.finished or not finished):
                return run
        return None

    def phase(self, name: str) -> PhaseSpec:
        for spec in self.phases:
            if spec.name == name:
                return spec
        raise CockpitError(f"session {self.id} has no phase '{name}'")

    def phase_index(self, name: str) -> int:
        return [p.name for p in self.phases].index(self.phase(name).name)


class Fold:
    """Mutable accumulator behind `fold`; keeps incremental application cheap."""

    def __init__(self, first: Event, workspace: Path | None, recent: int | None = None) -> None:
        self.workspace = workspace
        self.recent = recent
        if first.get("type") != ev.SESSION_STARTED:
            raise CockpitError(
                "the journal does not begin with a session_started event; "
                "it is not a cockpit session (create one with `cockpit new \"OBJECTIVE\"`)"
            )
        objective, long = bounds.objective_read(first.get("objective", ""))
        listed = first.get("phases")
        phases, budgets = bounds.phases_read(listed if isinstance(listed, list) else [])
        cost, price = bounds.cost_read(first.get("gpu_cost_per_hour"))
        self.base = SessionState(
            id=str(first.get("id", "?")),
            objective=objective,
            template=str(first.get("template", "")),
            phases=phases,
            created_t=float(first["t"]),
            gpu_cost_per_hour=cost,
            refused=tuple(line for line in (long, budgets, price) if line),
        )
        self.runs: list[PhaseRun] = []
        self.extra_phases: list[PhaseSpec] = []
        self.pauses: list[Pause] = []
        self.statuses: list[StatusEntry] = []
        self.notes: list[StatusEntry] = []
        self.overrun: set[int] = set()
        self.gate_runs: list[GateRunRecord] = []
        self.applied: list[int] = []
        self.gate_index: dict[str, int] = {}
        self.tune: list[Event] = []
        self.ended_t: float | None = None
        self.attached_pid: int | None = None
        self.last_t = float(first["t"])
        self.count = 1
        self.status_count = self.note_count = self.gate_run_count = 0

    def apply(self, event: Event) -> None:
        t = float(event["t"])
        kind = event["type"]
        self.last_t = max(self.last_t, t)
        self.count += 1
        step = _STEPS.get(kind) if isinstance(kind, str) else None
        if step is not None:
            step(self, event, t)
        elif str(kind).startswith("tune_"):
            self._tune_event(event)

    def _phase_started(self, event: Event, t: float) -> None:
        self._close_run(t, "done")
        name = str(event.get("phase", "?"))
        if name not in {p.name for p in (*self.base.phases, *self.extra_phases)}:
            # a phase the template does not have (a hand edit, a template changed since):
            # shown, with no budget to overrun, never fatal
            self.extra_phases.append(PhaseSpec(name, 0.0))
        self.runs.append(PhaseRun(name, t))

    def _phase_ended(self, event: Event, t: float) -> None:
        self._close_run(t, str(event.get("outcome", "done")))

    def _phase_over_budget(self, event: Event, t: float) -> None:
        if self.runs:
            self.overrun.add(len(self.runs) - 1)

    def _timer_paused(self, event: Event, t: float) -> None:
        if not self.pauses or self.pauses[-1].ended_t is not None:
            self.pauses.append(Pause(t))

    def _timer_resumed(self, event: Event, t: float) -> None:
        self._close_pause(t)

    def _status(self, event: Event, t: float) -> None:
        self.status_count += 1
        self.statuses.append(StatusEntry(t, bounds.line_cut(event.get("text", "")), bool(event.get("auto"))))
        self._trim(self.statuses)

    def _note(self, event: Event, t: float) -> None:
        self.note_count += 1
        self.notes.append(StatusEntry(t, bounds.line_cut(event.get("text", "")), False))
        self._trim(self.notes)

    def _gate_started(self, event: Event, t: float) -> None:
        self.gate_run_count += 1
        run = GateRunRecord(str(event.get("run_id", "")), str(event.get("gate", "")), t,
                            int_or_none(event.get("pid")), self._path(event.get("log")),
                            owner=int_or_none(event.get("owner")),
                            pid_start=int_or_none(event.get("pid_start")),
                            mark=mark if isinstance(mark := event.get("mark"), str) else None)
        self.gate_index[run.run_id] = len(self.gate_runs)
        self.gate_runs.append(run)
        if self._trim(self.gate_runs):
            self.gate_index = {r.run_id: i for i, r in enumerate(self.gate_runs)}

    def _gate_finished_or_stalled(self, event: Event, t: float) -> None:
        index = self.gate_index.get(str(event.get("run_id", "")))
        if index is not None:
            self.gate_runs[index] = gate_update(self.gate_runs[index], event, t, self._path)

    def _pattern_applied(self, event: Event, t: float) -> None:
        pid = int_or_none(event.get("pattern"))
        if pid is not None and pid not in self.applied:
            self.applied.append(pid)

    def _app_opened(self, event: Event, t: float) -> None:
        self.attached_pid = int(event.get("pid", 0)) or None

    def _app_closed(self, event: Event, t: float) -> None:
        if event.get("pid") == self.attached_pid:
            self.attached_pid = None

    def _tune_event(self, event: Event) -> None:
        if (self.recent is not None and event["type"] == "tune_started" and self.tune
                and event.get("run") != self.tune[0].get("run")):
            self.tune = []  # bounded: the latest search's events (a resumed one keeps its own)
        self.tune.append(event)

    def _session_ended(self, event: Event, t: float) -> None:
        self._close_pause(t)
        self._close_run(t, "done")
        self.ended_t = t

    def _trim(self, items: list[Any]) -> bool:
        """Keep a bounded fold's list to its latest `recent` items (cut in batches: amortized
        O(1) per event). True when it was cut."""
        if self.recent is None or len(items) <= 2 * self.recent:
            return False
        del items[: len(items) - self.recent]
        return True

    def _path(self, stored: Any) -> str:
        text = str(stored or "")
        if self.workspace is None or not text:
            return text
        return str(resolve_stored(text, self.workspace))

    def _close_run(self, t: float, outcome: str) -> None:
        if self.runs and self.runs[-1].ended_t is None:
            last = self.runs[-1]
            self.runs[-1] = PhaseRun(last.phase, last.started_t, t, outcome)

    def _close_pause(self, t: float) -> None:
        if self.pauses and self.pauses[-1].ended_t is None:
            self.pauses[-1] = Pause(self.pauses[-1].started_t, t)

    def freeze(self) -> SessionState:
        b = self.base
        return SessionState(
            id=b.id, objective=b.objective, template=b.template, phases=(*b.phases, *self.extra_phases),
            created_t=b.created_t, gpu_cost_per_hour=b.gpu_cost_per_hour,
            runs=tuple(self.runs), pauses=tuple(self.pauses), statuses=self._latest(self.statuses),
            notes=self._latest(self.notes), gate_runs=self._latest(self.gate_runs),
            applied_patterns=tuple(self.applied), overrun_runs=frozenset(self.overrun),
            ended_t=self.ended_t, attached_pid=self.attached_pid, last_event_t=self.last_t,
            event_count=self.count, tune_events=tuple(self.tune), status_count=self.status_count,
            note_count=self.note_count, gate_run_count=self.gate_run_count, recent=self.recent,
            refused=b.refused,
        )

    def _latest(self, items: list[Any]) -> tuple[Any, ...]:
        return tuple(items if self.recent is None else items[-self.recent:])


_STEPS: dict[str, Callable[[Fold, Event, float], None]] = {
    ev.PHASE_STARTED: Fold._phase_started,
    ev.PHASE_ENDED: Fold._phase_ended,
    ev.PHASE_OVER_BUDGET: Fold._phase_over_budget,
    ev.TIMER_PAUSED: Fold._timer_paused,
    ev.TIMER_RESUMED: Fold._timer_resumed,
    ev.STATUS: Fold._status,
    ev.NOTE: Fold._note,
    ev.GATE_STARTED: Fold._gate_started,
    ev.GATE_FINISHED: Fold._gate_finished_or_stalled,
    ev.GATE_STALLED: Fold._gate_finished_or_stalled,
    ev.PATTERN_APPLIED: Fold._pattern_applied,
    ev.APP_OPENED: Fold._app_opened,
    ev.APP_CLOSED: Fold._app_closed,
    ev.SESSION_ENDED: Fold._session_ended,
}
"""What each journal event does to the fold (the `tune_*` events are kept as they are)."""


class SessionFold:
    """Folds events in as they arrive; `state` is always the fold of everything seen.

    Given the workspace, the paths the journal stores (relative, or absolute from an older
    journal) come out as paths in this workspace.
    """

    def __init__(self, events: Iterable[Event], workspace: Path | None = None,
                 recent: int | None = None) -> None:
        it = iter(events)
        first = next(it, None)
        if first is None:
            raise CockpitError(
                "the journal holds no events; it is not a cockpit session "
                "(create one with `cockpit new \"OBJECTIVE\"`)"
            )
        self._fold = Fold(first, workspace, recent)
        for event in it:
            self._fold.apply(event)
        self.state = self._fold.freeze()

    @classmethod
    def resume(cls, fold: Fold) -> SessionFold:
        """Go on from a fold saved earlier (session/saved_state.py)."""
        self = cls.__new__(cls)
        self._fold = fold
        self.state = fold.freeze()
        return self

    def extend(self, events: Iterable[Event]) -> SessionState:
        for event in events:
            self._fold.apply(event)
        self.state = self._fold.freeze()
        return self.state

    def apply(self, event: Event) -> None:
        """Fold in one event without freezing the state (a stream: call `freeze` at its end)."""
        self._fold.apply(event)

    def freeze(self) -> SessionState:
        self.state = self._fold.freeze()
        return self.state


def fold(events: Iterable[Event], workspace: Path | None = None) -> SessionState:
    """The session state that a sequence of journal events describes."""
    return SessionFold(events, workspace).state
