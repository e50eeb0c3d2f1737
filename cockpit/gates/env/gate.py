"""The Env gate's core: the probe's command line, its RESULT.json, and the verdict.

The probe itself (`cockpit/probes/env_probe.py`, its checks in `cockpit/probes/env/`) runs in a
child python because it imports torch; this module only reads what it wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from cockpit.errors import CockpitError
from cockpit.files import RefusedFile, read_file
from cockpit.gates.env.result import BoxCheck, EnvResult
from cockpit.gates.gate import GateContext, NoProgress, ProgressTracker, Verdict
from cockpit.gates.probe_call import OtherWire, of_this_wire
from cockpit.session.results import MAX_RESULT_BYTES, RESULT_CAP_WHAT
from cockpit.workload.describe import PROBE as WORKLOAD_PROBE
from cockpit.workload.describe import workload_args

EnvStatus = Literal["pass", "warn", "fail"]
_STATUSES: tuple[EnvStatus, ...] = ("pass", "warn", "fail")

# The probe is stdlib-only at top level, so it runs by path: the python that has the CUDA torch
# need not have cockpit installed.
PROBE_SCRIPT = Path(__file__).resolve().parents[2] / "probes" / "env_probe.py"


@dataclass(frozen=True)
class EnvCheck:
    name: str
    status: EnvStatus
    value: str
    expected: str
    fix: str


def env_argv(python: str, result_path: Path, workspace: Path) -> list[str]:
    """The probe's command: `python .../env_probe.py --out RESULT --workspace DIR`."""
    return [python, str(PROBE_SCRIPT), "--out", str(result_path), "--workspace", str(workspace)]


def read_env_result(path: Path) -> tuple[EnvCheck, ...]:
    """The checks in the probe's RESULT.json; CockpitError (one line) if it is missing or corrupt."""
    try:
        text = read_file(path, MAX_RESULT_BYTES, RESULT_CAP_WHAT).decode("utf-8")
    except RefusedFile:
        raise  # a FIFO or a 3 GB file in its place, named
    except FileNotFoundError:
        raise CockpitError(
            f"{path}: no env probe result (the probe stopped before writing it); "
            "read the gate's log and run the env gate again"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CockpitError(
            f"{path}: cannot read the env probe result ({exc}); run the env gate again"
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CockpitError(
            f"{path}:{exc.lineno}: corrupt env probe result ({exc.msg}); run the env gate again"
        ) from exc
    items = of_this_wire(data, path).get("checks") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise CockpitError(f"{path}: env probe result has no 'checks' list; run the env gate again")
    return tuple(_env_check(path, index, item) for index, item in enumerate(items))


def _env_check(path: Path, index: int, item: object) -> EnvCheck:
    """One check of the result; CockpitError naming its index when it is not one."""
    if (not isinstance(item, dict) or not isinstance(item.get("name"), str)
            or item.get("status") not in _STATUSES):
        raise CockpitError(
            f"{path}: checks[{index}] is not a check (needs a name and a status pass|warn|fail); "
            "run the env gate again"
        )
    return EnvCheck(
        name=item["name"],
        status=cast(EnvStatus, item["status"]),
        value=str(item.get("value", "")),
        expected=str(item.get("expected", "")),
        fix=str(item.get("fix", "")),
    )


def env_verdict(checks: Iterable[EnvCheck]) -> tuple[EnvStatus, str]:
    """("fail"|"warn"|"pass", "2 failed (cuda_available, nvcc), 3 warnings, 9 passed")."""
    checks = tuple(checks)
    if not checks:
        return "fail", "the env probe reported no checks"
    failed = [c.name for c in checks if c.status == "fail"]
    warned = sum(c.status == "warn" for c in checks)
    passed = sum(c.status == "pass" for c in checks)
    if not failed and not warned:
        return "pass", (f"all {passed} checks passed" if passed != 1 else "the 1 check passed")
    return ("fail" if failed else "warn"), _tally(failed, warned, passed)


def _tally(failed: list[str], warned: int, passed: int) -> str:
    """"2 failed (cuda_available, nvcc), 3 warnings, 9 passed": the failed ones named, none said as 0."""
    parts = []
    if failed:
        parts.append(f"{len(failed)} failed ({', '.join(failed)})")
    if warned:
        parts.append(f"{warned} warning{'s' if warned != 1 else ''}")
    parts.append(f"{passed} passed")
    return ", ".join(parts)


def workload_describe(ctx: GateContext) -> tuple[str, ...]:
    """The env probe's arguments for the extension check: the workload's describe command (the
    probe asks it, so the cockpit never waits on the child's torch import), or no extension at
    all when cockpit.toml names no workload."""
    try:
        args = workload_args(ctx.workspace, ctx.config)
    except CockpitError:
        return ("--extension", "")
    describe = [ctx.python, str(WORKLOAD_PROBE), "describe", "--workspace", str(ctx.workspace), *args.argv()]
    return ("--describe", json.dumps(describe))


class EnvGate:
    """Validate the environment before building: torch, CUDA, nvcc, numpy, ninja, ncu, locks."""

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        return (*env_argv(ctx.python, ctx.result_path, ctx.workspace), *workload_describe(ctx))

    def tracker(self, ctx: GateContext) -> ProgressTracker:
        return NoProgress()  # one line per check, but how many depends on the box

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        try:
            checks = read_env_result(ctx.result_path)
        except OtherWire:  # its own line: what the log's last line says is not why
            raise
        except CockpitError as exc:
            last = next((line.strip() for line in reversed(tail) if line.strip()), "")
            raise CockpitError(f"the env probe exited {exit_code} without a result: "
                               f"{last or exc}") from exc
        status, summary = env_verdict(checks)
        result = EnvResult(tuple(BoxCheck(c.name, c.status, c.value, c.fix, c.expected) for c in checks))
        return Verdict(status, summary, result)
