"""The sanitizer gate's view: what compute-sanitizer found (each finding: its kind, kernel, source
line, thread and block, the access) and what it watched (the shapes and candidates, the caching
allocator, torch's own kernels), or why its report could not be judged."""

from __future__ import annotations

from cockpit.gates.sanitize.result import Finding, SanitizeResult
from cockpit.gates.view import Cell, Column, Fact, GateView, ViewTable, unit

FINDINGS = 20
ALLOCATOR: dict[bool | None, str] = {True: "off (every tensor its own allocation)",
                                     False: "ON: writes inside its pooled blocks go unseen"}


def sanitize_view(result: SanitizeResult) -> GateView:
    facts = [Fact("tool", result.tool, "strong"),
             Fact("errors", _errors_word(result.errors), "good" if result.errors == 0 else "bad"),
             Fact("calls", _calls_words(result)),
             *_watched_facts(result),
             *(Fact("note", note, "dim") for note in result.notes),
             Fact("report", result.log or "", "quiet")]
    rows = tuple(_finding_cells(f) for f in result.findings[:FINDINGS])
    columns = (Column("", status=True), Column("finding", share=3), Column("kernel", share=2),
               Column("source", share=2), Column("thread"), Column("block"), Column("access", share=3))
    left = len(result.findings) - FINDINGS
    more = (f"{left} more in the report",) if left > 0 else ()
    table = (ViewTable("findings", columns, rows, more),) if rows else ()
    return GateView(tuple(f for f in facts if f.value), (), table)


def _watched_facts(result: SanitizeResult) -> list[Fact]:
    """How the sanitizer watched: the caching allocator, torch's own kernels, how long, and the
    call it stopped in (a fact left empty is not shown)."""
    return [Fact("caching allocator", ALLOCATOR.get(result.allocator_off, ""),
                 "warn" if result.allocator_off is False else ""),
            Fact("torch's kernels", "checked" if result.torch_kernels
                 else "not checked ([sanitize] torch_kernels = true checks them)", "dim"),
            Fact("time", unit(result.duration_s, ".0f", " s") or ""),
            Fact("stopped", f"while calling {result.stopped_at}" if result.stopped_at else "", "warn")]


def _errors_word(errors: int | None) -> str:
    """'3 errors', or that the report had no ERROR SUMMARY to count them by."""
    if errors is None:
        return "no ERROR SUMMARY: not judged"
    return f"{errors} error{'s' if errors != 1 else ''}"


def _calls_words(result: SanitizeResult) -> str:
    """'4 of 4: ours on 1024, 4096': the calls that ran under the sanitizer (empty when none planned)."""
    if not result.planned:
        return ""
    return f"{result.calls} of {result.planned}: {', '.join(result.candidates)} on {', '.join(result.shapes)}"


def _finding_cells(f: Finding) -> tuple[Cell, ...]:
    """One finding's row: FAIL or WARN, its kind, kernel, source line (or that -lineinfo is
    missing), thread, block and access."""
    return (Cell("FAIL", "bad") if f.severity == "error" else Cell("WARN", "warn"),
            Cell(f.kind), Cell(f.kernel_short or ""),
            Cell(f.location, "") if f.location else Cell("no -lineinfo", "dim"),
            Cell(f.thread or ""), Cell(f.block or ""), Cell(f.access or ""))


def sanitize_words(result: SanitizeResult) -> str:
    """What a reviewer asks of a sanitizer run, in one line: "compute-sanitizer memcheck: 0 errors
    on 3 shapes", with the first finding where there was one, and what did not run where not
    every call did."""
    tool = f"compute-sanitizer {result.tool}"
    shapes = len(result.shapes)
    on = f" on {shapes} shape{'s' if shapes != 1 else ''}" if shapes else ""
    calls = f" ({result.calls} of {result.planned} calls ran)" if result.calls != result.planned else ""
    first = f"; first: {_finding_words(result.findings[0])}" if result.findings else ""
    return f"{tool}: {_errors_word(result.errors)}{on}{calls}{first}"


def _finding_words(f: Finding) -> str:
    """"Invalid __global__ write of size 4 bytes in twice_kernel at k.cu:32"."""
    return (f.kind + (f" in {f.kernel_short}" if f.kernel_short else "")
            + (f" at {f.location}" if f.location else ""))
