"""`[gates]`: the GPU every gate runs on (`device`), and per gate (`[gates.<name>]`) a command,
limits or environment in place of the gate's own."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cockpit.config.reader import ConfigReader
from cockpit.gate_lines import GATE_NAMES
from cockpit.hardware.device_spec import DeviceSpec, parse_device


@dataclass(frozen=True)
class GateConfig:
    """`[gates.<name>]`: replaces a gate's command, limits or environment."""

    command: tuple[str, ...] | None = None
    shell: bool = False
    timeout_s: float | None = None
    stall_after_s: float = 60.0
    env: Mapping[str, str] = field(default_factory=dict)




@dataclass(frozen=True)
class Gates(Mapping[str, GateConfig]):
    """`[gates]`: a GateConfig per `[gates.<name>]` the file has (read like a dict), and the GPU
    the gates are pinned to."""

    by_name: Mapping[str, GateConfig] = field(default_factory=dict)
    device: DeviceSpec | None = None
    """`device = "GPU-…"`: every gate's child gets CUDA_VISIBLE_DEVICES set to this GPU's UUID."""
    device_where: str = field(default="", compare=False)
    """Where `device` was set ("…/cockpit.toml:LINE"), for the error when no GPU matches it."""
    python: str = ""
    """`python = "/opt/torch/.venv/bin/python"`: the interpreter the gates' probes run (the one
    with your CUDA torch); empty: found (cockpit/gates/interpreter.py)."""
    python_where: str = field(default="", compare=False)
    log_max_mb: float = 64.0
    """`log_max_mb = 64`: a gate's log keeps its first and last half of this; the cut is said."""

    def __getitem__(self, name: str) -> GateConfig:
        return self.by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_name)

    def __len__(self) -> int:
        return len(self.by_name)


def read_gates(table: Mapping[str, Any], reader: ConfigReader) -> Gates:
    """One GateConfig per `[gates.<name>]` the file has (a gate without one keeps its defaults),
    and `device`, checked to name a GPU the way `nvidia-smi` does."""
    device: DeviceSpec | None = None
    if "device" in table:
        try:
            device = parse_device(table["device"])
        except ValueError as exc:
            raise reader.fail("gates.device", str(exc)) from None
    python = _python(table, reader)
    log_max_mb = reader.number(table.get("log_max_mb", 64.0), "gates.log_max_mb",
                               lambda v: 1 <= v <= 100_000, "megabytes from 1 to 100000")
    return Gates({name: _read_gate(body, name, reader) for name, body in table.items()
                  if name not in ("device", "python", "log_max_mb")},
                 device, reader.lines.where("gates.device") if device is not None else "",
                 python.strip(), reader.lines.where("gates.python") if python else "", log_max_mb)


def _python(table: Mapping[str, Any], reader: ConfigReader) -> str:
    """`python`, as written: the gates' interpreter by path or name ("" when the file names none)."""
    python = table.get("python", "")
    if not isinstance(python, str) or ("python" in table and not python.strip()) or "\0" in python:
        raise reader.fail("gates.python", f"{python!r} is not an interpreter: give its path or name as a "
                          'string, e.g. python = "/opt/conda/bin/python"')
    return python


def _read_gate(body: Any, name: str, reader: ConfigReader) -> GateConfig:
    """One `[gates.<name>]` table: its command, how it runs, its environment and its clocks."""
    key_path = f"gates.{name}"
    if name not in GATE_NAMES:
        raise reader.fail(key_path, f"unknown gate (allowed: device, {', '.join(GATE_NAMES)})")
    if not isinstance(body, dict):
        raise reader.fail(key_path, f"must be a table: [{key_path}]")
    reader.check_keys(body, key_path, ("command", "env", "shell", "stall_after_s", "timeout_s"))
    shell = body.get("shell", False)
    if not isinstance(shell, bool):
        raise reader.fail(f"{key_path}.shell", f"{shell!r} is not allowed (expected true or false)")
    argv = _command(body.get("command"), shell, key_path, reader)
    env = _environment(body.get("env", {}), key_path, reader)
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


def _command(command: Any, shell: bool, key_path: str, reader: ConfigReader) -> tuple[str, ...] | None:
    """`command`: a list of arguments, or one string run by the shell; None keeps the gate's own probe."""
    if command is None:
        return None
    argv = _arguments(command, shell)
    if argv is None:
        raise reader.fail(
            f"{key_path}.command",
            'expected a list of arguments such as ["python", "setup.py", "build_ext"], '
            "or a string together with shell = true",
        )
    held = [n for n, arg in enumerate(argv, 1) if "\0" in arg]
    if held:  # Popen would fail at the gate's start, as a traceback
        raise reader.fail(f"{key_path}.command", f"{'the command' if shell else f'argument {held[0]}'} "
                          "holds a NUL byte (\\u0000), which no process can take; remove it")
    return argv


def _arguments(command: Any, shell: bool) -> tuple[str, ...] | None:
    """The arguments `command` gives: one string for the shell, else a list of strings; None when
    its shape does not fit `shell`."""
    if shell:
        return (command,) if isinstance(command, str) and command.strip() else None
    if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        return tuple(command)
    return None


def _environment(env: Any, key_path: str, reader: ConfigReader) -> dict[str, str]:
    """`env`: names and values a process environment can hold; a value is never echoed (it may be
    a password)."""
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise reader.fail(f"{key_path}.env", 'expected a table of strings, e.g. env = { MAX_JOBS = "8" }')
    for key, value in env.items():
        if not key or "=" in key or "\0" in key:
            raise reader.fail(f"{key_path}.env", f"{key!r} is not a name a process environment can hold "
                              "(not empty, no '=', no NUL byte); rename it")
        if "\0" in value:
            raise reader.fail(f"{key_path}.env", f"the value of {key} holds a NUL byte, which no process "
                              "environment can hold; remove it")
    return env
