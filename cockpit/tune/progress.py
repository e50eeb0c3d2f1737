"""Where a search stands, folded from the session journal's tune events: what the tune panel,
the status line and `cockpit tune`'s own progress lines show. Pure: events in, a view out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from cockpit.analysis.stats import Estimate
from cockpit.session.journal import Event
from cockpit.session.status import Activity
from cockpit.tune import events as tev

MEASURED = ("timed", "pruned", "incorrect", "crashed", "failed")


@dataclass(frozen=True)
class Best:
    head_dim: int
    config: str
    tflops: Estimate
    current_tflops: float | None
    flash_tflops: float | None
    beats_current: bool
    """With its interval above the current configuration's."""

    @property
    def vs_current(self) -> float | None:
        return self.tflops.value / self.current_tflops if self.current_tflops else None

    @property
    def vs_flash(self) -> float | None:
        return self.tflops.value / self.flash_tflops if self.flash_tflops else None


@dataclass(frozen=True)
class TuneProgress:
    run: str
    started: float
    budget_s: float
    planned: int
    """Trials planned over every head dim."""
    measured: int
    best: tuple[Best, ...]
    rejected: dict[str, int]
    """Before compiling (the limits) and after (ptxas's spills and registers), by limit."""
    queued: int
    """Compiles waiting in the last worker that reported."""
    outcomes: dict[str, int]
    chart: tuple[float, ...]
    """TFLOP/s of each timed configuration, in order: the panel's sparkline."""
    target: str = ""
    finished: float | None = None
    summary: str = ""
    last_t: float = 0.0
    recent: tuple[str, ...] = field(default=())
    searching: int | None = None
    """The head dim of the latest trial."""

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
        """The status line: `tuning: 37/100, best 1.04× FLASH`."""
        if not self.running:
            return f"tuned: {self.summary}" if self.summary else "tuned"
        text = f"tuning: {self.measured}/{self.planned}"
        # The head dim being searched now; its best against FLASH is what is moving.
        best = next((b for b in self.best if b.head_dim == self.searching), None)
        if best is not None and best.vs_flash:
            which = f" (D={best.head_dim})" if len(self.best) > 1 else ""
            text += f", best {best.vs_flash:.2f}× FLASH{which}"
        return text


def tune_progress(journal: Iterable[Event]) -> TuneProgress | None:
    """The latest search in these events, or None when there was none."""
    started: Event | None = None
    trials: list[Event] = []
    flash: dict[int, float] = {}
    finished: Event | None = None
    for e in journal:
        kind = e.get("type")
        if kind == tev.TUNE_STARTED:
            if started is None or e.get("run") != started.get("run"):
                trials, flash, finished = [], {}, None
            started = e
        elif started is None or e.get("run") != started.get("run"):
            continue
        elif kind == tev.TUNE_TRIAL:
            trials.append(e)
        elif kind == tev.TUNE_BASELINE:
            flash[int(e["d"])] = float(e["flash"]["value"])
        elif kind == tev.TUNE_FINISHED:
            finished = e
    if started is None:
        return None
    rejected = Counter({limit: n for space in started.get("spaces", [])
                        for limit, n in space.get("rejected_by", {}).items()})
    rejected.update(str(t.get("limit")) for t in trials if t.get("outcome") == "rejected")
    outcomes = Counter(str(t.get("outcome")) for t in trials)
    head_dims = [int(s["head_dim"]) for s in started.get("spaces", [])]
    return TuneProgress(
        run=str(started["run"]), started=float(started["t"]), budget_s=float(started.get("budget_s", 0)),
        planned=int(started.get("trials", 0)) * max(1, len(head_dims)),
        measured=sum(outcomes[o] for o in MEASURED),
        best=tuple(b for d in head_dims if (b := _best(d, trials, flash.get(d))) is not None),
        rejected=dict(rejected), queued=int(trials[-1].get("queued", 0)) if trials else 0,
        outcomes=dict(outcomes),
        chart=tuple(float(t["tflops"]) for t in trials if t.get("outcome") == "timed" and "tflops" in t),
        target=str(started.get("target", "")),
        finished=float(finished["t"]) if finished else None,
        summary=str(finished.get("summary", "")) if finished is not None else "",
        last_t=float(trials[-1]["t"]) if trials else float(started["t"]),
        searching=int(trials[-1]["d"]) if trials else None,
        recent=tuple(f"D={t['d']} {t['config']}: {t['outcome']}"
                     + (f" {t['tflops']:.1f} TFLOP/s" if "tflops" in t else "") for t in trials[-3:]),
    )


def _best(head_dim: int, trials: list[Event], flash: float | None) -> Best | None:
    timed = [t for t in trials if t.get("d") == head_dim and t.get("outcome") == "timed" and "tflops" in t]
    if not timed:
        return None
    top = max(timed, key=lambda t: float(t["tflops"]))
    current = next((t for t in timed if t.get("current")), None)
    estimate = Estimate(float(top["tflops"]), float(top["lo"]), float(top["hi"]))
    if current is None:
        return Best(head_dim, str(top["config"]), estimate, None, flash, False)
    return Best(head_dim, str(top["config"]), estimate, float(current["tflops"]), flash,
                top is not current and estimate.lo > float(current["hi"]))


def tune_activity(progress: TuneProgress | None, now: float) -> Activity | None:
    """The phase timer's status-line activity while a search runs; None when none does."""
    if progress is None or not progress.running:
        return None
    return Activity(progress.activity(), progress.eta_s(now),
                    min(1.0, progress.measured / progress.planned) if progress.planned else None)
