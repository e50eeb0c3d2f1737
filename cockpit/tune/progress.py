"""Where a search stands, folded from the session journal's tune events: what the tune panel,
the status line and `cockpit tune`'s own progress lines show. Pure: events in, a view out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from cockpit import before_workloads
from cockpit.analysis.stats import Estimate
from cockpit.session.journal import Event
from cockpit.session.status import Activity
from cockpit.tune import events as tev
from cockpit.tune.confidence import GroupConfidence, read_confidence

MEASURED = ("timed", "pruned", "incorrect", "crashed", "failed")


@dataclass(frozen=True)
class Best:
    group: str
    """A workload's group ("N=4096", "D=64", "all")."""
    config: str
    value: Estimate
    """In the search's unit ("x baseline")."""
    current_value: float | None
    baseline_value: float | None
    beats_current: bool
    """With its interval above the current configuration's."""

    @property
    def vs_current(self) -> float | None:
        return self.value.value / self.current_value if self.current_value else None

    @property
    def vs_baseline(self) -> float | None:
        return self.value.value / self.baseline_value if self.baseline_value else None


@dataclass(frozen=True)
class TuneProgress:
    run: str
    started: float
    budget_s: float
    planned: int
    """Trials planned over every group."""
    measured: int
    best: tuple[Best, ...]
    rejected: dict[str, int]
    """Before compiling (the limits) and after (ptxas's spills and registers), by limit."""
    queued: int
    """Compiles waiting in the last worker that reported."""
    outcomes: dict[str, int]
    chart: tuple[float, ...]
    """Each timed configuration's value, in order: the panel's sparkline."""
    target: str = ""
    finished: float | None = None
    summary: str = ""
    last_t: float = 0.0
    recent: tuple[str, ...] = field(default=())
    searching: str | None = None
    """The group of the latest trial."""
    unit: str = ""
    """How a value reads after its number ("x torch.softmax")."""
    baseline: str = ""
    confidence: tuple[GroupConfidence, ...] | None = None
    """Per group, the regret, tie and re-confirm its end journaled; None while it runs, or for a
    search from before they were recorded."""

    @property
    def running(self) -> bool:
        return self.finished is None

    def eta_s(self, now: float) -> float:
        """Until the budget or the trial count ends the search, whichever comes first."""
        by_budget = max(0.0, self.started + self.budget_s - now)
        if self.measured == 0:
            return by_budget
        per_trial = (now - self.started) / self.measured
        return min(by_budget, per_trial * max(0, self.planned - self.measured))

    def activity(self) -> str:
        """The status line: `tuning: 37/100, best 1.04× torch.softmax`."""
        if not self.running:
            return f"tuned: {self.summary}" if self.summary else "tuned"
        text = f"tuning: {self.measured}/{self.planned}"
        # The group being searched now; its best against the baseline is what is moving.
        best = next((b for b in self.best if b.group == self.searching), None)
        if best is not None and best.vs_baseline:
            which = f" ({best.group})" if len(self.best) > 1 else ""
            text += f", best {best.vs_baseline:.2f}× {self.baseline}{which}"
        return text


@dataclass
class _SearchEvents:
    """One search's events: its start, its trials, its baselines by group, its end."""

    started: Event
    trials: list[Event] = field(default_factory=list)
    baselines: dict[str, float] = field(default_factory=dict)
    finished: Event | None = None

    def holds(self, e: Event) -> bool:
        return e.get("run") == self.started.get("run")

    def take(self, e: Event) -> None:
        kind = e.get("type")
        if kind == tev.TUNE_TRIAL:
            self.trials.append(e)
        elif kind == tev.TUNE_BASELINE:
            self.baselines[group_of(e)] = float(e["reference"]["value"])
        elif kind == tev.TUNE_FINISHED:
            self.finished = e


def latest_run(journal: Iterable[Event]) -> _SearchEvents | None:
    """The latest search's events, each in today's keys (cockpit/before_workloads.py upgrades a
    journal's older ones); a resumed search (its run started again) keeps its own."""
    run: _SearchEvents | None = None
    for e in map(before_workloads.tune_event, journal):
        if e.get("type") == tev.TUNE_STARTED:
            if run is None or not run.holds(e):
                run = _SearchEvents(e)
            else:
                run = _SearchEvents(e, run.trials, run.baselines, run.finished)
        elif run is not None and run.holds(e):
            run.take(e)
    return run


