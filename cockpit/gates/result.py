"""Gate results as typed, versioned data: the one place a result's JSON is read and written.

Each gate's result is a frozen dataclass with a `SCHEMA` version, `from_json` (never raises:
journals may be old, hand-edited or torn) and `to_json` (what the journal and `results/` hold):
`env.EnvResult`, `build.BuildResult`, `correctness.CorrectnessResult`, `bench.BenchResult` (with
its `validity.BenchValidity` and the keep rule's `KeepResult`), `profile.ProfileResult`,
`sanitize.SanitizeResult`. The gate catalog (`gates/catalog.py`) names each gate's type; the TUI
and the report read a run's result through it.
"""

from __future__ import annotations

from typing import ClassVar, Protocol


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
