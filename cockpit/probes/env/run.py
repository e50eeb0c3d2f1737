"""Running the env checks in order: one line each as it is known, RESULT.json written atomically,
and a watchdog that writes what was measured and exits if the whole probe runs past its deadline
(a wedged driver can hang `torch.cuda.is_available()` forever)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .extension import check_extension, workload_extension
from .gpus import check_gpu_mapping
from .probe import MachineCheck, Probe, one_line
from .profiler import check_ncu, check_ncu_counters, check_persistence_mode
from .toolchain import (
    check_cuda_available,
    check_cuda_home,
    check_gcc,
    check_ninja,
    check_numpy,
    check_nvcc,
    check_python,
    check_torch,
    check_torch_lib_on_loader_path,
)
from .workspace import check_disk, check_stale_lock, check_terminal_multiplexer

WIRE = 1
"""The version of this result file: cockpit/workload/result_wire.py's WIRE (this probe runs by its
path, with nothing of the cockpit; tests/test_result_wire.py holds the two equal)."""

DEFAULT_EXTENSION = "cockpit_attn"
# Under the 10 s the gate allows, with room to write the result.
DEFAULT_DEADLINE_S = 9.5


CHECKS: tuple[tuple[str, Callable[[Probe], MachineCheck]], ...] = (
    ("python", check_python),
    ("torch", check_torch),
    ("cuda_available", check_cuda_available),
    ("gpu_mapping", check_gpu_mapping),
    ("numpy", check_numpy),
    ("nvcc", check_nvcc),
    ("cuda_home", check_cuda_home),
    ("torch_lib_on_loader_path", check_torch_lib_on_loader_path),
    ("ninja", check_ninja),
    ("gcc", check_gcc),
    ("ncu", check_ncu),
    ("ncu_counters", check_ncu_counters),
    ("disk", check_disk),
    ("stale_lock", check_stale_lock),
    ("persistence_mode", check_persistence_mode),
    ("terminal_multiplexer", check_terminal_multiplexer),
    ("extension", check_extension),
)


def run_check(name: str, fn: Callable[[Probe], MachineCheck], p: Probe) -> MachineCheck:
    """A check that raises becomes a `fail` with the exception's text, never a traceback."""
    try:
        return fn(p)
    except (Exception, SystemExit) as exc:
        return MachineCheck(
            name, "fail", f"check raised {type(exc).__name__}: {one_line(exc, 240)}",
            "the check to run", "run the probe again; if it repeats, fix what the message names")


def format_line(check: MachineCheck) -> str:
    """`PASS  torch                    2.13.0+cu130 (CUDA 13.0)`; warnings and failures add the
    expectation and the fix."""
    line = f"{check.status.upper():<4}  {check.name:<24} {check.value}"
    if check.status != "pass":
        line += f"  (expected: {check.expected})" if check.expected else ""
        line += f"  → fix: {check.fix}" if check.fix else ""
    return line


def write_result(out: Path, checks: list[MachineCheck], duration_s: float) -> None:
    """Atomic: a reader sees the old file or the whole new one, never half."""
    payload = {"wire": WIRE, "checks": [asdict(c) for c in checks], "duration_s": round(duration_s, 3)}
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=1, ensure_ascii=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the cockpit may run as another user
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class _ChecksSoFar:
    """The checks done so far, shared with the watchdog; whoever finishes first writes the result."""

    def __init__(self, out: Path, deadline_s: float) -> None:
        self.out = out
        self.deadline_s = deadline_s
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.checks: list[MachineCheck] = []
        self.current = ""
        self.done = threading.Event()

    def add(self, check: MachineCheck) -> None:
        with self.lock:
            self.checks.append(check)
            _say(format_line(check))

    def finish(self) -> int:
        """Write the result and say the summary; the exit code."""
        duration = time.monotonic() - self.started
        counts = {s: sum(c.status == s for c in self.checks) for s in ("fail", "warn", "pass")}
        try:
            write_result(self.out, self.checks, duration)
        except OSError as exc:
            print(f"env_probe: cannot write {self.out} ({exc.strerror or exc}); pass a writable --out",
                  file=sys.stderr, flush=True)
            return 2
        _say(f"env: {counts['fail']} failed, {counts['warn']} warnings, {counts['pass']} passed "
             f"in {duration:.1f} s → {self.out}")
        return 1 if counts["fail"] else 0

    def watchdog(self) -> None:
        if self.done.wait(self.deadline_s):
            return
        with self.lock:
            if self.done.is_set():
                return
            names = [c.name for c in self.checks]
            for name, _ in CHECKS:
                if name in names:
                    continue
                if name == self.current:
                    check = MachineCheck(
                        name, "fail", f"did not finish within the probe's {self.deadline_s:g} s",
                        "an answer in seconds",
                        "a hung driver or a cold first torch import: run `nvidia-smi`, then "
                        "the env gate again")
                else:
                    # Not a failure of its own: the verdict should name the one check that hung.
                    check = MachineCheck(
                        name, "warn", f"not run: the probe hit its deadline in {self.current}",
                        "", f"fix the {self.current} check, then run the env gate again")
                self.checks.append(check)
                _say(format_line(check))
            code = self.finish()
            sys.stderr.flush()
            os._exit(code)  # the stuck check may never return: leave without joining it


