"""The Sanitizer gate: compute-sanitizer (memcheck by default; `[sanitize] tool`) around a call of
every candidate on the workload's smallest test shapes, torch's caching allocator off, its report
read here, fail-closed: a run with no ERROR SUMMARY line is an error, never a pass.

The child is the workload probe (`sanitize` mode) under `probes/sanitize_probe.py`, so Extension,
load_inline, Triton and GPU MODE workloads are sanitized alike: the tool watches the Python that
calls the candidates."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.files import read_head
from cockpit.gates.gate import GateContext, Verdict
from cockpit.gates.probe_call import ShapeCounter, of_this_wire
from cockpit.gates.sanitize.findings import SanitizerLog, parse_sanitizer_log
from cockpit.gates.sanitize.result import Finding, SanitizeResult
from cockpit.json_fields import JsonObject, as_number, obj, objects, strings, text, texts, whole
from cockpit.session.paths import stored_path
from cockpit.session.results import read_result_json
from cockpit.workload.describe import workload_args

PROBE = Path(__file__).resolve().parents[2] / "probes" / "sanitize_probe.py"
TARGET = Path(__file__).resolve().parents[2] / "probes" / "workload_probe.py"
LINEINFO = "no source line: build with -lineinfo"
SANITIZER_LOG_READ_BYTES = 64 << 20
"""What is read of compute-sanitizer's report (it can repeat one error per thread): its beginning."""
OTHERS_SAID = 2
"""Other kinds of finding named in the summary after the first."""


@dataclass(frozen=True)
class SanitizeRun:
    """What ran under the sanitizer, as the probe and its target recorded it."""

    tool: str
    workload: str
    shapes_asked: int
    shapes: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    calls: int = 0
    """Calls that returned."""
    planned: int = 0
    allocator_off: bool | None = None
    torch_kernels: bool = False
    duration_s: float | None = None
    exit: int | None = None
    timed_out: bool = False
    timeout_s: float | None = None
    calling: str | None = None
    """The call in progress when it ended: "ours on N=1024 (2/3)"."""
    said: str = ""
    """What stopped the calls (a candidate that raised), else the target's last line."""
    log: str | None = None
    workspace: Path | None = None

    @property
    def complete(self) -> bool:
        return self.planned > 0 and self.calls == self.planned and self.exit == 0

    @property
    def where(self) -> str:
        return f"while calling {self.calling}" if self.calling else "before the first call"


class SanitizeGate:
    """Every candidate once per shape under compute-sanitizer; its ERROR SUMMARY or an error."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        s = ctx.config.sanitize
        ws = str(ctx.workspace)
        return (ctx.python, str(PROBE), "--workspace", ws, "--out", str(ctx.result_path),
                "--log", str(report_path(ctx)), "--tool", s.tool, "--print-limit", str(s.print_limit),
                "--launch-count", str(s.launch_count), "--timeout-s", f"{s.timeout_s:g}",
                *(("--torch-kernels",) if s.torch_kernels else ()),
                "--", ctx.python, str(TARGET), "sanitize", "--workspace", ws,
                *workload_args(ctx.workspace, ctx.config).argv(), "--shapes", str(s.shapes),
                "--out", str(calls_path(ctx)))

    def tracker(self, ctx: GateContext) -> ShapeCounter:
        return ShapeCounter()

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        probe = _read_json(ctx.result_path)
        last = next((line.strip() for line in reversed(tail) if line.strip()
                     and not line.startswith("#")), "")
        if not probe:
            raise CockpitError(last or f"the sanitizer probe exited {exit_code} without a result")
        if probe.get("error") is not None:  # no compute-sanitizer, or it could not start
            raise CockpitError(text(probe.get("said")) or last)
        log = Path(text(probe.get("log")) or report_path(ctx))
        try:  # its first errors are the ones to fix: a report is read up to SANITIZER_LOG_READ_BYTES
            report = read_head(log, SANITIZER_LOG_READ_BYTES)[0].decode("utf-8", errors="replace")
        except OSError:
            report = ""
        run = read_run(probe, _read_json(calls_path(ctx)), ctx.config.workload.source,
                       ctx.config.sanitize.shapes, stored_path(log, ctx.workspace), ctx.workspace)
        return judge_sanitize(parse_sanitizer_log(report), run)


def report_path(ctx: GateContext) -> Path:
    """compute-sanitizer's own report, beside the run's result."""
    return ctx.result_path.with_suffix(".sanitizer.log")


def calls_path(ctx: GateContext) -> Path:
    """The calls the target made (its result file)."""
    return ctx.result_path.with_suffix(".calls.json")


def _read_json(path: Path) -> JsonObject:
    try:
        return of_this_wire(obj(read_result_json(path)), path)
    except (OSError, ValueError):
        return {}


def read_run(probe: JsonObject, calls: JsonObject, source: str, shapes_asked: int, log: str | None,
             workspace: Path | None = None) -> SanitizeRun:
    """The run as the probe (`probe`) and the target (`calls`) wrote it down."""
    rows = objects(calls.get("rows"))
    failed = next((text(r.get("error")) for r in rows if r.get("error")), None)
    return SanitizeRun(
        tool=text(probe.get("tool")) or "memcheck", workload=text(calls.get("workload")) or source,
        shapes_asked=shapes_asked, shapes=texts(calls.get("shapes")),
        candidates=strings(calls.get("candidates")),
        calls=_calls_made(rows), planned=whole(calls.get("planned")) or 0,
        allocator_off=_flag(calls.get("allocator_off")),
        torch_kernels=probe.get("torch_kernels") is True, duration_s=as_number(probe.get("duration_s")),
        exit=whole(probe.get("exit")), timed_out=probe.get("timed_out") is True,
        timeout_s=as_number(probe.get("timeout_s")), calling=text(probe.get("calling")),
        said=failed or text(probe.get("last_line")) or "", log=log, workspace=workspace)


def _calls_made(rows: Sequence[JsonObject]) -> int:
    """How many of the target's calls ran to the end (a row with an error did not)."""
    return sum(1 for r in rows if not r.get("error"))


