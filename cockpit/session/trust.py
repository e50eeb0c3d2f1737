"""Workspace trust: nothing a workspace names runs until the user says so.

A workspace is often someone else's clone. What its cockpit.toml names is code the gates would run:
`[gates] python` (the interpreter of every probe), each `[gates.<name>] command`, the variables
each `[gates.<name>] env` adds to a child (LD_PRELOAD and PYTHONPATH are code too), and the
workload the gates' child imports (`[workload] module`, `gpumode`, `kernelbench`, `model_new`:
the kernel's Python). That list, exactly as shown to the user (values quoted as JSON, so a control
or bidi character shows as its escape and never hides part of a line), is what the user approves.

The answer is kept in the user's state folder, never in the workspace:
`$XDG_STATE_HOME/cockpit/trust.json` (else ~/.local/state/cockpit/trust.json), keyed by the
workspace's real path, with a hash of the approved list: a cockpit.toml that names something else
since (a new command, another python) asks again, as `direnv allow` does. What the named files
hold is not hashed: the workload module is the kernel the user edits all day.

Nothing to ask: no cockpit.toml (a Config built in code has no file either), or one that names
none of the above: the gates then run their own probes in a Python found on the user's PATH.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.config import CONFIG_NAME, Config
from cockpit.errors import CockpitError
from cockpit.write_whole import write_whole

if TYPE_CHECKING:
    from cockpit.config.gates import GateConfig

try:  # BLAKE2 without `hashlib`, whose import maps OpenSSL's libcrypto (saved_state.py says why)
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

VERSION = 1
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Named:
    """One thing cockpit.toml makes the gates run."""

    key: str
    """Where it is said: `[gates] python`, `[gates.build] command`, `[gates.build] env.CC`."""
    value: str
    """What it says, as JSON: exact, one line, every control character escaped."""
    why: str
    """What the cockpit does with it (shown beside it, not part of what is approved)."""

    @property
    def line(self) -> str:
        return f"{self.key} = {self.value}"

    @property
    def what(self) -> str:
        """The key without a variable's name: `[gates.build] env`."""
        head, env, _ = self.key.partition(" env.")
        return head + " env" if env else self.key


@dataclass(frozen=True)
class WorkspaceRuns:
    """What a workspace would run, and the user's answer about it."""

    root: Path
    """The workspace's real path: the key of its answer."""
    named: tuple[Named, ...]
    approved: tuple[str, ...] | None
    """The lines the user approved last for this folder (None: never, or revoked)."""
    approved_digest: str
    """The hash of what was approved: the answer holds while it is the hash of `named`."""
    allowed_t: float | None

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(n.line for n in self.named)

    @property
    def digest(self) -> str:
        return digest(self.lines)

    @property
    def needed(self) -> bool:
        """Whether there is anything to trust: a cockpit.toml that names something to run."""
        return bool(self.named)

    @property
    def trusted(self) -> bool:
        return not self.named or self.approved_digest == self.digest

    @property
    def new(self) -> tuple[str, ...]:
        """The lines not in the last approval (all of them when there was none)."""
        seen = set(self.approved or ())
        return tuple(line for line in self.lines if line not in seen)

    @property
    def new_since_trusted(self) -> frozenset[str]:
        """The lines added since the user last trusted this workspace (none when they never did:
        then everything is to be approved, nothing is new since)."""
        return frozenset(self.new) if self.approved is not None else frozenset()

    @property
    def untrusted(self) -> str:
        """Why it is not trusted, after the file's name."""
        return "changed since you trusted it" if self.approved is not None else "is not trusted yet"

    def listing(self, beside: bool = True) -> list[str]:
        """One line per thing named with what the cockpit does with it (`beside` it in a column, as
        `cockpit trust show` prints it; else under it, as the TUI's question wraps), the new ones
        marked."""
        width = max((len(n.line) for n in self.named), default=0) if beside else 0
        new = self.new_since_trusted
        between = "  " if beside else "\n    "
        listed = []
        for n in self.named:
            line = f"{n.line:<{width}}{between}{n.why}"
            listed.append(f"{line}  (new since you trusted it)" if n.line in new else line)
        return listed


def digest(lines: tuple[str, ...]) -> str:
    return blake2b(json.dumps(list(lines)).encode(), digest_size=20).hexdigest()