def tune_progress(journal: Iterable[Event]) -> TuneProgress | None:
    """The latest search in these events, or None when there was none."""
    run = latest_run(journal)
    if run is None:
        return None
    started, trials, finished = run.started, run.trials, run.finished
    groups = _groups(started)
    outcomes = Counter(str(t.get("outcome")) for t in trials)
    return TuneProgress(
        run=str(started["run"]), started=float(started["t"]), budget_s=float(started.get("budget_s", 0)),
        planned=_planned(started, len(groups)),
        measured=sum(outcomes[o] for o in MEASURED),
        best=tuple(b for g in groups if (b := _best(g, trials, run.baselines.get(g))) is not None),
        rejected=_rejected(started, trials), queued=int(trials[-1].get("queued", 0)) if trials else 0,
        outcomes=dict(outcomes),
        chart=tuple(v for t in trials if t.get("outcome") == "timed" and (v := _value(t)) is not None),
        target=str(started.get("target", "")),
        finished=float(finished["t"]) if finished else None,
        summary=str(finished.get("summary", "")) if finished is not None else "",
        last_t=float((trials[-1] if trials else started)["t"]),
        searching=group_of(trials[-1]) if trials else None,
        recent=tuple(f"{group_of(t)} {t['config']}: {t['outcome']}" + _reading(t, started)
                     for t in trials[-3:]),
        unit=str(started.get("unit", "")), baseline=str(started.get("baseline", "")),
        confidence=read_confidence(finished),
    )


def _groups(started: Event) -> list[str]:
    """The groups the search walks, as its start names them."""
    return [str(s["group"]) for s in started.get("spaces", [])]


def _rejected(started: Event, trials: list[Event]) -> dict[str, int]:
    """By limit: rejected before compiling (the spaces at the start) and after (the trials)."""
    rejected = Counter({limit: n for space in started.get("spaces", [])
                        for limit, n in space.get("rejected_by", {}).items()})
    rejected.update(str(t.get("limit")) for t in trials if t.get("outcome") == "rejected")
    return dict(rejected)


def _planned(started: Event, groups: int) -> int:
    """Trials per group, or fewer where a group's space holds fewer configurations."""
    trials = int(started.get("trials", 0))
    spaces = started.get("spaces", [])
    if spaces and all(isinstance(s.get("left"), int) for s in spaces):
        return sum(min(trials, int(s["left"])) for s in spaces)
    return trials * max(1, groups)


def group_of(e: Event) -> str:
    """A tune event's group ("N=4096", "all")."""
    return str(e.get("group"))


def _value(t: Event) -> float | None:
    v = t.get("value", t.get("tflops"))
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _reading(t: Event, started: Event) -> str:
    """' 1.400× torch.softmax': a trial against the baseline; ' 255.0 TFLOP/s' where it measured
    throughput (a trial that holds "tflops")."""
    v = _value(t)
    if v is None:
        return ""
    if "value" in t:
        return f" {v:.3f}× {started.get('baseline', '')}"
    return f" {v:.1f}{started.get('unit', '')}"


def _best(group: str, trials: list[Event], baseline: float | None) -> Best | None:
    timed = [t for t in trials
             if group_of(t) == group and t.get("outcome") == "timed" and _value(t) is not None]
    if not timed:
        return None
    top = max(timed, key=lambda t: _value(t) or 0.0)
    current = next((t for t in timed if t.get("current")), None)
    estimate = Estimate(_value(top) or 0.0, float(top["lo"]), float(top["hi"]))
    if current is None:
        return Best(group, str(top["config"]), estimate, None, baseline, False)
    return Best(group, str(top["config"]), estimate, _value(current), baseline,
                top is not current and estimate.lo > float(current["hi"]))


def tune_activity(progress: TuneProgress | None, now: float) -> Activity | None:
    """The phase timer's status-line activity while a search runs; None when none does."""
    if progress is None or not progress.running:
        return None
    return Activity(progress.activity(), progress.eta_s(now),
                    min(1.0, progress.measured / progress.planned) if progress.planned else None)
