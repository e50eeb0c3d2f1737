"""The Build gate: compile csrc/ into the workload extension with ninja, pinned to this GPU, with
live `[N/M]` progress and ETA, each kernel's resources and occupancy as launched, errors as
file:line (or the failed step and what it said), an import check. A build command cockpit.toml
puts in its place (setup.py, CMake, make, nvcc) has its log read the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.files import read_tail, size_words
from cockpit.gates.build.log import (
    BuildError,
    KernelResources,
    NinjaInvocation,
    StepFailure,
    expected_wall_s,
    parse_cuobjdump,
    parse_errors,
    parse_failed_steps,
    parse_ninja_step,
    parse_ptxas,
    read_ninja_log,
    up_to_date,
)
from cockpit.gates.build.resources import KernelReport, ResourcePolicy, report_kernels, resources_summary
from cockpit.gates.build.result import BuildResult, CompileError, FailedStep, kernel_of
from cockpit.gates.gate import GateContext, GateStatus, Progress, Verdict
from cockpit.gates.output import text_lines
from cockpit.gates.probe_call import of_this_wire, probe_argv
from cockpit.json_fields import JsonObject, as_number, obj, objects, text
from cockpit.session.paths import stored_path
from cockpit.session.results import read_result_json
from cockpit.workload.describe import cached

NO_LAUNCH_TABLE = "a replaced build gives no launch table"
"""Why a replaced build's kernels have no shared memory per block or occupancy (no launch_info())."""

MAX_BUILD_LOG_BYTES = 16 << 20
"""The most of a build log judged: its last 16 MB, where a failed step and its errors are
(`[gates] log_max_mb` lets a log grow to 100,000 MB; read whole, it would be held whole)."""


def ninja_history(ctx: GateContext) -> list[NinjaInvocation]:
    """Earlier builds of the workload's extension (for the ETA), when its manifest is known
    without asking a child; none for a replaced build command (its steps are not the extension's)."""
    if (replaced := ctx.config.gates.get("build")) is not None and replaced.command:
        return []
    try:
        manifest = cached(ctx.workspace, ctx.config, ctx.python)
    except CockpitError:
        return []
    if manifest is None or not manifest.build.name:
        return []
    return list(read_ninja_log(ctx.workspace / "build" / manifest.build.name / ".ninja_log"))


class NinjaTracker:
    """Progress from `[N/M]` lines; ETA from the last build with as many steps (.ninja_log)."""

    def __init__(self, history: Sequence[NinjaInvocation]) -> None:
        self._history = history
        self._first_step_at: float | None = None

    def feed(self, lines: list[str], elapsed_s: float) -> Progress | None:
        step = None
        for line in reversed(lines):
            step = parse_ninja_step(line)
            if step:
                break
        if step is None:
            return None
        if self._first_step_at is None:
            self._first_step_at = elapsed_s
        expected = expected_wall_s(self._history, step.total)
        eta = None if expected is None else max(0.0, expected - (elapsed_s - self._first_step_at))
        return Progress((step.n - 1) / step.total, eta, f"[{step.n}/{step.total}] {step.output}")


class BuildGate:
    """Build the extension with ninja, then read its kernels' resources and launch limits."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return probe_argv(ctx, "build")

    def tracker(self, ctx: GateContext) -> NinjaTracker:
        return NinjaTracker(ninja_history(ctx))

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        lines, cut = _read_log(ctx)
        probe = _read_result(ctx.result_path)
        if probe.get("mode") == "jit":
            return _saying(cut, judge_first_call(lines, exit_code, probe))
        return _saying(cut, judge_build(lines, exit_code, probe))


def judge_replaced_build(ctx: GateContext, exit_code: int) -> Verdict:
    """The verdict on a build command cockpit.toml put in place of the cockpit's: its log."""
    lines, cut = _read_log(ctx)
    return _saying(cut, judge_build_log(lines, exit_code, stored_path(ctx.log_path, ctx.workspace)))