def _flag(value: object) -> bool | None:
    """A yes/no the target wrote, or None when it wrote none (an older target)."""
    return value if isinstance(value, bool) else None


def judge_sanitize(log: SanitizerLog, run: SanitizeRun) -> Verdict:
    """The verdict: errors the sanitizer counted (or printed) fail; a report without its ERROR
    SUMMARY, or calls that did not all run, are errors; 0 errors on every call pass."""
    errors, warnings = _by_severity(log.findings)
    result = SanitizeResult(run.tool, log.errors, log.findings, run.shapes, run.candidates, run.calls,
                            run.planned, run.allocator_off, run.torch_kernels, run.duration_s, run.log,
                            None if run.complete else run.calling, log.notes)
    w = f"workload {run.workload!r}"
    stopped = _how_it_stopped(run)
    count = log.errors if log.errors is not None else len(errors)
    if count > 0 or errors:
        return Verdict("fail", _errors_line(log, run, count, errors, stopped), result)
    if not log.summary_seen:
        return Verdict("error", _unjudged(log, run, w, stopped), result)
    if not run.complete:
        why = run.said or f"the calls stopped ({stopped})"
        return Verdict("error", f"{run.tool}: 0 errors, but not every call ran on {w} ({run.calls} of "
                       f"{run.planned or '?'}, {run.where}): {why}; fix that and run the gate again", result)
    return _clean_verdict(run, warnings, result)


def _by_severity(findings: Sequence[Finding]) -> tuple[list[Finding], list[Finding]]:
    """The findings that fail the gate (errors) and those that only warn."""
    errors = [f for f in findings if f.severity == "error"]
    warnings = [f for f in findings if f.severity != "error"]
    return errors, warnings


def _how_it_stopped(run: SanitizeRun) -> str:
    """How the target's run ended: the gate's timeout, its exit code, or nothing known."""
    if run.timed_out:
        return f"stopped after {run.timeout_s or 0:g} s"
    return f"exit {run.exit}" if run.exit is not None else "no exit code"


def _errors_line(log: SanitizerLog, run: SanitizeRun, count: int, errors: Sequence[Finding],
                 stopped: str) -> str:
    """The failing verdict's line: how many errors (and that the report was cut short, if it was),
    then the first error in full, or where to read them when none was printed in a known form."""
    head = f"{run.tool}: {count} error{'s' if count != 1 else ''}"
    if not log.summary_seen:
        head += f" before compute-sanitizer ended without its summary ({stopped}, {run.where})"
    said = (describe(errors, run.workspace) if errors
            else f"none printed in a form read here: see {run.log}")
    return f"{head} — {said}"


