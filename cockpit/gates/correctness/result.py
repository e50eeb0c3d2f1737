"""The correctness gate's result: each check of a candidate against the oracle, smallest shape
first, each candidate up to its first failure (the probe's rows, or a replaced command's), the
warnings the checks raised, and the guards a mutation test turned off.

Version 1: `rows` (config, ok, rel_l2, max_abs, tolerance, nonfinite, what, candidate; since the
correctness rounds also `rounds` of fresh inputs, `deterministic` and `repeat_max_abs` of the
repeat on the same inputs), the device, the workload and its oracle, how many checks were planned;
a replaced command that handed back no result is `judged: false` with its exit code. Rows without
the newer keys read as None.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from cockpit.errors import CockpitError
from cockpit.gates.result import HeadlineFigure, gpu_uuid
from cockpit.json_fields import JsonObject, as_number, compact, flag, obj, objects, text, whole


@dataclass(frozen=True)
class OracleCheck:
    """One config checked: within tolerance or not, and by how much."""

    config: str
    ok: bool
    rel_l2: float | None = None
    max_abs: float | None = None
    tolerance: float | None = None
    nonfinite: int = 0
    what: str = ""
    """The workload's own check's words when it failed without numbers."""
    candidate: str | None = None
    rounds: int | None = None
    """Rounds of fresh inputs it was checked on (the failing one's number when it failed)."""
    deterministic: bool | None = None
    """A repeat on the same inputs gave the same bits (False: it differed, within the tolerance of a
    workload that declares atomics, or it failed)."""
    repeat_max_abs: float | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    mode: str | None = None
    """The pass checked: "backward" for a gradient's check (written back with `raw`)."""

    @classmethod
    def from_json(cls, value: object) -> OracleCheck:
        data = obj(value)
        det = data.get("deterministic")
        return cls(text(data.get("config")) or "?", flag(data.get("ok")), as_number(data.get("rel_l2")),
                   as_number(data.get("max_abs")), as_number(data.get("tolerance")),
                   whole(data.get("nonfinite")) or 0, text(data.get("what")) or "",
                   text(data.get("candidate")), whole(data.get("rounds")),
                   det if isinstance(det, bool) else None, as_number(data.get("repeat_max_abs")), data,
                   text(data.get("mode")))

    def to_json(self) -> dict[str, object]:
        return {**self.raw, "config": self.config, "ok": self.ok, "rel_l2": self.rel_l2,
                "max_abs": self.max_abs, "tolerance": self.tolerance, "nonfinite": self.nonfinite,
                "what": self.what, **compact({"candidate": self.candidate, "rounds": self.rounds,
                                              "deterministic": self.deterministic,
                                              "repeat_max_abs": self.repeat_max_abs})}


@dataclass(frozen=True)
class CorrectnessResult:
    SCHEMA: ClassVar[int] = 1

    checks: tuple[OracleCheck, ...] = ()
    device: str | None = None
    workload: str | None = None
    oracle: str | None = None
    planned: int | None = None
    judged: bool = True
    """False: a replaced command exited without a cockpit result, so nothing was checked."""
    exit_code: int | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    warnings: tuple[str, ...] = ()
    """What the checks flagged without failing a candidate (a check looser than the op done in a
    lower precision, a candidate that is the baseline itself, a check that could not run)."""
    guards_off: frozenset[str] = frozenset()
    """The guards the cheat catalogue's mutation test turned off for this run."""

    @property
    def failed(self) -> OracleCheck | None:
        return next((c for c in self.checks if not c.ok), None)

    @property
    def failures(self) -> tuple[OracleCheck, ...]:
        """Every failing check: one per failing candidate (each is checked no further)."""
        return tuple(c for c in self.checks if not c.ok)

    @classmethod
    def from_json(cls, value: object) -> CorrectnessResult:
        data = obj(value)
        return cls(tuple(OracleCheck.from_json(r) for r in objects(data.get("rows"))),
                   text(data.get("device")), text(data.get("workload")), text(data.get("oracle")),
                   whole(data.get("planned")),
                   data.get("judged") is not False, whole(data.get("exit_code")), data,
                   _texts(data.get("warnings")), frozenset(_texts(data.get("guards_off"))))

    def headline(self) -> HeadlineFigure | None:
        """None: the gate pane leads with the summary (only a bench has a number to lead with)."""
        return None

    def ran_on(self) -> str | None:
        return gpu_uuid(self.raw.get("gpu"))

    def to_json(self) -> dict[str, object]:
        if not self.judged:
            return {**self.raw, "judged": False, "exit_code": self.exit_code}
        return {**self.raw, "rows": [c.to_json() for c in self.checks], "device": self.device,
                "workload": self.workload, "oracle": self.oracle,
                **compact({"planned": self.planned, "warnings": list(self.warnings) or None,
                           "guards_off": sorted(self.guards_off) or None})}


def _texts(value: object) -> tuple[str, ...]:
    """A list of lines as the probe wrote it (anything else in it left out)."""
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def read_checked(data: Mapping[str, object]) -> CorrectnessResult:
    """The probe's correctness file (cockpit/workload/result_wire.py's `CheckPartJson`), or a
    replaced command's rows in its shape, parsed once where the gate reads it: its checks and
    the GPU they ran on. CockpitError, one line, when its rows are not a list of checks."""
    rows = data.get("rows")
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise CockpitError("the correctness result's rows are not a list of checks: not what the probe "
                           "writes; run the gate again")
    gpu = data.get("gpu")
    return CorrectnessResult(tuple(OracleCheck.from_json(r) for r in rows), text(data.get("device")),
                             text(data.get("workload")), text(data.get("oracle")), whole(data.get("planned")),
                             raw={"gpu": gpu} if gpu is not None else {},
                             warnings=_texts(data.get("warnings")),
                             guards_off=frozenset(_texts(data.get("guards_off"))))
