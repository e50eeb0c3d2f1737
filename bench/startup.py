"""Startup latency of the cockpit: cold start to the first painted frame, and `cockpit status`.

    python bench/startup.py [--runs 7]

(a) first frame: spawn `python -m cockpit --workspace W` on a pseudo-terminal (120x40,
    TERM=xterm-256color) and time from just before the spawn until the session's first phase name
    ("Environment"), which the phase panel of the first frame draws in one piece, shows up in the
    bytes the cockpit writes to the terminal. (The session id was the marker until the 120x40
    header stopped drawing it whole: it never appeared.)
(b) `cockpit status` and `cockpit status --json`: wall time of the whole process.
(c) `python -c pass`: the interpreter alone, to show how much of the rest is ours; and
    `python -c "import cockpit.ui.app"`: the TUI's imports (Textual included) without a frame.

Every measurement gets one untimed warm-up run first. The children cache bytecode in a private
PYTHONPYCACHEPREFIX (filled by the warm-up; nothing is written into the source tree), and
PYTHONDONTWRITEBYTECODE is dropped for them: an installed cockpit starts from cached .pyc files,
so that is what is timed. W is a fresh temporary workspace with one session made by `cockpit new`.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

COLS, ROWS = 120, 40
FIRST_FRAME_TARGET_S = 0.5
STATUS_TARGET_S = 0.150
SPAWN_TIMEOUT_S = 15.0


CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def cockpit(*args: str) -> list[str]:
    return [sys.executable, "-m", "cockpit", *args]


def _controlling_tty() -> None:
    """In the child, after setsid: make the pty (already on fd 0) the controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def first_frame_s(workspace: Path, marker: bytes, timeout_s: float = SPAWN_TIMEOUT_S) -> float:
    """Seconds from spawn until `marker` appears in the cockpit's terminal output."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = dict(CHILD_ENV, TERM="xterm-256color", COLUMNS=str(COLS), LINES=str(ROWS))
    out = bytearray()
    t0 = time.perf_counter()
    child = subprocess.Popen(
        cockpit("--workspace", str(workspace)), stdin=slave, stdout=slave, stderr=slave,
        env=env, start_new_session=True, preexec_fn=_controlling_tty, close_fds=True,
    )
    os.close(slave)
    elapsed: float | None = None
    try:
        deadline = t0 + timeout_s
        while elapsed is None and time.perf_counter() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                if child.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            # Search only the new bytes plus an overlap, so the check stays O(chunk).
            start = max(0, len(out) - len(marker))
            out += chunk
            if out.find(marker, start) >= 0:
                elapsed = time.perf_counter() - t0
    finally:
        _stop(child, master)
    if elapsed is None:
        tail = bytes(out[-600:]).decode("utf-8", "replace")
        raise SystemExit(f"bench: {marker.decode()!r} never appeared within {timeout_s:g}s "
                         f"(exit {child.returncode}); last output:\n{tail}")
    return elapsed


def first_phase_name(journal: Path) -> str:
    """The session's first phase, as its journal's session_started event names it."""
    started = json.loads(journal.read_text(encoding="utf-8").splitlines()[0])
    return str(started["phases"][0]["name"])


def _stop(child: subprocess.Popen[bytes], master: int) -> None:
    """SIGTERM, then wait, draining the terminal so the cockpit's last writes never block."""
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
    deadline = time.perf_counter() + 5
    while child.poll() is None and time.perf_counter() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            with contextlib.suppress(OSError):
                os.read(master, 65536)
    if child.poll() is None:
        print(f"bench: cockpit pid {child.pid} ignored SIGTERM for 5s; killing it", file=sys.stderr)
        child.kill()
    child.wait()
    os.close(master)


def run_s(argv: list[str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=CHILD_ENV)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"bench: {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return elapsed


def measure(fn: Callable[[], float], runs: int) -> list[float]:
    fn()  # warm-up, untimed: .pyc compilation, page cache
    return [fn() for _ in range(runs)]


def row(name: str, times: list[float], target_s: float | None) -> str:
    med, lo, hi = statistics.median(times), min(times), max(times)
    if target_s is None:
        target, verdict = "—", "(reference)"
    else:
        target = f"≤ {target_s * 1000:.0f} ms"
        verdict = "PASS" if med <= target_s else "FAIL"
    return (f"| {name} | {len(times)} | {med * 1000:.0f} ms | {lo * 1000:.0f} ms | "
            f"{hi * 1000:.0f} ms | {target} | {verdict} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per measurement (7)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    print(f"machine: {os.cpu_count()} cores ({platform.machine()}, {platform.system()} "
          f"{platform.release()})")
    print(f"python:  {platform.python_version()} ({sys.executable})")
    print(f"textual: {version('textual')}")
    print(f"runs:    {args.runs} timed (+1 warm-up) per row; pty {COLS}x{ROWS}, TERM=xterm-256color")
    print("bytecode: cached in a private PYTHONPYCACHEPREFIX"
          + (" (PYTHONDONTWRITEBYTECODE=1 here is dropped for the children)"
             if os.environ.get("PYTHONDONTWRITEBYTECODE") else ""))
    print()

    with tempfile.TemporaryDirectory(prefix="cockpit-bench-") as tmp:
        ws = Path(tmp) / "workspace"
        ws.mkdir()
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        made = subprocess.run(cockpit("--workspace", str(ws), "new", "startup bench", "--json"),
                              capture_output=True, text=True, check=True, env=CHILD_ENV)
        session_id = json.loads(made.stdout)["id"]
        first_phase = first_phase_name(Path(json.loads(made.stdout)["journal"]))
        marker = first_phase.encode()

        rows = [
            row("TUI cold start → first frame", measure(lambda: first_frame_s(ws, marker), args.runs),
                FIRST_FRAME_TARGET_S),
            row("`cockpit status`", measure(lambda: run_s(cockpit("--workspace", str(ws), "status")),
                                           args.runs), STATUS_TARGET_S),
            row("`cockpit status --json`",
                measure(lambda: run_s(cockpit("--workspace", str(ws), "status", "--json")),
                        args.runs), STATUS_TARGET_S),
            row("`python -c pass` (interpreter alone)",
                measure(lambda: run_s([sys.executable, "-c", "pass"]), args.runs), None),
            row("`python -c 'import cockpit.ui.app'` (imports, no frame)",
                measure(lambda: run_s([sys.executable, "-c", "import cockpit.ui.app"]), args.runs),
                None),
        ]

    print("| measurement | runs | median | min | max | target | result |")
    print("|---|---|---|---|---|---|---|")
    for line in rows:
        print(line)
    print()
    print(f"first frame = spawn until the first phase's name ({first_phase!r}, session {session_id}) "
          "is in the terminal output; "
          "PASS/FAIL compares the median with the target.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
