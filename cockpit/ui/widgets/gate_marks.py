"""A gate run's mark wherever the TUI shows it: the gate list, the gate pane's head, the toast of
a finished run and the help. A run that could not run (no GPU, no torch, no ncu, a missing tool)
has a mark and a colour of its own, never a failed check's red ✗: one is the setup to fix, the
other the kernel."""

from __future__ import annotations

from rich.text import Text
from textual.notifications import SeverityLevel

from cockpit.gates.gate import COULD_NOT_RUN, STATUS_MARKS, said_status

_COLOUR = {"pass": "green", "warn": "yellow", "fail": "red", COULD_NOT_RUN: "magenta", "cancelled": "dim",
           "timeout": "red", "interrupted": "yellow"}
ICON = {**{status: (STATUS_MARKS[status], colour) for status, colour in _COLOUR.items()},
        "running": ("▶", "bold cyan"), "queued": ("…", "cyan"), "never": ("·", "dim"),
        "no_workload": ("–", "dim")}
"""(mark, colour) of each state a gate's row can be in."""
MEANS = {"pass": "every check passed", "warn": "it passed, with something to look at",
         "fail": "a check failed: the kernel, its build or the box is wrong",
         COULD_NOT_RUN: "no verdict on the kernel: no GPU, no torch, no ncu, no workload or a missing "
                        "tool; its summary says what to set up",
         "cancelled": "cancelled (x)", "timeout": "no result within its time limit",
         "interrupted": "the cockpit that ran it went away", "running": "running now",
         "queued": "waits for the running gate", "never": "not run yet in this session",
         "no_workload": "needs a workload, and cockpit.toml names none: cockpit init writes one"}
"""What each mark says (the help lists them)."""


def said_state(state: str) -> str:
    """A row's state in words: "could not run" for a run that reached no verdict."""
    return said_status(state).lower() if state in STATUS_MARKS else state


def status_head(status: str) -> Text:
    """How the gate pane's head starts: the run's mark and status in the mark's colour
    ("⊘ COULD NOT RUN", never a failure's "✗ FAIL")."""
    icon, style = ICON.get(status, ("?", ""))
    return Text(f"{icon} {said_status(status)}", style=f"bold {style}".strip())


def verdict_toast(gate: str, status: str, summary: str) -> tuple[str, SeverityLevel]:
    """A finished run's toast, and how loud: a run that could not run warns (yellow), a failure is
    an error (red)."""
    severity: SeverityLevel = ("information" if status == "pass" else
                               "warning" if status in ("warn", COULD_NOT_RUN) else "error")
    return f"{ICON.get(status, ('?', ''))[0]} {gate}: {said_status(status)} — {summary}", severity
