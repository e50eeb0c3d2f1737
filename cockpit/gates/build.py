"""The Build gate: compile csrc/ into the workload extension with ninja, pinned to this GPU,
with live `[N/M]` progress and ETA, per-kernel resources, errors as file:line, an import check."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cockpit.errors import CockpitError
from cockpit.gates.build_log import (
    SMEM_PER_BLOCK,
    KernelResources,
    NinjaInvocation,
    expected_wall_s,
    parse_cuobjdump,
    parse_errors,
    parse_ninja_step,
    parse_ptxas,
    read_ninja_log,
    up_to_date,
)
from cockpit.gates.gate import GateContext, GateStatus, Progress, Verdict

EXTENSION = "cockpit_attn"
PROBE = Path(__file__).resolve().parent.parent / "probes" / "build_probe.py"


def build_dir(workspace: Path) -> Path:
    return workspace / "build" / EXTENSION


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
    name = "build"
    title = "Build"
    timeout_s = 1800.0

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return (ctx.python, str(PROBE), "--workspace", str(ctx.workspace),
                "--out", str(ctx.result_path), "--name", EXTENSION)

    def tracker(self, ctx: GateContext) -> NinjaTracker:
        return NinjaTracker(read_ninja_log(build_dir(ctx.workspace) / ".ninja_log"))

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        try:
            lines = ctx.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            raise CockpitError(f"{ctx.log_path}: cannot read the build log ({exc.strerror})") from exc
        probe = _read_result(ctx.result_path)
        return judge_build(lines, exit_code, probe)


def _read_result(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def judge_build(lines: list[str], exit_code: int, probe: dict[str, Any]) -> Verdict:
    """The verdict on a finished build from its whole log and the probe's result file."""
    kernels = parse_ptxas(lines)
    if not kernels and isinstance(probe.get("cuobjdump"), str):
        kernels = parse_cuobjdump(probe["cuobjdump"], f"sm_{str(probe.get('arch', '')).replace('.', '')}")
    errors = parse_errors(lines)
    cached = up_to_date(lines)
    steps = max((s.total for s in map(parse_ninja_step, lines) if s), default=0)
    result: dict[str, Any] = {
        "up_to_date": cached, "steps": steps, "arch": probe.get("arch"),
        "build_s": probe.get("duration_s"), "kernels": [asdict(k) for k in kernels],
        "errors": [asdict(e) for e in errors], "import": probe.get("import"),
    }
    last = next((line.strip() for line in reversed(lines) if line.strip()
                 and not line.startswith("#")), "")
    if exit_code == 2 or not probe:
        return Verdict("error", last or f"the build probe exited {exit_code}", result)
    if errors and exit_code != 0:
        first = errors[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return Verdict("fail", f"{first}{more}", result)
    imported = probe.get("import") or {}
    if exit_code != 0 or not imported.get("ok"):
        detail = imported.get("detail") or last
        return Verdict("fail", f"built, but it does not import: {detail}", result)
    warnings = resource_warnings(kernels)
    result["warnings"] = warnings
    status: GateStatus = "warn" if warnings else "pass"
    what = "up to date" if cached else f"built in {probe.get('duration_s', 0):.1f} s ({steps} steps)"
    summary = f"{what}; {resources_summary(kernels)}"
    if warnings:
        summary += f"; {warnings[0]}" + (f" (+{len(warnings) - 1})" if len(warnings) > 1 else "")
    return Verdict(status, summary, result)


def resources_summary(kernels: list[KernelResources]) -> str:
    if not kernels:
        return "no kernel resource usage reported"
    regs = max(k.registers for k in kernels)
    smem = max(k.smem for k in kernels)
    spills = sum(k.spill_stores + k.spill_loads for k in kernels)
    return (f"{len(kernels)} kernels, ≤{regs} regs, ≤{smem // 1024} KB static smem, "
            + ("no spills" if not spills else f"{spills} bytes spilled"))


def resource_warnings(kernels: list[KernelResources]) -> list[str]:
    out = []
    for k in kernels:
        spilled = k.spill_stores + k.spill_loads
        if spilled:
            out.append(f"{short_name(k.name)} ({k.arch}) spills {spilled} bytes to local memory")
        limit = SMEM_PER_BLOCK.get(k.arch.rstrip("a"))
        if limit is not None and k.smem > limit:
            out.append(f"{short_name(k.name)} uses {k.smem // 1024} KB smem, over {k.arch}'s "
                       f"{limit // 1024} KB per block")
    return out


def short_name(mangled: str) -> str:
    """`_Z16attn_fwd_kernelILi64EEvv` -> `attn_fwd_kernel<64>`-ish: readable, not exact."""
    from cockpit.gates.build_log import demangle

    name = demangle(mangled)
    return name.split("(")[0] if name != mangled else mangled
