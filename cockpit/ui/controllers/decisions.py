"""After a bench run: keep (commit the kernel's files) or revert (restore them), then, below 0.5x,
the suggestion to profile first. Git is touched only on a yes, only on the paths the bench named
(the workload's sources and module folders), and every answer is journaled."""

from __future__ import annotations

from cockpit.errors import CockpitError
from cockpit.gates import kernel_git
from cockpit.gates.bench.result import BenchResult
from cockpit.session import events as ev
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
    paths = list(keep.touched)
    named = " ".join(paths)
    try:
        stat = kernel_git.kernel_diff_stat(repo, paths)
    except CockpitError as exc:
        stat = f"(no git diff: {exc})"
    if keep.action == "keep":
        question = (f"{keep.summary}\n\nCommit {named} with this message?\n  "
                    f"{keep.commit_message}\n\n{stat or f'{named}: no uncommitted change'}")
    else:
        question = (f"{keep.summary}\n\nRestore {named} to the last kept version "
                    f"(HEAD)? This discards:\n{stat or f'nothing: {named} has no uncommitted change'}")

    def answered(yes: bool | None) -> None:
        details: dict[str, object] = {"improvement": keep.improvement, "reference": keep.reference,
                                      **({"interval": list(keep.interval)} if keep.interval else {})}
        if yes:
            try:
                if keep.action == "keep":
                    details["commit"] = kernel_git.commit_kernel(repo, paths, keep.commit_message)
                    host.notify(f"Kept: committed {named} as {details['commit']}.", markup=False)
                else:
                    details["restored"] = kernel_git.restore_kernel(repo, paths)
                    host.notify(f"Reverted: {named} back to the last kept version.", markup=False)
            except CockpitError as exc:
                host.notify(str(exc), severity="error", markup=False, timeout=15)
                details["error"] = str(exc)
        host.append([ev.decision(host.clock.now(), keep.action, keep.summary,
                                 bool(yes) and "error" not in details, **details)])
        _suggest_profile(host, result)

    host.push_screen(ConfirmDialog(question), answered)


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
