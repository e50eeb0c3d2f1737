"""What each key can do right now, and in one line why not: the key bar shows only the keys that
act in the cockpit's state, and a key or palette command that cannot act says why instead (never
a crash, never silence). Pure: the app gathers `KeyState` from what it holds, this decides."""

from __future__ import annotations

from dataclasses import dataclass

NO_SESSION = "No session open: ctrl+n starts one (H shows every session, o the pattern library)."
ENDED = ("This session has ended: it is read-only (H history, o patterns, R its report). ctrl+n starts "
         "a new one.")
NO_WORKLOAD = ("No workload here: `cockpit init` writes cockpit.toml and workloads/NAME.py (your kernel, "
               "its reference, its shapes) to fill in; env runs without one.")
IN_EDITOR = "Already in the editor: esc leaves it."


@dataclass(frozen=True)
class KeyState:
    """The facts the keys depend on."""

    session: bool = False
    """A session is shown."""
    ended: bool = False
    """It has ended (or was opened after its end): read-only."""
    editing: bool = False
    """The editor has focus."""
    running: str | None = None
    """The gate running now."""
    queued: bool = False
    selected: str = "env"
    """The gate the list has selected."""
    needs_workload: frozenset[str] = frozenset()
    """Gates that cannot run for want of a workload (none named in cockpit.toml)."""
    last_run: str | None = None
    """The gate of the session's newest run, if any (`.` runs it again)."""


SESSION_MOVES = frozenset({"next_phase", "skip_phase", "goto_phase", "toggle_pause", "post_status",
                           "end_session", "apply_matched_pattern"})
"""Keys that change the open session."""
NEEDS_A_SESSION = frozenset({"toggle_log", "search_gate", "export_report", "focus_editor"})
"""Keys that show or write something of the session shown, ended or not."""


def why_not(action: str, now: KeyState) -> str | None:
    """Why `action` cannot act in `now`, in one line; None when it acts."""
    action = action.removeprefix("app.")
    if action in SESSION_MOVES or action in {"run_gate", "rerun_gate"}:
        return _writes(action, now)
    if action in NEEDS_A_SESSION:
        if not now.session:
            return NO_SESSION
        return IN_EDITOR if action == "focus_editor" and now.editing else None
    if action == "cancel_gate" and now.running is None and not now.queued:
        return "No gate is running or queued."
    return None


def _writes(action: str, now: KeyState) -> str | None:
    if not now.session:
        return NO_SESSION
    if now.ended:
        return ENDED
    if action == "end_session" and now.running is not None:
        return f"{now.running} is running: x cancels it, then E ends the session."
    if action in {"run_gate", "rerun_gate"}:
        gate = now.selected if action == "run_gate" else now.last_run
        if gate is None:
            return "No gate has run in this session yet: r runs the selected one."
        if gate in now.needs_workload:
            return f"{gate}: {NO_WORKLOAD}"
    return None
