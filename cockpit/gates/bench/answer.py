"""The engineer's answer to a bench's keep/revert verdict: the question (what a yes would do to the
kernel's files, with git's diff stat), and the answer carried out and journaled. The TUI's dialog
(ui/controllers/decisions.py) and `cockpit decision` (cli/decision.py) ask and answer through here.

Git is touched only on a yes, only on the paths the bench named (the workload's sources and module
folders: kernel_git.py), and every answer, a no included, is one `decision` event."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cockpit.analysis.keep import KeepResult
from cockpit.errors import CockpitError
from cockpit.gates import kernel_git
from cockpit.session import events as ev
from cockpit.session.journal import Event


def question(repo: Path, keep: KeepResult) -> str:
    """The verdict, what a yes does to the kernel's files, and what git says of them."""
    named = " ".join(keep.touched)
    try:
        stat = kernel_git.kernel_diff_stat(repo, list(keep.touched))
    except CockpitError as exc:
        stat = f"(no git diff: {exc})"
    if keep.action == "keep":
        return (f"{keep.summary}\n\nCommit {named} with this message?\n  "
                f"{keep.commit_message}\n\n{stat or f'{named}: no uncommitted change'}")
    return (f"{keep.summary}\n\nRestore {named} to the last kept version "
            f"(HEAD)? This discards:\n{stat or f'nothing: {named} has no uncommitted change'}")


@dataclass(frozen=True)
class Answered:
    event: Event
    """The `decision` event to journal."""
    said: str
    """What happened, in one line: "Kept: committed … as abc1234.", "Declined: …"."""
    error: str | None = None
    """Git's one line when a yes could not be carried out (the answer is journaled as not done)."""


def answer(repo: Path, keep: KeepResult, yes: bool, now: float) -> Answered:
    """A yes commits (KEEP) or restores (REVERT) the kernel's files; a no changes nothing. Either
    way the answer is an event, `confirmed` only when git did what the verdict asked."""
    paths = list(keep.touched)
    named = " ".join(paths)
    details: dict[str, object] = {"improvement": keep.improvement, "reference": keep.reference,
                                  **({"interval": list(keep.interval)} if keep.interval else {})}
    said, error = f"Declined: {named or 'the kernel'} left as it is.", None
    if yes:
        try:
            if keep.action == "keep":
                details["commit"] = kernel_git.commit_kernel(repo, paths, keep.commit_message)
                said = f"Kept: committed {named} as {details['commit']}."
            else:
                details["restored"] = kernel_git.restore_kernel(repo, paths)
                said = f"Reverted: {named} back to the last kept version."
        except CockpitError as exc:
            error = str(exc)
            details["error"] = error
            said = f"Not carried out: {error}"
    done = ev.decision(now, keep.action, keep.summary, yes and error is None, **details)
    return Answered(done, said, error)
