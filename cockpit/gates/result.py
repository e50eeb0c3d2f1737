"""Gate results as typed, versioned data: the one place a result's JSON is read and written.

Each gate's result is a frozen dataclass with a `SCHEMA` version, `from_json` (never raises:
journals may be old, hand-edited or torn), `to_json` (what the journal and `results/` hold) and
`headline` (the number the gate pane leads with, where the result has one):
`env.EnvResult`, `build.BuildResult`, `correctness.CorrectnessResult`, `bench.BenchResult` (with
its `validity.BenchValidity` and the keep rule's `KeepResult`), `profile.ProfileResult`,
`sanitize.SanitizeResult`. A gate's verdict carries its result as that object; the run writes it
to the journal once, with `to_json` (gates/run.py). The gate catalog (`gates/catalog.py`) names
each gate's type; the TUI and the report read a journaled run's result through it, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol


@dataclass(frozen=True)
class HeadlineFigure:
    """The one number a run is about, readable from across the room: "1.23x vs torch.softmax"."""

    figure: str
    against: str
    tone: Literal["good", "bad", "warn"]
    """good or bad: a number that counts, on either side of the bar; warn: one to re-measure."""
    words: str
    """What the number asks of the engineer (the speedup class in words of urgency)."""
    over: int | None = None
    """How many configs it is over."""


class GateResult(Protocol):
    """What every gate's result type is."""

    SCHEMA: ClassVar[int]

    @classmethod
    def from_json(cls, value: object) -> GateResult | None:
        """The result read from the journal's JSON, or None when `value` is not one."""
        ...

    def to_json(self) -> dict[str, object]:
        """The result as the journal (or its results/ file) holds it."""
        ...

    def headline(self) -> HeadlineFigure | None:
        """The number the gate pane leads with; None for a result without one."""
        ...

    def ran_on(self) -> str | None:
        """The UUID of the GPU its probe said it ran on; None when it did not say."""
        ...


def gpu_uuid(gpu: object) -> str | None:
    """The UUID in a probe's record of its GPU (NVML's, else CUDA's), if it has one."""
    if not isinstance(gpu, Mapping):
        return None
    uuid = gpu.get("nvml_uuid") or gpu.get("uuid")
    return str(uuid) if uuid else None


@dataclass(frozen=True)
class NotJudged:
    """A replaced command that exited without a cockpit result: nothing was checked or measured,
    its exit code is all there is (gates/structured.py)."""

    SCHEMA: ClassVar[int] = 1

    exit_code: int

    @classmethod
    def from_json(cls, value: object) -> NotJudged | None:
        if not isinstance(value, dict) or value.get("judged") is not False:
            return None
        code = value.get("exit_code")
        return cls(code) if isinstance(code, int) and not isinstance(code, bool) else None

    def to_json(self) -> dict[str, object]:
        return {"judged": False, "exit_code": self.exit_code}

    def headline(self) -> HeadlineFigure | None:
        return None

    def ran_on(self) -> str | None:
        return None
