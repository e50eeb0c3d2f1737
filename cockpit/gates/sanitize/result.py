"""The sanitizer gate's result: what compute-sanitizer found in the candidates' calls.

Version 1: the `tool` (memcheck, racecheck, initcheck, synccheck); `errors`, the count of its
ERROR SUMMARY (absent when it printed none: never a pass); the `findings` it printed (kind, kernel,
source file and line when built with -lineinfo, thread and block, the access); what ran: the
`shapes` and `candidates`, `calls` made of `planned`, whether torch's caching allocator was off
(`allocator_off`) and torch's own kernels checked (`torch_kernels`), `duration_s`; where its
report is (`log`), the call it was on when it stopped early (`stopped_at`), and its `notes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from cockpit.gates.result import HeadlineFigure, gpu_uuid
from cockpit.json_fields import JsonObject, as_number, compact, obj, objects, strings, text, texts, whole


@dataclass(frozen=True)
class Finding:
    """One error (or warning) compute-sanitizer printed."""

    kind: str
    """Its own words: "Invalid __global__ write of size 4 bytes", "Race reported between Write
    access and Read access"."""
    kernel: str | None = None
    """As the sanitizer names it (demangled, with its parameters)."""
    file: str | None = None
    line: int | None = None
    thread: str | None = None
    """"(31,0,0)"."""
    block: str | None = None
    access: str | None = None
    """What was wrong with the address: "out of bounds, 4 bytes after the nearest allocation of
    size 4096 bytes" (addresses left out: they differ from run to run)."""
    severity: str = "error"
    """"error", or "warning" (racecheck's hazards it judges benign)."""

    @property
    def location(self) -> str | None:
        """"k.cu:12", or None without -lineinfo."""
        return f"{self.file}:{self.line}" if self.file and self.line is not None else None

    @property
    def kernel_short(self) -> str | None:
        """The kernel without its return type and parameters: "copy_kernel<float>"."""
        if self.kernel is None:
            return None
        name = self.kernel.removeprefix("void ")
        depth = 0
        for i, ch in enumerate(name):
            depth += {"<": 1, ">": -1}.get(ch, 0)
            if ch == "(" and depth == 0 and i > 0:
                return name[:i]
        return name

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, **compact({"kernel": self.kernel, "file": self.file, "line": self.line,
                                              "thread": self.thread, "block": self.block,
                                              "access": self.access}),
                "severity": self.severity}

    @classmethod
    def from_json(cls, value: JsonObject) -> Finding:
        return cls(text(value.get("kind")) or "?", text(value.get("kernel")), text(value.get("file")),
                   whole(value.get("line")), text(value.get("thread")), text(value.get("block")),
                   text(value.get("access")), text(value.get("severity")) or "error")


@dataclass(frozen=True)
class SanitizeResult:
    SCHEMA: ClassVar[int] = 1

    tool: str = "memcheck"
    errors: int | None = None
    findings: tuple[Finding, ...] = ()
    shapes: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    calls: int = 0
    planned: int = 0
    allocator_off: bool | None = None
    torch_kernels: bool = False
    duration_s: float | None = None
    log: str | None = None
    stopped_at: str | None = None
    notes: tuple[str, ...] = ()
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)

    @property
    def summary_seen(self) -> bool:
        """Whether the sanitizer got to its ERROR SUMMARY (without it nothing passes)."""
        return self.errors is not None

    @classmethod
    def from_json(cls, value: object) -> SanitizeResult:
        data = obj(value)
        allocator = data.get("allocator_off")
        return cls(text(data.get("tool")) or "memcheck", whole(data.get("errors")),
                   tuple(Finding.from_json(f) for f in objects(data.get("findings"))),
                   texts(data.get("shapes")), strings(data.get("candidates")), whole(data.get("calls")) or 0,
                   whole(data.get("planned")) or 0, allocator if isinstance(allocator, bool) else None,
                   data.get("torch_kernels") is True, as_number(data.get("duration_s")),
                   text(data.get("log")), text(data.get("stopped_at")), texts(data.get("notes")), data)

    def headline(self) -> HeadlineFigure | None:
        """None: the gate pane leads with the summary (only a bench has a number to lead with)."""
        return None

    def ran_on(self) -> str | None:
        return gpu_uuid(self.raw.get("gpu"))

    def to_json(self) -> dict[str, object]:
        """The result as the sanitizer gate writes it."""
        return {**self.raw, "schema": self.SCHEMA, "tool": self.tool, "errors": self.errors,
                "findings": [f.to_json() for f in self.findings], "shapes": list(self.shapes),
                "candidates": list(self.candidates), "calls": self.calls, "planned": self.planned,
                "torch_kernels": self.torch_kernels,
                **compact({"allocator_off": self.allocator_off, "duration_s": self.duration_s,
                           "log": self.log, "stopped_at": self.stopped_at}),
                "notes": list(self.notes)}
