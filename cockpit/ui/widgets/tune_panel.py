"""The tune panel: where a search stands (trial N of M, the best so far with its interval and
speedups, the compile queue, rejections by limit, ETA against the budget; at its end what it kept
and how sure it is: regret, tie, re-confirm) and a sparkline of every timed configuration's value
(TFLOP/s, or × the workload's baseline). It renders a `TuneProgress`; the host folds that from the
session journal and calls `show` (text at most twice a second, the chart only when a trial lands)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from cockpit.printable import printable
from cockpit.session.status import fmt_duration
from cockpit.tune.confidence import confidence_lines

if TYPE_CHECKING:
    from textual.widgets import Sparkline

    from cockpit.tune.progress import Best, TuneProgress


def tune_lines(progress: TuneProgress | None, now: float) -> Text:
    """The panel's text for this moment."""
    if progress is None:
        return Text("no search in this session: cockpit tune --dry-run shows the space", style="dim")
    out = Text()
    _append_where(out, progress, now)
    out.append(f"\n{printable(progress.target)}  compile queue {progress.queued}", style="dim")
    for best in progress.best:
        _append_best(out, best, progress.unit == " TFLOP/s", printable(progress.baseline))
    _append_misses(out, progress)
    for line in progress.recent:
        out.append(f"\n  {printable(line)}", style="dim")
    return out


def _append_where(out: Text, progress: TuneProgress, now: float) -> None:
    """Where the search stands: trial N of M with its ETA and budget left, or what it ended with."""
    if not progress.running:
        out.append("tuned ", style="bold green")
        out.append(f"{progress.measured} configurations measured; {printable(progress.summary)}")
        for line in confidence_lines(progress.confidence):  # how sure: regret, tie, re-confirm
            out.append(f"\n{printable(line)}", style="dim")
        return
    out.append("tuning ", style="bold cyan")
    out.append(f"trial {progress.measured} of {progress.planned}")
    out.append(f"  ETA {fmt_duration(progress.eta_s(now))}", style="dim")
    left = max(0.0, progress.started + progress.budget_s - now)
    out.append(f" · budget left {fmt_duration(left)}", style="dim")


def _append_best(out: Text, best: Best, rate: bool, baseline: str) -> None:
    """One group's best configuration: its value with its interval (TFLOP/s when `rate`, else ×
    the baseline, whose name is the journal's words, through the door), then its speedups."""
    out.append(f"\n{printable(best.group)} best ", style="bold")
    out.append(printable(best.config))
    v = best.value
    out.append(f"  {v.value:.1f} TFLOP/s [{v.lo:.1f}, {v.hi:.1f}]" if rate else
               f"  {v.value:.2f}× {baseline} [{v.lo:.2f}, {v.hi:.2f}]",
               style="" if rate or v.value < 1 else "green")
    if best.vs_current is not None:
        style = "green" if best.beats_current else "yellow"
        out.append(f"  {best.vs_current:.2f}× current", style=style)
    if rate and best.vs_baseline is not None:
        out.append(f"  {best.vs_baseline:.2f}× {baseline}",
                   style="green" if best.vs_baseline >= 1 else "")


def _append_misses(out: Text, progress: TuneProgress) -> None:
    """The configurations rejected by a limit, and the trials that did not measure (yellow unless
    all were only pruned)."""
    if progress.rejected:
        rejected = ", ".join(f"{n} {limit}" for limit, n in progress.rejected.items())
        out.append("\nrejected: " + printable(rejected),
                   style="dim")
    outcomes = {k: v for k, v in progress.outcomes.items()
                if k in ("pruned", "incorrect", "crashed", "failed") and v}
    if outcomes:
        out.append("\n" + printable(", ".join(f"{n} {k}" for k, n in outcomes.items())),
                   style="dim" if set(outcomes) == {"pruned"} else "yellow")


class TunePanel(Vertical):
    """A search's progress and its chart."""

    DEFAULT_CSS = """
    TunePanel { height: auto; border: round $primary; padding: 0 1; }
    TunePanel > #tune-text { height: auto; }
    TunePanel > Sparkline { height: 2; margin-top: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Tune"
        self._chart: tuple[float, ...] = ()
        self._sparkline: Sparkline | None = None

    def compose(self) -> ComposeResult:
        yield Static(tune_lines(None, 0.0), id="tune-text")

    def show(self, progress: TuneProgress | None, now: float) -> None:
        self.query_one("#tune-text", Static).update(tune_lines(progress, now))
        chart = progress.chart if progress is not None else ()
        if chart != self._chart:
            self._chart = chart
            if self._sparkline is None:  # the first chart mounts it: a session that never tunes
                from textual.widgets import Sparkline  # never loads it (nor `statistics`)

                self._sparkline = Sparkline(list(chart), summary_function=max)
                self.mount(self._sparkline)
            else:
                self._sparkline.data = list(chart)