def _read_log(ctx: GateContext) -> tuple[list[str], str]:
    """The build log's lines (the child's bytes, as a terminal shows them), through the door; past
    MAX_BUILD_LOG_BYTES only its last lines, and a note saying what was cut ("" when nothing was)."""
    try:
        data, size = read_tail(ctx.log_path, MAX_BUILD_LOG_BYTES)
    except OSError as exc:  # a FIFO or a folder in its place too: one line naming it
        raise CockpitError(f"{ctx.log_path}: cannot read the build log ({exc.strerror})") from exc
    if size <= len(data):
        return text_lines(data), ""
    whole = stored_path(ctx.log_path, ctx.workspace)
    return text_lines(data)[1:], (f"judged from the last {size_words(MAX_BUILD_LOG_BYTES)} of its "
                                  f"{size_words(size)} log: the whole is {whole}")


def _saying(cut: str, verdict: Verdict) -> Verdict:
    """The verdict, its summary saying what of the log was cut (when something was)."""
    return replace(verdict, summary=f"{verdict.summary} ({cut})") if cut else verdict


def _read_result(path: Path) -> JsonObject:
    try:
        data = read_result_json(path)
    except (OSError, ValueError):
        return {}
    return of_this_wire(obj(data), path)


def judge_build(lines: list[str], exit_code: int, probe: JsonObject,
                policy: ResourcePolicy | None = None) -> Verdict:
    """The verdict on a finished build from its whole log and the probe's result file."""
    errors = parse_errors(lines)
    failed = parse_failed_steps(lines)
    launch = probe.get("launch")
    report = report_kernels(_kernels(lines, probe), obj(launch) if isinstance(launch, dict) else None, policy)
    result = _build_result(lines, probe, report, errors, failed)
    last = _last_line(lines)
    if exit_code == 2 or not probe:
        return Verdict("error", last or f"the build probe exited {exit_code}", result)
    if exit_code != 0 and (errors or failed):
        return Verdict("fail", _compile_failure(errors, failed), result)
    imported = obj(probe.get("import"))
    if exit_code != 0 or not imported.get("ok"):
        detail = imported.get("detail") or last
        return Verdict("fail", f"built, but it does not import: {detail}", result)
    what = ("up to date" if result.up_to_date
            else f"built in {as_number(probe.get('duration_s')) or 0:.1f} s ({result.steps} steps)")
    return _judge_resources(result, report, what)


def judge_build_log(lines: list[str], exit_code: int, log: str,
                    policy: ResourcePolicy | None = None) -> Verdict:
    """A replaced build command's verdict from its log alone (no probe: no import check, no launch
    table): the failed step and its first error, else the kernels ptxas reported."""
    errors, failed = parse_errors(lines), parse_failed_steps(lines)
    report = replace(report_kernels(parse_ptxas(lines), None, policy), why_unknown=NO_LAUNCH_TABLE)
    result = _build_result(lines, {}, report, errors, failed)
    if exit_code != 0:
        if errors or failed:
            return Verdict("fail", _compile_failure(errors, failed), result)
        last = _last_line(lines)
        said = f"{last[:160]}; " if _readable(last) else ""
        return Verdict("fail", f"exit {exit_code}: {said}the build's log names no failed step or compiler "
                               f"error: read it at {log}", result)
    what = "up to date" if result.up_to_date else f"built ({result.steps} steps)" if result.steps else "built"
    if not report.rows:
        return Verdict("pass", f"{what}; no ptxas lines in its log: add -Xptxas -v to nvcc's flags for "
                               "each kernel's registers, spills and shared memory", result)
    return _judge_resources(result, report, what)


def _readable(line: str) -> bool:
    """Whether a line is text a person can read (not the replacement characters of random bytes)."""
    return bool(line) and sum(c.isprintable() and c != "\ufffd" for c in line) >= 0.9 * len(line)


def _kernels(lines: list[str], probe: JsonObject) -> list[KernelResources]:
    """ptxas's lines in the log, else (a build that compiled nothing) the probe's cuobjdump."""
    kernels = parse_ptxas(lines)
    cuobjdump = probe.get("cuobjdump")
    if not kernels and isinstance(cuobjdump, str):
        kernels = parse_cuobjdump(cuobjdump, f"sm_{str(probe.get('arch', '')).replace('.', '')}")
    return kernels