def _clean_verdict(run: SanitizeRun, warnings: Sequence[Finding], result: SanitizeResult) -> Verdict:
    """The verdict on a complete run with 0 errors: warn on warnings or on the caching allocator
    left on (a write past a tensor's end stays inside its pooled block), else pass."""
    ran = (f"on {len(run.shapes)} shape{'s' if len(run.shapes) != 1 else ''} x {len(run.candidates)} "
           f"candidate{'s' if len(run.candidates) != 1 else ''}")
    took = f" in {run.duration_s:.0f} s" if run.duration_s is not None else ""
    if warnings:
        said = describe(warnings, run.workspace)
        return Verdict("warn", f"{run.tool}: 0 errors, {len(warnings)} warning"
                       f"{'s' if len(warnings) != 1 else ''} {ran} — {said}", result)
    if run.allocator_off is not True:
        return Verdict("warn", f"{run.tool}: 0 errors {ran}{took}, but with torch's caching allocator ON: a "
                       "write past a tensor's end inside its pooled block goes unseen; leave "
                       "PYTORCH_NO_CUDA_MEMORY_CACHING=1 as the gate sets it", result)
    return Verdict("pass", f"{run.tool}: 0 errors {ran} (caching allocator off){took}", result)


def _unjudged(log: SanitizerLog, run: SanitizeRun, w: str, stopped: str) -> str:
    """The one line for a run whose report has no ERROR SUMMARY: which, where, what to do."""
    if run.timed_out:
        return (f"{run.tool} did not finish within {run.timeout_s or 0:g} s on {w} ({run.where}): a call "
                f"runs 10-100x slower under it; lower [sanitize] shapes (now {run.shapes_asked}) or raise "
                "[sanitize] timeout_s")
    target = f"; the target's last line: {run.said}" if run.said else ""
    if log.sanitizer_lines == 0:
        return (f"{run.log or 'the report'} is not a compute-sanitizer report (no ERROR SUMMARY line; "
                f"{stopped}) on {w}, {run.where}: not judged{target}; check that compute-sanitizer runs "
                f"(`compute-sanitizer --version`) and run the gate again")
    said = log.notes[-1] if log.notes else ""
    return (f"compute-sanitizer ended without its ERROR SUMMARY ({stopped}) on {w}, {run.where}: not "
            f"judged{f'; it said: {said}' if said else ''}{target}; run the gate again, or that call "
            f"by hand under compute-sanitizer --tool {run.tool} to see how it dies")


def describe(findings: Sequence[Finding], workspace: Path | None = None) -> str:
    """The first finding in full, how many more like it, and the other kinds found; CUDA API calls
    that failed after a kernel's fault (the sticky cudaErrorLaunchFailure) are counted, not spelled."""
    api: list[Finding] = []
    in_kernels: list[Finding] = []
    for f in findings:  # one pass: a faulting kernel can leave thousands of findings
        (api if f.kernel is None and f.kind.startswith("Program hit ") else in_kernels).append(f)
    then = ""
    if api and in_kernels:
        then = _after_fault_words(api)
        findings = in_kernels
    groups: dict[tuple[str, str | None, str | None], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.kind, f.kernel_short, f.location), []).append(f)
    (first, *_), *others = groups.values()
    like = len(groups[(first.kind, first.kernel_short, first.location)]) - 1
    said = where(first, workspace)
    if like:
        said += f", {like} more like it"
    if others:
        said += _other_kinds(others, workspace)
    return said + then


def _after_fault_words(api: Sequence[Finding]) -> str:
    """The CUDA API calls that failed after a kernel's fault, counted, with the sticky errors they got."""
    errors = ", ".join(dict.fromkeys(m.group(1) for f in api if (m := _API_ERROR.match(f.kind))))
    return (f"; then {len(api)} CUDA API call{'s' if len(api) != 1 else ''} failed"
            + (f" ({errors}: the fault's sticky error)" if errors else ""))


def _other_kinds(others: Sequence[list[Finding]], workspace: Path | None) -> str:
    """The other kinds of finding, briefly, the first `OTHERS_SAID` of them named."""
    kinds = "; ".join(where(g[0], workspace, brief=True) for g in others[:OTHERS_SAID])
    return f"; also {kinds}" + (f" and {len(others) - OTHERS_SAID} more" if len(others) > OTHERS_SAID
                                else "")


_API_ERROR = re.compile(r"Program hit (cuda\w+)")


def where(f: Finding, workspace: Path | None = None, brief: bool = False) -> str:
    """"Invalid __global__ write of size 4 bytes in copy_kernel at k.cu:12 (thread (31,0,0) block
    (0,0,0))"; a file inside the workspace is named from it."""
    said = f.kind
    if f.kernel_short:
        said += f" in {f.kernel_short}"
    if f.location:
        said += f" at {_relative(f.file or '', workspace)}:{f.line}"
    elif f.kernel_short and not brief:
        said += f" ({LINEINFO})"
    if f.thread and not brief:
        said += f" (thread {f.thread} block {f.block})"
    return said


def _relative(file: str, workspace: Path | None) -> str:
    if workspace is None:
        return file
    try:
        return str(Path(file).relative_to(workspace))
    except ValueError:
        return file
