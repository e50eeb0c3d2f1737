"""The Build gate: compile csrc/ into the workload extension with ninja, pinned to this GPU, with
live `[N/M]` progress and ETA, each kernel's resources and occupancy as launched, errors as
file:line (or the failed step and what it said), an import check."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cockpit.errors import CockpitError
from cockpit.gates.build_log import (
    BuildError,
    FailedStep,
    KernelResources,
    NinjaInvocation,
    expected_wall_s,
    parse_cuobjdump,
    parse_errors,
    parse_failed_steps,
    parse_ninja_step,
    parse_ptxas,
    read_ninja_log,
    up_to_date,
)
from cockpit.gates.gate import GateContext, GateStatus, Progress, Verdict
from cockpit.gates.kernel_resources import KernelReport, ResourcePolicy, report_kernels, resources_summary
from cockpit.gates.output import text_lines
from cockpit.gates.probe_call import probe_argv
from cockpit.workload.describe import cached


def ninja_history(ctx: GateContext) -> list[NinjaInvocation]:
    """Earlier builds of the workload's extension (for the ETA), when its manifest is known
    without asking a child."""
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
        try:
            lines = text_lines(ctx.log_path.read_bytes())  # the child's bytes, as a terminal shows them
        except OSError as exc:
            raise CockpitError(f"{ctx.log_path}: cannot read the build log ({exc.strerror})") from exc
        probe = _read_result(ctx.result_path)
        if probe.get("mode") == "jit":
            return judge_first_call(lines, exit_code, probe)
        return judge_build(lines, exit_code, probe)


def _read_result(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def judge_build(lines: list[str], exit_code: int, probe: dict[str, Any],
                policy: ResourcePolicy | None = None) -> Verdict:
    """The verdict on a finished build from its whole log and the probe's result file."""
    errors = parse_errors(lines)
    failed = parse_failed_steps(lines)
    report = report_kernels(_kernels(lines, probe), probe.get("launch"), policy)
    result = _build_result(lines, probe, report, errors, failed)
    last = _last_line(lines)
    if exit_code == 2 or not probe:
        return Verdict("error", last or f"the build probe exited {exit_code}", result)
    if exit_code != 0 and (errors or failed):
        return Verdict("fail", _compile_failure(errors, failed), result)
    imported = probe.get("import") or {}
    if exit_code != 0 or not imported.get("ok"):
        detail = imported.get("detail") or last
        return Verdict("fail", f"built, but it does not import: {detail}", result)
    return _judge_resources(result, report, probe)


def _kernels(lines: list[str], probe: dict[str, Any]) -> list[KernelResources]:
    """ptxas's lines in the log, else (a build that compiled nothing) the probe's cuobjdump."""
    kernels = parse_ptxas(lines)
    if not kernels and isinstance(probe.get("cuobjdump"), str):
        kernels = parse_cuobjdump(probe["cuobjdump"], f"sm_{str(probe.get('arch', '')).replace('.', '')}")
    return kernels


def _build_result(lines: list[str], probe: dict[str, Any], report: KernelReport,
                  errors: list[BuildError], failed: list[FailedStep]) -> dict[str, Any]:
    """The gate's result file: what the log and the probe say, before any judging."""
    return {
        "up_to_date": up_to_date(lines), "steps": _steps(lines), "arch": probe.get("arch"),
        "build_s": probe.get("duration_s"), "kernels": list(report.rows),
        # collect2's `ld returned 1` says less than the failed step's own line: leave it out then.
        "errors": [asdict(e) for e in errors if e.says_what or not failed],
        "failed_steps": [asdict(f) for f in failed],
        "import": probe.get("import"), "gpu": (probe.get("launch") or {}).get("gpu"),
    }


def _steps(lines: list[str]) -> int:
    """The build's step count, from ninja's largest `[N/M]`."""
    return max((s.total for s in map(parse_ninja_step, lines) if s), default=0)


def _last_line(lines: list[str]) -> str:
    """The log's last line that says something (the probe's `#` lines are its own notes)."""
    return next((line.strip() for line in reversed(lines) if line.strip() and not line.startswith("#")), "")


def _and_more(items: Sequence[object]) -> str:
    """The first item, and how many more there are."""
    return f"{items[0]}" + (f" (+{len(items) - 1} more)" if len(items) > 1 else "")


def _compile_failure(errors: list[BuildError], failed: list[FailedStep]) -> str:
    """What a failed build says first: a compiler error that names what, else the failed step."""
    named = [e for e in errors if e.says_what]
    if named:
        return _and_more(named)
    if failed:
        step = failed[0]
        said = step.said or (f"exit {step.exit_code}, no output" if step.exit_code else "no output")
        return f"{step.target} failed: {said}"
    return str(errors[0])


def _judge_resources(result: dict[str, Any], report: KernelReport, probe: dict[str, Any]) -> Verdict:
    """A build that imports, judged by its kernels' resources and occupancy."""
    findings = list(report.findings)
    result["warnings"] = [f.text for f in findings if f.severity == "warn"]
    result["failures"] = [f.text for f in findings if f.severity == "fail"]
    result["notes"] = list(report.notes)
    what = ("up to date" if result["up_to_date"]
            else f"built in {probe.get('duration_s', 0):.1f} s ({result['steps']} steps)")
    summary = f"{what}; {resources_summary(report)}"
    worst = result["failures"] or result["warnings"]
    status: GateStatus = "fail" if result["failures"] else "warn" if worst else "pass"
    if worst:
        summary = f"{_and_more(worst)}; {summary}"
    return Verdict(status, summary, result)


def judge_first_call(lines: list[str], exit_code: int, probe: dict[str, Any]) -> Verdict:
    """A workload compiled at its first call (Triton, load_inline) or with nothing to build: every
    candidate ran once on the smallest test shape."""
    rows = probe.get("rows") or []
    result: dict[str, Any] = {"first_calls": rows, "gpu": probe.get("gpu"), "steps": 0, "kernels": []}
    last = _last_line(lines)
    if exit_code != 0 or not rows:
        said = last or f"the first call exited {exit_code}"
        return Verdict("fail" if exit_code == 1 else "error", said, result)
    slowest = max(rows, key=lambda r: r.get("first_call_s") or 0)
    return Verdict("pass", f"{len(rows)} candidate(s) compiled and ran on {slowest.get('shape')}; first call "
                   f"{slowest.get('first_call_s', 0):.1f} s ({slowest.get('candidate')})", result)
