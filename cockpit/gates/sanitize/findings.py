"""compute-sanitizer's report read, fail-closed: the errors its ERROR SUMMARY counts and the
findings it printed. A report with no ERROR SUMMARY line (a crash, a kill, an empty or foreign
file) has `errors` None: the gate never passes it.

Written against NVIDIA's documented format (Compute Sanitizer user manual, 2021-2025): every line
the tool writes starts with its prefix `=========`; a record's first line sits one space after it,
its details four or more:

    ========= Invalid __global__ write of size 4 bytes
    =========     at copy_kernel(float *, int)+0x70 in k.cu:12      (2023 on; no " in" without -lineinfo)
    =========     at 0x70 in /src/k.cu:12:copy_kernel(float *, int) (2021-22; "at 0x70 in copy_kernel(...)")
    =========     by thread (31,0,0) in block (0,0,0)
    =========     Address 0x... is out of bounds                    ("Access to 0x..." in 2025)
    =========     and is 4 bytes after the nearest allocation at 0x... of size 4,096 bytes
    =========     Saved host backtrace up to driver entry point at kernel launch time
    ...
    ========= ERROR SUMMARY: 3 errors

racecheck's records are `Error: Race reported between Write access at ...` (or `Warning:`), with
the other access on the next line; its own `RACECHECK SUMMARY` is a note. The tool's own
complaints (`Error: No attachable process found`, `Target application returned an error`) are
notes, never findings. Recordings of real reports: tests/fixtures/gpu/capture_sanitize.sh.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from cockpit.gates.sanitize.result import Finding

PREFIX = re.compile(r"^={9}(?: (.*))?$")
SUMMARY = re.compile(r"^ERROR SUMMARY: (\d[\d,]*) errors?\b")
RACE = re.compile(r"^(Error|Warning): Race reported between (\w+) access at (.+)$")
OTHER_ACCESS = re.compile(r"^and (\w+) access at (.+?)(?:\s+\[.*\])?$")
NOTE = re.compile(r"^(?:Error|Warning|Note|Internal [Ee]rror)\b|^[A-Z]+ SUMMARY:|^Target application\b"
                  r"|^COMPUTE-SANITIZER$|^CUDA-MEMCHECK$|^Saved host backtrace")
AT_NEW = re.compile(r"^(?P<kernel>.+?)\+0x[0-9a-fA-F]+(?: in (?P<file>\S+?):(?P<line>\d+))?$")
AT_OLD = re.compile(r"^0x[0-9a-fA-F]+ in (?P<rest>.+)$")
FILE_LINE_KERNEL = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?P<kernel>.+)$")
THREAD = re.compile(r"^by thread \(([^)]*)\) in block \(([^)]*)\)")
ADDRESS = re.compile(r"^(?:Address|Access to) 0x[0-9a-fA-F]+ (.+)$")
HEX = re.compile(r"\s*\bat 0x[0-9a-fA-F]+|\s*0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class SanitizerLog:
    """What one compute-sanitizer report says."""

    findings: tuple[Finding, ...] = ()
    errors: int | None = None
    """The ERROR SUMMARY's count (summed when several processes printed one); None: no summary."""
    notes: tuple[str, ...] = ()
    """The tool's own lines: its complaints, other summaries."""
    sanitizer_lines: int = 0
    """Lines that carried the tool's prefix: 0 means the text is no sanitizer report at all."""

    @property
    def summary_seen(self) -> bool:
        return self.errors is not None


@dataclass
class _Record:
    finding: Finding
    details: bool = True
    """Still reading its details (until its host backtrace starts)."""


def parse_sanitizer_log(text: str) -> SanitizerLog:
    """The findings, the error count and the tool's notes of a compute-sanitizer report; any
    other text (the program's own output, garbage) is skipped."""
    findings: list[Finding] = []
    notes: list[str] = []
    errors: int | None = None
    seen = 0
    current: _Record | None = None

    def close() -> None:
        nonlocal current
        if current is not None:
            findings.append(current.finding)
        current = None

    for raw in text.splitlines():
        m = PREFIX.match(raw.rstrip())
        if m is None:
            continue
        seen += 1
        body = m.group(1) or ""
        if not body.strip():
            close()
        elif body.startswith(" "):
            if current is not None and current.details:
                current.finding, current.details = _detail(current.finding, body.strip())
        elif (summary := SUMMARY.match(body)) is not None:
            close()
            errors = (errors or 0) + int(summary.group(1).replace(",", ""))
        elif (race := RACE.match(body)) is not None:
            close()
            kernel, file, line = _where(race.group(3))
            current = _Record(Finding(f"Race reported between {race.group(2)} access", kernel, file, line,
                                      severity="warning" if race.group(1) == "Warning" else "error"))
        elif NOTE.match(body):
            close()
            if body not in ("COMPUTE-SANITIZER", "CUDA-MEMCHECK"):
                notes.append(body.strip())
        else:
            close()
            current = _Record(Finding(body.strip()))
    close()
    return SanitizerLog(tuple(findings), errors, tuple(dict.fromkeys(notes)), seen)


def _detail(f: Finding, line: str) -> tuple[Finding, bool]:
    """The finding with one detail line read into it; False once its backtrace starts."""
    if line.startswith(("Saved host backtrace", "Host Frame", "Device Frame")):
        return f, False
    if line.startswith("at ") and f.kernel is None and f.access is None:
        kernel, file, number = _where(line[3:])
        return replace(f, kernel=kernel, file=file, line=number), True
    if (other := OTHER_ACCESS.match(line)) is not None and f.kind.startswith("Race reported"):
        return replace(f, kind=f"{f.kind} and {other.group(1)} access"), True
    if (thread := THREAD.match(line)) is not None:
        return replace(f, thread=f"({thread.group(1)})", block=f"({thread.group(2)})"), True
    if (address := ADDRESS.match(line)) is not None:
        return replace(f, access=_plain(address.group(1))), True
    if line.startswith("and is ") and f.access is not None:
        return replace(f, access=f"{f.access}, {_plain(line.removeprefix('and is '))}"), True
    if line.startswith("at 0x") and f.access is not None:  # the nearest allocation, on a line of its own
        return replace(f, access=f"{f.access} {_plain(line)}".rstrip()), True
    return f, True


def _where(at: str) -> tuple[str | None, str | None, int | None]:
    """(kernel, file, line) of an `at ...` detail, in either of the documented forms."""
    at = at.strip()
    new = AT_NEW.match(at)
    if new is not None:
        line = new.group("line")
        return new.group("kernel").strip(), new.group("file"), int(line) if line else None
    old = AT_OLD.match(at)
    if old is not None:
        rest = old.group("rest").strip()
        with_line = FILE_LINE_KERNEL.match(rest)
        if with_line is not None:
            return with_line.group("kernel").strip(), with_line.group("file"), int(with_line.group("line"))
        return rest, None, None
    return (at or None), None, None


def _plain(words: str) -> str:
    """The words without addresses (they change from run to run) or a leading "is "."""
    return " ".join(HEX.sub("", words).split()).removeprefix("is ")
