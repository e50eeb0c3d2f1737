"""CPU % of one core per thread of a TUI program idling under a pseudo-terminal.

    python3 bench/cpu_by_thread.py [--seconds 30] -- python3 -m cockpit --workspace DIR
    python3 bench/cpu_by_thread.py -- python3 -m nvitop --monitor full

The main thread is TID == PID; the others in creation order (for the cockpit: Textual's output
and input threads, the telemetry thread, NVML's own). Threads that ended count in the total only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import time

from telemetry import drain, spawn  # bench/telemetry.py: the same pty setup


def cpu_ticks(stat_path: str) -> int:
    """utime + stime of a /proc/.../stat file, in clock ticks."""
    with open(stat_path) as f:
        fields = f.read().rsplit(")", 1)[1].split()  # the name in ( ) may hold spaces
    return int(fields[11]) + int(fields[12])


def thread_ticks(pid: int) -> dict[int, int]:
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):  # a thread that ended in between
            out[int(tid)] = cpu_ticks(f"/proc/{pid}/task/{tid}/stat")
    return out


def process_ticks(pid: int) -> int:
    return cpu_ticks(f"/proc/{pid}/stat")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("argv", nargs=argparse.REMAINDER)
    args = p.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    proc, master = spawn(argv)
    settle = time.monotonic() + 5.0
    while time.monotonic() < settle:
        drain([master])
    before, total0, t0 = thread_ticks(proc.pid), process_ticks(proc.pid), time.monotonic()
    while time.monotonic() - t0 < args.seconds:
        drain([master])
    after, total1, wall = thread_ticks(proc.pid), process_ticks(proc.pid), time.monotonic() - t0
    hz = os.sysconf("SC_CLK_TCK")
    print(f"{' '.join(argv)}: {100 * (total1 - total0) / hz / wall:.2f} % of one core over {wall:.0f} s")
    for tid in sorted(after):
        pct = 100 * (after[tid] - before.get(tid, 0)) / hz / wall
        print(f"  tid {tid}{' (main)' if tid == proc.pid else ''}: {pct:.2f} %")
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


if __name__ == "__main__":
    main()
