"""Which Python the gates' probes run: the one with the engineer's CUDA torch.

The cockpit itself may sit in a venv of its own (a PEP 668 system Python allows nothing else)
while the box's CUDA torch lives in another environment: the image's venv, a conda env, the
system Python. In order, the first whose torch is a CUDA build (else the first with any torch):
1. `[gates] python` in cockpit.toml, when set (it must run; it is used even without torch, and
   the env gate then says torch does not import there);
2. the active virtualenv (`$VIRTUAL_ENV`) and conda env (`$CONDA_PREFIX`);
3. the cockpit's own interpreter;
4. every `python3`, then `python`, in PATH's absolute folders.
None importing torch: the cockpit's own (the env gate says what to install).

Nothing is found through an empty or relative PATH entry (or a relative `$VIRTUAL_ENV`): each
names the current folder, often someone else's clone, whose committed `./python3` would run. A
`[gates] python` with a folder in it is relative to the workspace; it runs only once the user
trusts the workspace (session/trust.py): the gates and the UI's warm-up ask that first.

Asking an interpreter costs a child and a torch import (1-3 s), so each answer is kept by the
interpreter's real path and modification time (a rebuilt venv is asked again) in the user's
cache, `$XDG_CACHE_HOME/cockpit/pythons/<hash of the workspace's real path>/pythons.json`, never
in the workspace: opening the cockpit on a workspace writes nothing into it. The UI warms this
in a background thread; the first gate finds it ready. `known_python` answers from what is kept,
asking nobody, so the UI can start a gate at once when the answer is known and find it in a thread
when it is not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cockpit.config.gates import Gates
from cockpit.errors import CockpitError
from cockpit.path_entries import absolute_path
from cockpit.user_cache import user_cache
from cockpit.write_whole import write_whole

ASK_TIMEOUT_S = 60.0
ASK = "import sys, torch; print(torch.__version__, torch.version.cuda or 'cpu', sys.version.split()[0])"


@dataclass(frozen=True)
class Interpreter:
    path: str
    how: str
    """Why this one: "[gates] python (cockpit.toml:7)", "the active venv", "python3 on PATH", ..."""
    torch: str | None
    """"2.11.0+cu130 (CUDA 13.0)", or None when torch does not import there."""

    def describe(self) -> str:
        what = f"torch {self.torch}" if self.torch else "no torch"
        return f"{self.path} ({self.how}; {what})"


Asker = Callable[[str], "str | None"]


def ask_torch(python: str) -> str | None:
    """"2.11.0+cu130 (CUDA 13.0)" when torch imports in `python`, else None. Asked from the root
    folder: `-c` puts the current folder first on sys.path, where a workspace's `torch.py` would
    be imported in place of torch."""
    try:
        out = subprocess.run([os.path.abspath(python), "-c", ASK], capture_output=True, text=True,
                             timeout=ASK_TIMEOUT_S, env={**os.environ, "PYTHONPATH": ""}, cwd=os.sep)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.stdout.split()
    if out.returncode != 0 or len(words) < 2:
        return None
    return f"{words[0]} ({'CPU only' if words[1] == 'cpu' else f'CUDA {words[1]}'})"


def candidates(env: Mapping[str, str], own: str) -> list[tuple[str, str]]:
    """(path, how) in the order they are tried, each real file once."""
    found: list[tuple[str, str]] = []
    for var, how in (("VIRTUAL_ENV", "the active venv"), ("CONDA_PREFIX", "the active conda env")):
        if os.path.isabs(env.get(var, "")):
            found.append((str(Path(env[var]) / "bin" / "python"), how))
    found.append((own, "the cockpit's own"))
    for name in ("python3", "python"):
        for folder in filter(None, absolute_path(env.get("PATH", "")).split(os.pathsep)):
            exe = Path(folder) / name
            if exe.is_file() and os.access(exe, os.X_OK):
                found.append((str(exe), f"{name} on PATH"))
    seen: set[str] = set()
    out = []
    for path, how in found:
        try:
            real = str(Path(path).resolve(strict=True))
        except OSError:
            continue
        if real not in seen:
            seen.add(real)
            out.append((path, how))
    return out


class PythonCache:
    """Each interpreter's answer by real path and mtime, in the user's cache for this workspace."""

    def __init__(self, workspace: Path) -> None:
        self.path = user_cache("pythons", workspace) / "pythons.json"
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.known: dict[str, list[object]] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.known = {}

    def ask(self, python: str, asker: Asker) -> str | None:
        try:
            real = Path(python).resolve(strict=True)
            stamp = real.stat().st_mtime_ns
        except OSError:
            return None
        key = str(real)
        hit = self.known.get(key)
        if isinstance(hit, list) and len(hit) == 2 and hit[0] == stamp:
            return hit[1] if isinstance(hit[1], str) else None
        answer = asker(python)
        self.known[key] = [stamp, answer]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_whole(self.path, json.dumps(self.known))  # two cockpits asking: each file whole
        except OSError:
            pass  # a read-only cache asks again next time
        return answer


_MEMO: dict[tuple[object, ...], Interpreter] = {}
_LOCK = threading.Lock()


def gates_python(gates: Gates, workspace: Path, env: Mapping[str, str] | None = None,
                 own: str = sys.executable, asker: Asker = ask_torch) -> Interpreter:
    """The interpreter the gates run (see the module docstring); CockpitError when `[gates] python`
    names one that does not run."""
    env = os.environ if env is None else env
    memo_key = _memo_key(gates, workspace, env, own, asker)
    with _LOCK:
        if memo_key in _MEMO:
            return _MEMO[memo_key]
        found = _find(gates, workspace, env, own, asker)
        _MEMO[memo_key] = found
        return found


class _NotAsked(Exception):
    """An interpreter whose answer is not kept yet: it would have to be asked."""


def known_python(gates: Gates, workspace: Path, env: Mapping[str, str] | None = None,
                 own: str = sys.executable, asker: Asker = ask_torch) -> Interpreter | None:
    """What `gates_python` answers, when that is known without asking any interpreter (kept in
    this process, or every answer it needs in the user's cache); else None, at once: never waits
    for a lookup under way in another thread. CockpitError as `gates_python`'s."""
    env = os.environ if env is None else env
    kept = _MEMO.get(_memo_key(gates, workspace, env, own, asker))  # one look, no lock: never waits
    if kept is not None:
        return kept

    def not_asked(python: str) -> str | None:
        raise _NotAsked(python)

    try:
        return _find(gates, workspace, env, own, not_asked)
    except _NotAsked:
        return None


def _memo_key(gates: Gates, workspace: Path, env: Mapping[str, str], own: str,
              asker: Asker) -> tuple[object, ...]:
    return (str(workspace), gates.python, env.get("VIRTUAL_ENV"), env.get("CONDA_PREFIX"),
            env.get("PATH"), own, asker)


def _find(gates: Gates, workspace: Path, env: Mapping[str, str], own: str, asker: Asker) -> Interpreter:
    cache = PythonCache(workspace)
    named_python, where_set = gates.python, gates.python_where
    if named_python:
        where = where_set or "cockpit.toml"
        named = named_python
        path = (shutil.which(named, path=absolute_path(env.get("PATH", ""))) if os.sep not in named
                else str(workspace / named))
        if path is None or not os.access(path, os.X_OK):
            raise CockpitError(f"{where}: gates.python = {named!r} does not run here: give the path of the "
                               "Python that has your CUDA torch (`which python` in its environment)")
        return Interpreter(path, f"[gates] python ({where})", cache.ask(path, asker))
    first_torch: Interpreter | None = None
    for path, how in candidates(env, own):
        version = cache.ask(path, asker)
        if version is not None and "CUDA" in version:
            return Interpreter(path, how, version)
        if version is not None and first_torch is None:
            first_torch = Interpreter(path, f"{how}: no Python here has a CUDA torch", version)
    return first_torch or Interpreter(own, "the cockpit's own: no Python here imports torch", None)


def forget() -> None:
    """Drop the answers kept in this process (a test, or after `[gates] python` changed)."""
    with _LOCK:
        _MEMO.clear()
