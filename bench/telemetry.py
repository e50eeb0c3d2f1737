"""CPU and memory of the cockpit TUI idling with its GPU panel at 1 Hz, next to nvitop on the
same card, measured side by side in one run (each under its own pseudo-terminal).

    python bench/telemetry.py [--seconds 60]

Target: the cockpit at <= half of nvitop's CPU (% of one core), resident memory <= 64 MiB.
The fast-lane tick cost per GPU is measured by bench/telemetry_tick.py.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pty
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent


def spawn(argv: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    master, slave = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color"}
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO,
                            start_new_session=True)
    os.close(slave)
    return proc, master


def drain(masters: list[int]) -> None:
    import select

    ready, _, _ = select.select(masters, [], [], 0.2)
    for fd in ready:
        with contextlib.suppress(OSError):
            os.read(fd, 1 << 16)


def rss_parts(pid: int) -> str:
    """Resident memory by kind (/proc/PID/status): anonymous, file-backed (libraries), shared."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return "/".join(f"{int(fields[k].split()[0]) / 1024:.1f}" for k in ("RssAnon", "RssFile", "RssShmem"))
    except (OSError, KeyError, ValueError):
        return "n/a"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--replay", type=Path, help="drive the cockpit's panel from a recording (no GPU)")
    p.add_argument("--no-nvitop", action="store_true", help="measure the cockpit alone")
    args = p.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="telemetry-bench-"))
    subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), "new", "idle panel"],
                   check=True, capture_output=True, cwd=REPO)
    runs = {"cockpit": [sys.executable, "-m", "cockpit", "--workspace", str(ws)]}
    if args.replay:
        runs["cockpit"] += ["--replay", str(args.replay.resolve())]
    if not args.no_nvitop:
        runs["nvitop"] = [sys.executable, "-m", "nvitop", "--monitor", "full"]
    procs = {name: spawn(argv) for name, argv in runs.items()}
    masters = [m for _, m in procs.values()]
    settle = time.monotonic() + 5.0
    while time.monotonic() < settle:  # both start up and reach their steady state
        drain(masters)
    ps = {name: psutil.Process(proc.pid) for name, (proc, _) in procs.items()}
    cpu0 = {n: p.cpu_times() for n, p in ps.items()}
    t0 = time.monotonic()
    while time.monotonic() - t0 < args.seconds:
        drain(masters)
    wall = time.monotonic() - t0
    cpu1 = {n: p.cpu_times() for n, p in ps.items()}
    rss = {n: p.memory_info().rss / 2**20 for n, p in ps.items()}
    parts = {n: rss_parts(p.pid) for n, p in ps.items()}
    for proc, _ in procs.values():
        proc.terminate()
        proc.wait(10)
    pct = {n: 100 * ((cpu1[n].user + cpu1[n].system) - (cpu0[n].user + cpu0[n].system)) / wall
           for n in ps}
    print(f"# {args.seconds:.0f} s side by side, pty 160x48; {os.cpu_count()} cores")
    print(f"{'program':<10} {'CPU % of one core':>18} {'RSS MiB':>8}  {'anon/file/shmem MiB':>20}")
    for n in ps:
        print(f"{n:<10} {pct[n]:>18.2f} {rss[n]:>8.1f}  {parts[n]:>20}")
    if "nvitop" not in pct:
        ok = "PASS" if rss["cockpit"] <= 64 else "FAIL"
        print(f"cockpit RSS {rss['cockpit']:.1f} MiB (target <= 64: {ok})")
        return
    half = pct["cockpit"] <= pct["nvitop"] / 2
    print(f"cockpit/nvitop CPU = {pct['cockpit'] / max(pct['nvitop'], 1e-9):.2f} (target <= 0.5: "
          f"{'PASS' if half else 'FAIL'}); cockpit RSS {rss['cockpit']:.1f} MiB (target <= 64: "
          f"{'PASS' if rss['cockpit'] <= 64 else 'FAIL'})")


if __name__ == "__main__":
    main()
