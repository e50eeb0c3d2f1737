"""How a gate calls the workload probe in its child Python, reads what it wrote, and counts its
progress: the probe numbers each shape `[i/n]`, as ninja numbers its steps."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.gates.gate import GateContext, Progress
from cockpit.json_fields import JsonObject, obj
from cockpit.session.results import read_result_json
from cockpit.workload.describe import workload_args
from cockpit.workload.result_wire import WIRE, wire_of

PROBE = Path(__file__).resolve().parent.parent / "probes" / "workload_probe.py"
_STEP = re.compile(r"^(?:PASS |FAIL )?\[(\d+)/(\d+)\]\s*(.*)")


def probe_argv(ctx: GateContext, mode: str) -> tuple[str, ...]:
    """`python workload_probe.py MODE --workspace W --workload SRC ... --out RESULT`."""
    argv = [ctx.python, str(PROBE), mode, "--workspace", str(ctx.workspace),
            *workload_args(ctx.workspace, ctx.config).argv(), "--out", str(ctx.result_path)]
    if mode == "bench":
        w = ctx.config.workload
        argv += ["--reps", str(w.reps), "--warmup", str(w.warmup), "--settle-ms", f"{w.settle_ms:g}",
                 "--rounds", str(w.rounds),
                 "--tolerate", json.dumps(sorted(ctx.config.thresholds.validity_rules().tolerate))]
    return tuple(argv)


class ShapeCounter:
    """Progress from the probe's `[i/n] shape ...` lines."""

    def feed(self, lines: list[str], elapsed_s: float) -> Progress | None:
        for line in reversed(lines):
            m = _STEP.match(line)
            if m:
                done, total = int(m.group(1)), max(1, int(m.group(2)))
                per = elapsed_s / max(done, 1)
                step = f"{done}/{total} {m.group(3)[:40]}"
                return Progress(min(1.0, done / total), per * (total - done), step)
        return None


class OtherWire(CockpitError):
    """A probe's result file of a wire version this cockpit does not read."""


def of_this_wire(document: JsonObject, path: Path) -> JsonObject:
    """A probe's result file of the wire version this cockpit reads (cockpit/workload/
    result_wire.py: every probe writes it; a file from before the key is version 1); another
    version is one line, never a guess at its fields."""
    if wire_of(document) != WIRE:
        raise OtherWire(f"{path}: a result of wire version {wire_of(document)!r}, this cockpit "
                           f"reads {WIRE}: its probe is another cockpit's; run the gate again")
    return document


def read_result(ctx: GateContext, exit_code: int, tail: Sequence[str]) -> JsonObject:
    """The probe's result file, of the wire version this cockpit reads (cockpit/workload/
    result_wire.py); its last line as the error when it could not run (exit 2). A result that
    records a crash at one config (`crash`) is read whatever the exit code: it names the
    implementation and the config, where the last stderr line is only the traceback's end."""
    last = next((line.strip() for line in reversed(tail) if line.strip()
                 and not line.startswith("#")), "")
    data: object = None
    try:
        data = read_result_json(ctx.result_path)
    except (OSError, ValueError) as exc:
        error: Exception | None = exc
    else:
        error = None
    result = obj(data) if isinstance(data, dict) and isinstance(data.get("rows"), list) else None
    if result is not None:
        of_this_wire(result, ctx.result_path)
    if result is not None and isinstance(result.get("crash"), dict):
        return result  # the rows measured before the crash, and the crash's own line
    if exit_code == 2:
        raise CockpitError(last or "the probe could not run")
    if error is not None:
        raise CockpitError(f"the probe exited {exit_code} without a result: {last or error}") from error
    if result is None:
        raise CockpitError(f"{ctx.result_path}: not a probe result; run the gate again")
    return result
