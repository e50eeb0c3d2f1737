"""What a gate is: a default command, a way to read progress from its output, and a verdict."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from cockpit.config import Config
from cockpit.gates.result import GateResult

GateStatus = Literal["pass", "warn", "fail", "error", "cancelled", "timeout", "interrupted"]
"""How a run ended, as the journal keeps it. `fail`: the gate judged, and what it checks is wrong
(the kernel, its build, the box the env gate looked at). `error`: the gate COULD NOT RUN to a
verdict (no GPU, no torch, no ncu, no workload, a missing tool, a result it could not read):
nothing was said about the kernel, and what to fix is the setup the summary names."""

COULD_NOT_RUN: GateStatus = "error"
"""The journal's word for a run that reached no verdict (old journals read as they always did)."""

STATUS_MARKS: dict[str, str] = {"pass": "✓", "warn": "!", "fail": "✗", COULD_NOT_RUN: "⊘",
                                "cancelled": "■", "timeout": "⧖", "interrupted": "?"}
"""Each status's mark wherever a run is listed: a run that could not run is never a failure's ✗."""


def said_status(status: str) -> str:
    """A status as a reader is told it: "COULD NOT RUN" for `error` (read as ERROR, it was taken
    for the kernel's), any other in capitals."""
    return "COULD NOT RUN" if status == COULD_NOT_RUN else status.upper()


@dataclass(frozen=True)
class GateContext:
    """Where one run of a gate lives."""

    workspace: Path
    session_dir: Path
    run_id: str
    python: str = sys.executable
    """The interpreter that runs probes (they import torch; the cockpit never does): found by
    `gates/interpreter.py`."""
    python_how: str = ""
    """Why that one ("the active venv", "[gates] python (cockpit.toml:7)"): the env gate says it."""
    config: Config = field(default_factory=Config)
    objective: str = ""

    @property
    def log_path(self) -> Path:
        return self.session_dir / "logs" / f"{self.run_id}.log"

    @property
    def result_path(self) -> Path:
        return self.session_dir / "results" / f"{self.run_id}.json"


@dataclass(frozen=True)
class Progress:
    """How far a run is, as its output tells: fraction done, seconds left, the current step."""

    fraction: float | None = None
    eta_s: float | None = None
    step: str = ""


class ProgressTracker(Protocol):
    def feed(self, lines: list[str], elapsed_s: float) -> Progress | None:
        """Progress after these new lines; None when they say nothing new."""
        ...


class NoProgress:
    """For gates whose output says nothing about how far they are (ETA comes from history)."""

    def feed(self, lines: list[str], elapsed_s: float) -> Progress | None:
        return None


@dataclass(frozen=True)
class Verdict:
    status: GateStatus
    summary: str
    result: GateResult | None = None
    """The gate's typed result (None: a run that ended before it had one); the journal writes it."""


def result_json(verdict: Verdict) -> dict[str, object]:
    """The verdict's result as the journal records it (and `cockpit gate --json` prints it)."""
    return verdict.result.to_json() if verdict.result is not None else {}


class GateCode(Protocol):
    """What runs and judges a gate; the catalog (`catalog.py`) names it and loads it on first use."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        """The default command (cockpit.toml's [gates.NAME] command replaces it)."""
        ...

    def tracker(self, ctx: GateContext) -> ProgressTracker:
        """A fresh progress reader for one run."""
        ...

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        """The verdict of a run that exited by itself (not cancelled, not timed out)."""
        ...


class Gate(GateCode, Protocol):
    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def timeout_s(self) -> float: ...


def exit_code_verdict(exit_code: int, tail: Sequence[str]) -> Verdict:
    """For a command the cockpit knows nothing about: exit 0 passes, anything else fails."""
    last = next((line.strip() for line in reversed(tail) if line.strip()), "")
    if exit_code == 0:
        return Verdict("pass", f"exit 0{': ' + last if last else ''}")
    return Verdict("fail", f"exit {exit_code}{': ' + last if last else ''}")
