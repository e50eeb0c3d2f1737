"""The tune panel: where a search stands (trial N of M, the best so far with its interval and
speedups, the compile queue, rejections by limit, ETA against the budget) and a sparkline of
every timed configuration's value (TFLOP/s, or × the workload's baseline). It renders a
`TuneProgress`; the host folds that from the session journal and calls `show` (text at most twice
a second, the chart only when a trial lands)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from cockpit.printable import printable
from cockpit.session.status import fmt_duration

if TYPE_CHECKING:
    from textual.widgets import Sparkline

    from cockpit.tune.progress import TuneProgress


def tune_lines(progress: TuneProgress | None, now: float) -> Text:
    """The panel's text for this moment."""
    if progress is None:
        return Text("no search in this session: cockpit tune --dry-run shows the space", style="dim")
    out = Text()
    if progress.running:
        out.append("tuning ", style="bold cyan")
        out.append(f"trial {progress.measured} of {progress.planned}")
        out.append(f"  ETA {fmt_duration(progress.eta_s(now))}", style="dim")
        left = max(0.0, progress.started + progress.budget_s - now)
        out.append(f" · budget left {fmt_duration(left)}", style="dim")
    else:
        out.append("tuned ", style="bold green")
        out.append(f"{progress.measured} configurations measured; {printable(progress.summary)}")
    out.append(f"\n{printable(progress.target)}  compile queue {progress.queued}", style="dim")
    baseline = printable(progress.baseline)  # the journal's words, through the door
    rate = progress.unit == " TFLOP/s"
    for best in progress.best:
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
    if progress.rejected:
        rejected = ", ".join(f"{n} {limit}" for limit, n in progress.rejected.items())
        out.append("\nrejected: " + printable(rejected),
                   style="dim")
    outcomes = {k: v for k, v in progress.outcomes.items()
                if k in ("pruned", "incorrect", "crashed", "failed") and v}
    if outcomes:
        out.append("\n" + printable(", ".join(f"{n} {k}" for k, n in outcomes.items())),
                   style="dim" if set(outcomes) == {"pruned"} else "yellow")
    for line in progress.recent:
        out.append(f"\n  {printable(line)}", style="dim")
    return out


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
