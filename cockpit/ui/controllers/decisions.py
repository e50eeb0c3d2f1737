"""After a bench run: keep (commit the kernel's files) or revert (restore them), then, below 0.5x,
the suggestion to profile first. The question and the answer are gates/bench/answer.py's, as
`cockpit decision` asks and answers them: git touched only on a yes, every answer journaled."""

from __future__ import annotations

from cockpit.gates.bench.answer import answer, question
from cockpit.gates.bench.result import BenchResult
from cockpit.session import timer
from cockpit.ui.controllers.host import CockpitHost
from cockpit.ui.screens.dialogs import ConfirmDialog


def offer_bench_decision(host: CockpitHost, result: BenchResult) -> None:
    """Ask to KEEP or REVERT as the bench's verdict says; then offer to move to Profile."""
    keep = result.keep
    if keep is None or not keep.decides:
        _suggest_profile(host, result)
        return
    repo = host.workspace.root

    def answered(yes: bool | None) -> None:
        done = answer(repo, keep, bool(yes), host.clock.now())
        if done.error is not None:
            host.notify(done.error, severity="error", markup=False, timeout=15)
        elif yes:
            host.notify(done.said, markup=False)
        host.append([done.event])
        _suggest_profile(host, result)

    host.push_screen(ConfirmDialog(question(repo, keep)), answered)


def _suggest_profile(host: CockpitHost, result: BenchResult) -> None:
    """Below 0.5x the rule is: profile before changing code. Offer to move the timer there."""
    state = host.live.state if host.live else None
    if result.level != "CRITICAL" or state is None:
        return
    if "Profile" not in [p.name for p in state.phases]:
        return
    if state.current_run is not None and state.current_run.phase == "Profile":
        return

    def moved(yes: bool | None) -> None:
        if yes and host.intent(lambda s, now: timer.goto(s, now, "Profile")):
            host.notify("Phase: Profile. Run the profile gate before changing code.")

    host.push_screen(ConfirmDialog(profile_question(result)), moved)


def profile_question(bench: BenchResult) -> str:
    """"0.40x vs torch.softmax is CRITICAL: …": the speedup against the workload's own baseline."""
    speedup = (f"{bench.speedup:.2f}x {bench.vs_label(bench.baseline)}"
               if bench.speedup is not None else "The speedup")
    return (f"{speedup} is CRITICAL: profile before changing code. Move the phase timer to "
            "Profile?")
