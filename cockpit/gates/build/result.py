"""The build gate's result: what the build log and the build probe say (gates/build/gate.py writes it).

Version 1: whether ninja had work (`up_to_date`), its `steps`, `build_s`, the `arch` built for,
whether the extension imports (`import`), the compiler `errors`, the `failed_steps`, and each
kernel as launched (`kernels`: registers, spills, stack, shared memory per block, occupancy per
target GPU), with the findings held against the budgets (`failures`, `warnings`, `notes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from cockpit.gates.result import HeadlineFigure, gpu_uuid
from cockpit.json_fields import (
    JsonObject,
    as_number,
    flag,
    obj,
    objects,
    text,
    texts,
    whole,
)


@dataclass(frozen=True)
class GpuOccupancy:
    """A kernel's blocks and warps per SM on one GPU, and what limits them."""

    gpu: str | None
    arch: str | None
    source: str | None
    """`CUDA runtime` (the GPU present) or `limits table`."""
    blocks_per_sm: int | None
    warps_per_sm: int | None
    fraction: float | None
    limiter: str | None

    @property
    def here(self) -> bool:
        return self.source == "CUDA runtime"


@dataclass(frozen=True)
class Kernel:
    name: str
    label: str | None
    arch: str
    registers: int | None
    spill_stores: int
    spill_loads: int
    stack: int | None
    smem_per_block: float | None
    """As launched (dynamic shared memory) where the build recorded it, else ptxas's static."""
    occupancy: tuple[GpuOccupancy, ...] = ()
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """The kernel's row as the build gate's resource report wrote it (launch, limits, findings)."""

    @property
    def spills(self) -> int:
        return self.spill_stores + self.spill_loads

    def to_json(self) -> dict[str, object]:
        return dict(self.raw)


@dataclass(frozen=True)
class CompileError:
    file: str | None
    line: int | None
    kind: str | None
    message: str

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "message": self.message, "file": self.file or "", "line": self.line or 0}


@dataclass(frozen=True)
class FailedStep:
    target: str
    said: str
    exit_code: int | None = None

    def to_json(self) -> dict[str, object]:
        return {"target": self.target, "said": self.said, "exit_code": self.exit_code}


@dataclass(frozen=True)
class BuildResult:
    SCHEMA: ClassVar[int] = 1

    up_to_date: bool = False
    steps: int | None = None
    build_s: float | None = None
    arch: str | None = None
    imported: bool | None = None
    import_detail: str | None = None
    errors: tuple[CompileError, ...] = ()
    failed_steps: tuple[FailedStep, ...] = ()
    kernels: tuple[Kernel, ...] = ()
    failures: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)
    """What this type does not model, written back whole: the probe's import check, the GPU the
    kernels were launched on, a first-call build's calls."""

    @classmethod
    def from_json(cls, value: object) -> BuildResult:
        data = obj(value)
        imported = data.get("import")
        said = obj(imported)
        return cls(flag(data.get("up_to_date")), whole(data.get("steps")), as_number(data.get("build_s")),
                   _said(data.get("arch")), flag(said.get("ok")) if isinstance(imported, dict) else None,
                   _said(said.get("detail")),
                   tuple(CompileError(_said(e.get("file")), whole(e.get("line")), text(e.get("kind")),
                                      _said(e.get("message")) or "") for e in objects(data.get("errors"))),
                   tuple(FailedStep(_said(f.get("target")) or "?", _said(f.get("said")) or "",
                                    whole(f.get("exit_code"))) for f in objects(data.get("failed_steps"))),
                   tuple(kernel_of(k) for k in objects(data.get("kernels"))),
                   texts(data.get("failures")), texts(data.get("warnings")), texts(data.get("notes")), data)

    def headline(self) -> HeadlineFigure | None:
        """None: the gate pane leads with the summary (only a bench has a number to lead with)."""
        return None

    def ran_on(self) -> str | None:
        return gpu_uuid(self.raw.get("gpu"))

    def to_json(self) -> dict[str, object]:
        """The result as the build gate writes it."""
        return {**self.raw, "up_to_date": self.up_to_date, "steps": self.steps, "arch": self.arch,
                "build_s": self.build_s, "kernels": [k.to_json() for k in self.kernels],
                "errors": [e.to_json() for e in self.errors],
                "failed_steps": [f.to_json() for f in self.failed_steps],
                "failures": list(self.failures), "warnings": list(self.warnings), "notes": list(self.notes)}


def kernel_of(k: JsonObject) -> Kernel:
    """A kernel's row of the build's resource report (or of a recorded result) read."""
    smem = as_number(k.get("smem_per_block") if k.get("smem_per_block") is not None else k.get("smem"))
    return Kernel(_said(k.get("name")) or "", text(k.get("label")), _said(k.get("arch")) or "",
                  whole(k.get("registers")), whole(k.get("spill_stores")) or 0,
                  whole(k.get("spill_loads")) or 0, whole(k.get("stack")), smem,
                  tuple(GpuOccupancy(_said(o.get("gpu")), _said(o.get("arch")), text(o.get("source")),
                                  whole(o.get("blocks_per_sm")), whole(o.get("warps_per_sm")),
                                  as_number(o.get("fraction")), _said(o.get("limiter")))
                        for o in objects(k.get("occupancy"))), k)


def _said(value: object) -> str | None:
    """A value recorded as text (an int line, a float arch), or None when nothing was."""
    return None if value is None or value == "" else str(value)