def _build_result(lines: list[str], probe: JsonObject, report: KernelReport,
                  errors: list[BuildError], failed: list[StepFailure]) -> BuildResult:
    """The gate's result: what the log and the probe say, before any judging."""
    imported = probe.get("import")
    return BuildResult(
        up_to_date(lines), _steps(lines), as_number(probe.get("duration_s")), _arch(probe.get("arch")),
        obj(imported).get("ok") is True if isinstance(imported, dict) else None,
        text(obj(imported).get("detail")),
        # collect2's `ld returned 1` says less than the failed step's own line: leave it out then.
        tuple(CompileError(e.file or None, e.line, e.kind, e.message)
              for e in errors if e.says_what or not failed),
        tuple(FailedStep(f.target, f.said, f.exit_code) for f in failed),
        tuple(kernel_of(row) for row in report.rows),
        raw={"import": imported, "gpu": obj(probe.get("launch")).get("gpu")})


def _arch(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _steps(lines: list[str]) -> int:
    """The build's step count, from ninja's largest `[N/M]`."""
    return max((s.total for s in map(parse_ninja_step, lines) if s), default=0)


def _last_line(lines: list[str]) -> str:
    """The log's last line that says something (the probe's `#` lines are its own notes)."""
    return next((line.strip() for line in reversed(lines) if line.strip() and not line.startswith("#")), "")


def _and_more(items: Sequence[object]) -> str:
    """The first item, and how many more there are."""
    return f"{items[0]}" + (f" (+{len(items) - 1} more)" if len(items) > 1 else "")


def _compile_failure(errors: list[BuildError], failed: list[StepFailure]) -> str:
    """What a failed build says first: the step ninja or make says failed (`FAILED: k.cuda.o — `),
    then a compiler error that names what, else the first thing that step said."""
    named = [e for e in errors if e.says_what]
    if not failed:
        return _and_more(named) if named else str(errors[0])
    step = failed[0]
    said = _and_more(named) if named else step.said or (
        f"exit {step.exit_code}, no output" if step.exit_code else "no output")
    return f"FAILED: {step.target} — {said}"


def _judge_resources(result: BuildResult, report: KernelReport, what: str) -> Verdict:
    """A build that imports (or a replaced build that exited 0), judged by its kernels' resources
    and occupancy; `what` says how the build went."""
    findings = list(report.findings)
    result = replace(result, warnings=tuple(f.text for f in findings if f.severity == "warn"),
                     failures=tuple(f.text for f in findings if f.severity == "fail"),
                     notes=tuple(report.notes))
    summary = f"{what}; {resources_summary(report)}"
    worst = result.failures or result.warnings
    status: GateStatus = "fail" if result.failures else "warn" if worst else "pass"
    if worst:
        summary = f"{_and_more(worst)}; {summary}"
    return Verdict(status, summary, result)


def judge_first_call(lines: list[str], exit_code: int, probe: JsonObject) -> Verdict:
    """A workload compiled at its first call (Triton, load_inline) or with nothing to build: every
    candidate ran once on the smallest test shape."""
    rows = objects(probe.get("rows"))
    calls = {"first_calls": [dict(r) for r in rows], "gpu": probe.get("gpu")}
    result = BuildResult(steps=0, raw=calls)
    last = _last_line(lines)
    if exit_code != 0 or not rows:
        said = last or f"the first call exited {exit_code}"
        return Verdict("fail" if exit_code == 1 else "error", said, result)
    slowest = max(rows, key=lambda r: as_number(r.get("first_call_s")) or 0)
    return Verdict("pass", f"{len(rows)} candidate(s) compiled and ran on {slowest.get('shape')}; first call "
                   f"{as_number(slowest.get('first_call_s')) or 0:.1f} s ({slowest.get('candidate')})",
                   result)