def _say(line: str) -> None:
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except OSError:
        # Whoever read stdout went away; the result file is what counts, so keep going silently.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def run_probe(p: Probe, out: Path, deadline_s: float = DEFAULT_DEADLINE_S) -> int:
    """Run every check, print each line as it is known, write `out`; the exit code."""
    state = _ChecksSoFar(out, deadline_s)
    threading.Thread(target=state.watchdog, name="env-probe-watchdog", daemon=True).start()
    try:
        for name, fn in CHECKS:
            state.current = name
            state.add(run_check(name, fn, p))
        with state.lock:
            state.done.set()
            return state.finish()
    finally:
        p.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cockpit.probes.env_probe",
        description="Check that this machine can build and load a torch CUDA extension.",
    )
    parser.add_argument("--out", required=True, type=Path, help="where to write RESULT.json")
    parser.add_argument("--workspace", type=Path, default=None, help="workspace folder (default: cwd)")
    parser.add_argument("--build-dir", type=Path, default=None,
                        help="extension build folder (default: WORKSPACE/build)")
    parser.add_argument("--extension", default=DEFAULT_EXTENSION,
                        help=f"the workload extension's module name (default: {DEFAULT_EXTENSION}; "
                        "\"\" when the workload builds none)")
    parser.add_argument("--describe", default=None, metavar="JSON",
                        help="a `workload_probe.py describe` command (JSON argv): the extension to check "
                        "is the workload's, asked of it here rather than in the cockpit")
    parser.add_argument("--deadline-s", type=float, default=DEFAULT_DEADLINE_S,
                        help="write what is known and exit after this many seconds "
                        f"(default: {DEFAULT_DEADLINE_S:g})")
    return parser


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        reconfigure: Any = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")  # a C-locale terminal must not kill the probe over "→"
    args = _parser().parse_args(argv)  # bad arguments: argparse exits 2

    def usage(message: str) -> int:
        print(f"env_probe: {message}", file=sys.stderr, flush=True)
        return 2

    if args.extension and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args.extension):
        return usage(f"--extension {args.extension!r} is not a module name; pass e.g. {DEFAULT_EXTENSION}")
    if args.deadline_s <= 0:
        return usage("--deadline-s must be > 0")
    workspace = (args.workspace or Path.cwd()).expanduser().absolute()
    if not workspace.is_dir():
        return usage(f"--workspace {workspace} is not a folder; pass the cockpit workspace")
    out = args.out.expanduser().absolute()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return usage(f"cannot create {out.parent} ({exc.strerror}); pass a writable --out")
    if out.is_dir() or not os.access(out.parent, os.W_OK):
        return usage(f"cannot write {out}; pass a writable --out file path")
    build_dir = (args.build_dir or workspace / "build").expanduser().absolute()
    probe = Probe(workspace, build_dir, args.extension)
    if args.describe:
        probe.extension, probe.extension_note = workload_extension(json.loads(args.describe))
    return run_probe(probe, out, args.deadline_s)
