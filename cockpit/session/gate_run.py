"""One run of a gate as the journal tells it, and how its finish or stall updates it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cockpit.session import bounds
from cockpit.session import events as ev
from cockpit.session.journal import Event


@dataclass(frozen=True)
class GateRunRecord:
    """One run of a gate as the journal tells it; `status` is None while it has no finish."""

    run_id: str
    gate: str
    started_t: float
    pid: int | None
    log: str
    finished_t: float | None = None
    status: str | None = None
    summary: str = ""
    duration_s: float | None = None
    exit_code: int | None = None
    result_inline: dict[str, Any] = field(default_factory=dict)
    """The result as the journal holds it: whole, or its headline when `result_file` has it."""
    stalls: int = 0
    result_file: str = ""
    """The file holding the whole result when it was too big for a journal line (session/results.py)."""
    owner: int | None = None
    """pid of the cockpit process that ran it (journals from before: None)."""
    pid_start: int | None = None
    """When `pid` started (kernel ticks since boot), to tell it from a reused pid."""
    mark: str | None = None
    """The seal of the token in the child's environment (gates/mark.py); None before marks."""

    @property
    def finished(self) -> bool:
        return self.status is not None

    @property
    def result(self) -> dict[str, Any]:
        """The whole result: inline, or read from its file (cached) when it lives in one."""
        if not self.result_file:
            return self.result_inline
        from cockpit.session.results import load_result

        return load_result(Path(self.result_file), self.run_id, self.result_inline)



def int_or_none(value: Any) -> int | None:
    """A journal value that is an int (not a bool): anything else was never written by cockpit."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def gate_update(run: GateRunRecord, event: Event, t: float,
                path: Callable[[Any], str]) -> GateRunRecord:
    """`run` after its gate_finished or gate_stalled event; `path` maps a stored path into the workspace."""
    if event["type"] == ev.GATE_STALLED:
        return replace(run, stalls=run.stalls + 1)
    result = event.get("result")
    duration = event.get("duration_s")
    stored = event.get("result_file")
    return replace(
        run, finished_t=t, status=str(event.get("status") or "error"),
        summary=bounds.line_cut(event.get("summary") or ""),
        duration_s=float(duration) if isinstance(duration, (int, float)) else None,
        exit_code=int_or_none(event.get("exit_code")),
        result_inline=result if isinstance(result, dict) else {},
        result_file=path(stored) if isinstance(stored, str) and stored else "",
    )
