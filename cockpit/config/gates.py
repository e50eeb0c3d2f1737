"""`[gates.<name>]`: replaces a gate's command, limits or environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cockpit.config.reader import ConfigReader


@dataclass(frozen=True)
class GateConfig:
    """`[gates.<name>]`: replaces a gate's command, limits or environment."""

    command: tuple[str, ...] | None = None
    shell: bool = False
    timeout_s: float | None = None
    stall_after_s: float = 60.0
    env: Mapping[str, str] = field(default_factory=dict)


GATE_NAMES = ("env", "build", "correctness", "bench", "profile")


def read_gates(table: Mapping[str, Any], reader: ConfigReader) -> Mapping[str, GateConfig]:
    """One GateConfig per `[gates.<name>]` the file has; a gate without one keeps its defaults."""
    return {name: _read_gate(body, name, reader) for name, body in table.items()}


def _read_gate(body: Any, name: str, reader: ConfigReader) -> GateConfig:
    key_path = f"gates.{name}"
    if name not in GATE_NAMES:
        raise reader.fail(key_path, f"unknown gate (allowed: {', '.join(GATE_NAMES)})")
    if not isinstance(body, dict):
        raise reader.fail(key_path, f"must be a table: [{key_path}]")
    reader.check_keys(body, key_path, ("command", "env", "shell", "stall_after_s", "timeout_s"))
    shell = body.get("shell", False)
    if not isinstance(shell, bool):
        raise reader.fail(f"{key_path}.shell", f"{shell!r} is not allowed (expected true or false)")
    command = body.get("command")
    argv: tuple[str, ...] | None = None
    if command is not None:
        if shell and isinstance(command, str) and command.strip():
            argv = (command,)
        elif not shell and isinstance(command, list) and command and all(
                isinstance(a, str) for a in command):
            argv = tuple(command)
        else:
            raise reader.fail(
                f"{key_path}.command",
                'expected a list of arguments such as ["python", "setup.py", "build_ext"], '
                "or a string together with shell = true",
            )
    env = body.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise reader.fail(f"{key_path}.env", 'expected a table of strings, e.g. env = { MAX_JOBS = "8" }')
    timeout = body.get("timeout_s")
    return GateConfig(
        command=argv,
        shell=shell,
        timeout_s=None if timeout is None else reader.number(
            timeout, f"{key_path}.timeout_s", lambda v: v > 0, "seconds > 0"),
        stall_after_s=reader.number(body.get("stall_after_s", 60.0), f"{key_path}.stall_after_s",
                                    lambda v: v > 0, "seconds > 0, default 60"),
        env=dict(env),
    )
