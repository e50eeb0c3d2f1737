"""The gates the cockpit runs, in the order a session needs them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from cockpit.errors import CockpitError
from cockpit.gates.attention import BenchGate, CorrectnessGate
from cockpit.gates.build import BuildGate
from cockpit.gates.gate import Gate, GateContext, NoProgress, ProgressTracker, Verdict
from cockpit.gates.profile import ProfileGate


class EnvGate:
    """Validate the environment before building: torch, CUDA, nvcc, numpy, ninja, ncu, locks."""

    name = "env"
    title = "Environment"
    timeout_s = 120.0

    def argv(self, ctx: GateContext) -> tuple[str, ...]:
        from cockpit.gates.env import env_argv  # gate modules load when a gate runs

        return tuple(env_argv(ctx.python, ctx.result_path, ctx.workspace))

    def tracker(self, ctx: GateContext) -> ProgressTracker:
        return NoProgress()  # one line per check, but how many depends on the box

    def verdict(self, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict:
        from cockpit.gates.env import env_verdict, read_env_result

        try:
            checks = read_env_result(ctx.result_path)
        except CockpitError as exc:
            last = next((line.strip() for line in reversed(tail) if line.strip()), "")
            raise CockpitError(f"the env probe exited {exit_code} without a result: "
                               f"{last or exc}") from exc
        status, summary = env_verdict(checks)
        return Verdict(status, summary, {"checks": [asdict(c) for c in checks]})


GATES: dict[str, Gate] = {
    gate.name: gate
    for gate in (EnvGate(), BuildGate(), CorrectnessGate(), BenchGate(), ProfileGate())
}
