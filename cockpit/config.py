"""`cockpit.toml`: session templates, status cadence, thresholds, GPU cost.

No file means the defaults below. A syntax error, an unknown key or a bad value raises
`ConfigError` whose message names `cockpit.toml:LINE`, the key path and what is allowed.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

from cockpit.errors import CockpitError

CONFIG_NAME = "cockpit.toml"


class ConfigError(CockpitError):
    """cockpit.toml could not be used as written."""


@dataclass(frozen=True)
class PhaseSpec:
    name: str
    budget_s: float


@dataclass(frozen=True)
class Template:
    name: str
    phases: tuple[PhaseSpec, ...]


def _phases(*pairs: tuple[str, int]) -> tuple[PhaseSpec, ...]:
    return tuple(PhaseSpec(name, minutes * 60.0) for name, minutes in pairs)


# The seeds' two session shapes (minutes).
DEFAULT_TEMPLATES: Mapping[str, Template] = {
    "optimize": Template(
        "optimize",
        _phases(
            ("Environment", 10),
            ("Baseline", 20),
            ("Profile", 30),
            ("Fix", 90),
            ("Evaluate", 20),
            ("Document", 20),
        ),
    ),
    "baseline": Template(
        "baseline", _phases(("Environment", 10), ("Baseline", 15), ("Document", 5))
    ),
}


@dataclass(frozen=True)
class GateConfig:
    """`[gates.<name>]`: replaces a gate's command, limits or environment."""

    command: tuple[str, ...] | None = None
    shell: bool = False
    timeout_s: float | None = None
    stall_after_s: float = 60.0
    env: Mapping[str, str] = field(default_factory=dict)


GATE_NAMES = ("env", "build", "correctness", "bench", "profile")


@dataclass(frozen=True)
class ProfileSettings:
    """`[profile]`: what the profile gate runs ncu on, and how."""

    kernel_regex: str = "attn_fwd"
    launch_skip: int = 3
    sections: tuple[str, ...] = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats",
                                 "SchedulerStats", "MemoryWorkloadAnalysis",
                                 "MemoryWorkloadAnalysis_Tables")
    set_full: bool = False
    clock_control: str = "base"
    """ncu's default: clocks locked to base, so its durations are not the benchmark's."""
    batch: int = 4
    heads: int = 16
    seq_len: int = 4096
    head_dim: int = 64
    dtype: str = "fp16"
    causal: bool = False


@dataclass(frozen=True)
class Workload:
    """`[workload]`: the attention configs the correctness and bench gates run."""

    batch: int = 4
    heads: int = 16
    head_dims: tuple[int, ...] = (64, 128)
    seq_lens: tuple[int, ...] = (32, 128, 512, 1024, 2048, 4096, 8192)
    dtypes: tuple[str, ...] = ("fp16", "bf16")
    causal: tuple[bool, ...] = (False, True)
    large_seq: int = 8192
    """From this sequence length on, the batch is lowered to `large_batch`."""
    large_batch: int = 2
    tolerance: float = 1e-2
    reps: int = 30
    warmup: int = 5
    settle_ms: float = 100.0
    """Before each timed block, each implementation runs this long untimed, so it is timed at its
    own steady clock: a power-capped GPU needs ~100 ms to settle after a lighter kernel."""
    rounds: int = 2
    """Timed blocks per implementation and config, in alternating order (drift hits all alike)."""

    def configs(self) -> list[dict[str, object]]:
        """Every config, smallest first."""
        out: list[dict[str, object]] = []
        for s in sorted(self.seq_lens):
            for d in self.head_dims:
                for dtype in self.dtypes:
                    for causal in self.causal:
                        b = self.large_batch if s >= self.large_seq else self.batch
                        out.append({"B": b, "H": self.heads, "S": s, "D": d, "dtype": dtype,
                                    "causal": causal})
        return out


@dataclass(frozen=True)
class Thresholds:
    phase_warn_fraction: float = 0.8
    speedup_critical: float = 0.5
    speedup_high: float = 1.0
    speedup_medium: float = 1.5
    keep_improvement: float = 0.2
    """A change is kept when the kernel got at least this much faster (0.2 = 20 %)."""
    sm_clock_fraction: float = 0.9
    """A bench is suspect when the busy SM clock fell below this fraction of its max ..."""
    tolerated_clock_events: tuple[str, ...] = ()
    """... or a clock event was active, unless it is one of these (e.g. "power cap" on an H100/H200,
    which sits at its cap under every heavy kernel)."""