def _named_by_gate(name: str, gate: GateConfig) -> list[Named]:
    """What one `[gates.<name>]` table makes run: its command, then each variable of its env."""
    found: list[Named] = []
    if gate.command is not None:
        value = _quoted(gate.command[0]) + " (shell)" if gate.shell else _quoted(list(gate.command))
        found.append(Named(f"[gates.{name}] command", value, f"runs in place of the {name} gate's own"))
    for key, env_value in gate.env.items():
        shown = key if _BARE_KEY.fullmatch(key) else _quoted(key)
        found.append(Named(f"[gates.{name}] env.{shown}", _quoted(env_value),
                           f"set in the {name} gate's environment"))
    return found


def named_by(config: Config) -> tuple[Named, ...]:
    """Everything the workspace's cockpit.toml makes the gates run: `[gates] python`, each gate's
    command and env, then the workload; nothing for a Config that no file gave (the defaults, or
    one built in code)."""
    if config.source is None:
        return ()
    found: list[Named] = []
    if config.gates.python:
        found.append(Named("[gates] python", _quoted(config.gates.python),
                           "the Python every gate's probe runs in"))
    for name, gate in config.gates.items():
        found += _named_by_gate(name, gate)
    w = config.workload
    for key, value in (("module", w.module), ("gpumode", w.gpumode), ("kernelbench", w.kernelbench)):
        if value:
            found.append(Named(f"[workload] {key}", _quoted(value),
                               "the kernel's code: imported by the gates' Python"))
    found += [Named("[workload] model_new", _quoted(m), "the kernel's code: imported by the gates' Python")
              for m in w.model_new]
    return tuple(found)


def _quoted(value: object) -> str:
    return json.dumps(value)


def trust_file() -> Path:
    """Where the answers are kept: the user's state folder, outside every workspace."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "cockpit" / "trust.json"


def _answers() -> dict[str, Any]:
    """Every workspace's recorded answer by real path; a missing or damaged file trusts nothing."""
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if (not isinstance(data, dict) or data.get("version") != VERSION
            or not isinstance(data.get("workspaces"), dict)):
        return {}
    return dict(data["workspaces"])


def what_runs(root: Path, config: Config) -> WorkspaceRuns:
    """What the workspace at `root` (whose cockpit.toml gave `config`) would run, and the answer."""
    real = root.resolve()
    record = _answers().get(str(real))
    if not isinstance(record, Mapping) or not isinstance(record.get("approved"), list):
        return WorkspaceRuns(real, named_by(config), None, "", None)
    allowed_t = record.get("allowed_t")
    return WorkspaceRuns(real, named_by(config), tuple(str(line) for line in record["approved"]),
                         str(record.get("digest", "")),
                         float(allowed_t) if isinstance(allowed_t, (int, float)) else None)


def allow(runs: WorkspaceRuns) -> None:
    """Record that the user trusts what `runs` lists (and nothing else) in this folder."""
    answers = _answers()
    answers[str(runs.root)] = {"digest": runs.digest, "approved": list(runs.lines), "allowed_t": time.time()}
    _write(answers)


def revoke(root: Path) -> bool:
    """Forget the answer for this folder; False when there was none."""
    answers = _answers()
    if answers.pop(str(root.resolve()), None) is None:
        return False
    _write(answers)
    return True


def _write(answers: dict[str, Any]) -> None:
    """The answers, whole, in place of the file (a reader never sees half of it)."""
    path = trust_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_whole(path, json.dumps({"version": VERSION, "workspaces": answers}, indent=1))
    except OSError as exc:
        raise CockpitError(f"{path}: cannot record your answer ({exc.strerror}); free space or fix its "
                           "folder's permissions, then answer again (`cockpit trust allow` or "
                           "`revoke`)") from exc


def refusal(runs: WorkspaceRuns) -> str:
    """One line for a headless verb in a workspace not trusted as it is now: what and what to do."""
    keys = ", ".join(dict.fromkeys(n.what for n in runs.named))
    return (f"{runs.root / CONFIG_NAME} names what the gates would run ({keys}) and {runs.untrusted}: "
            "nothing of it ran; `cockpit trust show` lists it, `cockpit trust allow` trusts it")


def require_trust(root: Path, config: Config) -> None:
    """Raise CockpitError (one line) unless what the workspace names is trusted as it is now."""
    runs = what_runs(root, config)
    if not runs.trusted:
        raise CockpitError(refusal(runs))