@dataclass(frozen=True)
class Config:
    templates: Mapping[str, Template] = field(default_factory=lambda: dict(DEFAULT_TEMPLATES))
    default_template: str = "optimize"
    status_every_s: float = 150.0
    thresholds: Thresholds = field(default_factory=Thresholds)
    workload: Workload = field(default_factory=Workload)
    profile: ProfileSettings = field(default_factory=ProfileSettings)
    # An L4 on-demand hour in the seeds' sessions (~2 h for $1.36).
    gpu_cost_per_hour: float = 0.68
    gates: Mapping[str, GateConfig] = field(default_factory=dict)
    source: Path | None = None

    @property
    def phase_warn_fraction(self) -> float:
        return self.thresholds.phase_warn_fraction

    def gate(self, name: str) -> GateConfig:
        return self.gates.get(name, GateConfig())

    def template(self, name: str | None) -> Template:
        key = name or self.default_template
        if key not in self.templates:
            allowed = ", ".join(sorted(self.templates))
            raise ConfigError(f"unknown session template '{key}' (allowed: {allowed})")
        return self.templates[key]


def load_config(workspace: Path) -> Config:
    """Read `<workspace>/cockpit.toml`, or return the defaults when there is none."""
    path = workspace / CONFIG_NAME
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror}); check its permissions") from exc
    text = raw.decode("utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = _line_of_decode_error(exc)
        where = f"{path}:{line}" if line else str(path)
        raise ConfigError(f"{where}: TOML syntax error: {_strip_position(exc)}; fix that line") from exc
    return _Reader(data, _KeyLines(text, path)).config()


def _line_of_decode_error(exc: Exception) -> int | None:
    lineno = getattr(exc, "lineno", None)
    if isinstance(lineno, int):
        return lineno
    m = re.search(r"line (\d+)", str(exc))
    return int(m.group(1)) if m else None


def _strip_position(exc: Exception) -> str:
    return re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "invalid TOML"


class _KeyLines:
    """Maps dotted key paths to the line that defines them, for error messages."""

    _HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")

    def __init__(self, text: str, path: Path) -> None:
        self.path = path
        self.lines: dict[str, int] = {}
        table = ""
        for number, line in enumerate(text.splitlines(), start=1):
            header = self._HEADER.match(line)
            if header:
                table = _normalise(header.group(1))
                self.lines.setdefault(table, number)
                continue
            key = self._KEY.match(line)
            if key:
                full = f"{table}.{_normalise(key.group(1))}" if table else _normalise(key.group(1))
                self.lines.setdefault(full, number)

    def where(self, key_path: str) -> str:
        parts = key_path.split(".")
        for end in range(len(parts), 0, -1):
            line = self.lines.get(".".join(parts[:end]))
            if line:
                return f"{self.path}:{line}"
        return str(self.path)


def _normalise(dotted: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in dotted.split("."))


class _Reader:
    """Validates the parsed TOML; every error names file:line, the key path and what is allowed."""

    def __init__(self, data: Mapping[str, Any], lines: _KeyLines) -> None:
        self.data = data
        self.lines = lines

    def fail(self, key_path: str, message: str) -> ConfigError:
        return ConfigError(f"{self.lines.where(key_path)}: {key_path}: {message}")

    def check_keys(self, table: Mapping[str, Any], prefix: str, allowed: tuple[str, ...]) -> None:
        for key in table:
            if key not in allowed:
                path = f"{prefix}.{key}" if prefix else key
                raise self.fail(path, f"unknown key (allowed here: {', '.join(allowed)})")

    def number(self, value: Any, key_path: str, ok: Callable[[float], bool], rule: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not ok(value):
            raise self.fail(key_path, f"{value!r} is not allowed (expected {rule})")
        return float(value)

    def table(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table, e.g. [{key}]")
        return value

    def config(self) -> Config:
        data, defaults = self.data, Config()
        self.check_keys(data, "", _TOP_LEVEL)

        cadence = self.table("cadence")
        self.check_keys(cadence, "cadence", ("status_every_s",))
        status_every_s = self.number(
            cadence.get("status_every_s", defaults.status_every_s),
            "cadence.status_every_s", lambda v: v > 0, "a number of seconds > 0, default 150",
        )
        thresholds = self.thresholds()
        workload = self.workload()
        profile = self.profile()
        cost = self.number(
            data.get("gpu_cost_per_hour", defaults.gpu_cost_per_hour),
            "gpu_cost_per_hour", lambda v: v >= 0, "a price per GPU hour >= 0",
        )
        templates = dict(DEFAULT_TEMPLATES)
        for name, body in self.table("templates").items():
            key_path = f"templates.{name}"
            if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name):
                raise self.fail(key_path, "template names use lowercase letters, digits, '-' and '_'")
            if not isinstance(body, dict):
                raise self.fail(key_path, "must be a table with a 'phases' list")
            self.check_keys(body, key_path, ("phases",))
            templates[name] = Template(name, self.phases(body.get("phases"), key_path))
        gates = {name: self.gate(body, name) for name, body in self.table("gates").items()}
        default_template = data.get("default_template", defaults.default_template)
        if default_template not in templates:
            raise self.fail(
                "default_template",
                f"{default_template!r} is not a template (allowed: {', '.join(sorted(templates))})",
            )
        return Config(
            templates=templates, default_template=default_template,
            status_every_s=status_every_s, thresholds=thresholds, workload=workload, profile=profile,
            gpu_cost_per_hour=cost,
            gates=gates, source=self.lines.path,
        )

    def thresholds(self) -> Thresholds:
        table, d = self.table("thresholds"), Thresholds()
        rules = {
            "phase_warn_fraction": (lambda v: 0 < v <= 1, "a fraction in (0, 1], default 0.8"),
            "speedup_critical": (lambda v: v > 0, "a speedup > 0, default 0.5"),
            "speedup_high": (lambda v: v > 0, "a speedup > 0, default 1.0"),
            "speedup_medium": (lambda v: v > 0, "a speedup > 0, default 1.5"),
            "keep_improvement": (lambda v: 0 <= v < 10, "a fraction such as 0.2 for 20 %"),
            "sm_clock_fraction": (lambda v: 0 < v <= 1, "a fraction in (0, 1], default 0.9"),
        }
        self.check_keys(table, "thresholds", (*rules, "tolerated_clock_events"))
        values = {key: self.number(table.get(key, getattr(d, key)), f"thresholds.{key}", ok, rule)
                  for key, (ok, rule) in rules.items()}
        from cockpit.telemetry.sample import THROTTLE_WORDS

        known = [word for _, word in THROTTLE_WORDS if word != "idle"]
        events = table.get("tolerated_clock_events", list(d.tolerated_clock_events))
        if not isinstance(events, list) or not all(e in known for e in events):
            raise self.fail("thresholds.tolerated_clock_events",
                            f"{events!r} is not allowed (expected a list drawn from {known})")
        out = Thresholds(**values, tolerated_clock_events=tuple(events))
        if not out.speedup_critical < out.speedup_high < out.speedup_medium:
            raise self.fail("thresholds", "expected speedup_critical < speedup_high < speedup_medium")
        return out

    def profile(self) -> ProfileSettings:
        table, d = self.table("profile"), ProfileSettings()
        keys = tuple(ProfileSettings.__dataclass_fields__)
        self.check_keys(table, "profile", keys)
        values: dict[str, Any] = {}
        for key in keys:
            default = getattr(d, key)
            value = table.get(key, default)
            path = f"profile.{key}"
            if key == "sections":
                if not isinstance(value, (list, tuple)) or not value or not all(
                        isinstance(v, str) and re.fullmatch(r"[A-Za-z_]+", v) for v in value):
                    raise self.fail(path, f"{value!r} is not allowed (expected ncu section names)")
                value = tuple(value)
            elif key == "clock_control" and value not in ("base", "none"):
                raise self.fail(path, f"{value!r} is not allowed (expected base or none)")
            elif key == "dtype" and value not in ("fp16", "bf16"):
                raise self.fail(path, f"{value!r} is not allowed (expected fp16 or bf16)")
            elif key == "head_dim" and value not in (64, 128):
                raise self.fail(path, f"{value!r} is not allowed (expected 64 or 128)")
            elif isinstance(default, bool):
                if not isinstance(value, bool):
                    raise self.fail(path, f"{value!r} is not allowed (expected true or false)")
            elif isinstance(default, int):
                value = int(self.number(value, path, lambda v: v >= 0 and float(v).is_integer(),
                                        "a whole number >= 0"))
            elif key == "kernel_regex":
                try:
                    re.compile(str(value))
                except re.error as exc:
                    raise self.fail(path, f"{value!r} is not a regular expression ({exc})") from exc
            values[key] = value
        return ProfileSettings(**values)

    def workload(self) -> Workload:
        table, d = self.table("workload"), Workload()
        keys = ("batch", "heads", "head_dims", "seq_lens", "dtypes", "causal", "large_seq",
                "large_batch", "tolerance", "reps", "warmup", "settle_ms", "rounds")
        self.check_keys(table, "workload", keys)

        def count(key: str, low: int) -> int:
            return int(self.number(table.get(key, getattr(d, key)), f"workload.{key}",
                                   lambda v: v >= low and float(v).is_integer(),
                                   f"a whole number >= {low}"))

        def ints(key: str, allowed: tuple[int, ...] | None) -> tuple[int, ...]:
            value = table.get(key, list(getattr(d, key)))
            ok = isinstance(value, list) and value and all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0
                and (allowed is None or v in allowed) for v in value)
            if not ok:
                rule = f"a list drawn from {list(allowed)}" if allowed else "a list of lengths > 0"
                raise self.fail(f"workload.{key}", f"{value!r} is not allowed (expected {rule})")
            return tuple(value)

        dtypes = table.get("dtypes", list(d.dtypes))
        if not isinstance(dtypes, list) or not dtypes or not set(dtypes) <= {"fp16", "bf16"}:
            raise self.fail("workload.dtypes", f"{dtypes!r} is not allowed (expected a list of fp16, bf16)")
        causal = table.get("causal", list(d.causal))
        if not isinstance(causal, list) or not causal or not all(isinstance(c, bool) for c in causal):
            raise self.fail("workload.causal",
                            f"{causal!r} is not allowed (expected [false, true] or one of them)")
        return Workload(
            batch=count("batch", 1), heads=count("heads", 1),
            head_dims=ints("head_dims", (64, 128)), seq_lens=ints("seq_lens", None),
            dtypes=tuple(dtypes), causal=tuple(causal), large_seq=count("large_seq", 1),
            large_batch=count("large_batch", 1),
            tolerance=self.number(table.get("tolerance", d.tolerance), "workload.tolerance",
                                  lambda v: 0 < v < 1, "a relative error such as 0.01"),
            reps=count("reps", 3), warmup=count("warmup", 1),
            settle_ms=self.number(table.get("settle_ms", d.settle_ms), "workload.settle_ms",
                                  lambda v: 0 <= v <= 5000, "milliseconds from 0 to 5000"),
            rounds=count("rounds", 1),
        )

    def phases(self, value: Any, key_path: str) -> tuple[PhaseSpec, ...]:
        where = f"{key_path}.phases"
        example = 'phases = [{ name = "Environment", budget_min = 10 }, ...]'
        if not isinstance(value, list) or not value:
            raise self.fail(where, f"must be a non-empty list, e.g. {example}")
        phases: list[PhaseSpec] = []
        for index, item in enumerate(value):
            item_path = f"{where}[{index}]"
            if not isinstance(item, dict) or set(item) != {"name", "budget_min"}:
                raise self.fail(where, f"{item_path} must be {{ name = ..., budget_min = ... }}")
            name, budget = item["name"], item["budget_min"]
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9 _-]{0,23}", name):
                raise self.fail(where, f"{item_path}.name {name!r} must be a short word")
            if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0:
                raise self.fail(where, f"{item_path}.budget_min {budget!r} must be minutes > 0")
            if any(p.name.lower() == name.lower() for p in phases):
                raise self.fail(where, f"phase {name!r} appears twice")
            phases.append(PhaseSpec(name, float(budget) * 60.0))
        return tuple(phases)

    def gate(self, body: Any, name: str) -> GateConfig:
        key_path = f"gates.{name}"
        if name not in GATE_NAMES:
            raise self.fail(key_path, f"unknown gate (allowed: {', '.join(GATE_NAMES)})")
        if not isinstance(body, dict):
            raise self.fail(key_path, f"must be a table: [{key_path}]")
        self.check_keys(body, key_path, ("command", "env", "shell", "stall_after_s", "timeout_s"))
        shell = body.get("shell", False)
        if not isinstance(shell, bool):
            raise self.fail(f"{key_path}.shell", f"{shell!r} is not allowed (expected true or false)")
        command = body.get("command")
        argv: tuple[str, ...] | None = None
        if command is not None:
            if shell and isinstance(command, str) and command.strip():
                argv = (command,)
            elif not shell and isinstance(command, list) and command and all(
                    isinstance(a, str) for a in command):
                argv = tuple(command)
            else:
                raise self.fail(
                    f"{key_path}.command",
                    'expected a list of arguments such as ["python", "setup.py", "build_ext"], '
                    "or a string together with shell = true",
                )
        env = body.get("env", {})
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise self.fail(f"{key_path}.env", 'expected a table of strings, e.g. env = { MAX_JOBS = "8" }')
        timeout = body.get("timeout_s")
        return GateConfig(
            command=argv,
            shell=shell,
            timeout_s=None if timeout is None else self.number(
                timeout, f"{key_path}.timeout_s", lambda v: v > 0, "seconds > 0"),
            stall_after_s=self.number(body.get("stall_after_s", 60.0), f"{key_path}.stall_after_s",
                                      lambda v: v > 0, "seconds > 0, default 60"),
            env=dict(env),
        )


_TOP_LEVEL = ("cadence", "default_template", "gates", "gpu_cost_per_hour", "profile", "templates",
              "thresholds", "workload")
