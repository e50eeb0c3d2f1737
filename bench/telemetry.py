"""CPU and resident memory of the cockpit TUI idling with its GPU panel at 1 Hz, next to nvitop on
the same card and to the stack's floor, all measured side by side in one run (each program under
its own pseudo-terminal).

    python3 bench/telemetry.py [--seconds 60]            on the GPU machine (NVML, nvitop)
    python3 bench/telemetry.py --replay FILE.jsonl       anywhere: the panel fed from a recording

Rows: the cockpit; nvitop (`python3 -m nvitop --monitor full`, when it is importable); the stack's
floor, a process that imports what the cockpit cannot do without (Python, Textual, psutil,
pynvml), opens NVML and queries the card as the panel does, then hands its free memory back as
the cockpit does, and sleeps; an empty Textual app (what Textual costs running, for reference).
With --replay the cockpit opens no NVML, so the floor is Python + Textual alone.

Targets: the cockpit's CPU <= half of nvitop's (% of one core); its resident memory <= 72 MiB;
its own share above the floor <= 10 MiB. Bytecode is cached in a private PYTHONPYCACHEPREFIX,
filled by an unmeasured first round of the same programs: an installed cockpit starts from .pyc
files, and compiling at import leaves several MiB of the compiler's memory resident.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import pty
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
COLS, ROWS = 160, 48
CPU_RATIO_MAX, RSS_MAX_MIB, SHARE_MAX_MIB = 0.5, 72.0, 10.0
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CHILD_ENV["TERM"] = "xterm-256color"

FLOOR = """
import sys, time
from cockpit.memory import limit_malloc_arenas, release_free_memory
limit_malloc_arenas()
import textual.app
if sys.argv[1] == "nvml":
    import psutil, pynvml
    pynvml.nvmlInit()
    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        pynvml.nvmlDeviceGetName(h)
        pynvml.nvmlDeviceGetUtilizationRates(h)
        pynvml.nvmlDeviceGetMemoryInfo(h)
        pynvml.nvmlDeviceGetComputeRunningProcesses(h)
        pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)
    psutil.Process().name()
release_free_memory()
time.sleep(3600)
"""
EMPTY_APP = "from textual.app import App\nApp().run()"


def spawn(argv: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    master, slave = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=CHILD_ENV, cwd=REPO,
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


def start_all(runs: dict[str, list[str]]) -> dict[str, tuple[subprocess.Popen[bytes], int]]:
    """Start every program and let it reach its steady state (5 s)."""
    procs = {name: spawn(argv) for name, argv in runs.items()}
    masters = [m for _, m in procs.values()]
    settle = time.monotonic() + 5.0
    while time.monotonic() < settle:
        drain(masters)
    gone = [n for n, (proc, _) in procs.items() if proc.poll() is not None]
    if gone:
        stop_all(procs)
        sys.exit(f"telemetry bench: {', '.join(gone)} exited during start-up (run it by hand to see why)")
    return procs


def stop_all(procs: dict[str, tuple[subprocess.Popen[bytes], int]]) -> None:
    for proc, _ in procs.values():
        proc.terminate()
    for proc, master in procs.values():
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--replay", type=Path, help="drive the cockpit's panel from a recording (no GPU)")
    p.add_argument("--no-nvitop", action="store_true", help="leave nvitop out")
    args = p.parse_args()
    py = sys.executable
    ws = Path(tempfile.mkdtemp(prefix="telemetry-bench-"))
    CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(ws / "pycache")
    subprocess.run([py, "-m", "cockpit", "--workspace", str(ws), "new", "idle panel"],
                   check=True, capture_output=True, cwd=REPO, env=CHILD_ENV)
    runs = {"cockpit": [py, "-m", "cockpit", "--workspace", str(ws)]}
    if args.replay:
        runs["cockpit"] += ["--replay", str(args.replay.resolve())]
    if not args.no_nvitop:
        if importlib.util.find_spec("nvitop") is None:
            print(f"nvitop is not importable by {py} (pip install nvitop, or its wheel): "
                  "measuring without it")
        else:
            runs["nvitop"] = [py, "-m", "nvitop", "--monitor", "full"]
    floor_kind = "textual" if args.replay else "nvml"
    runs["floor"] = [py, "-c", FLOOR, floor_kind]
    runs["textual app"] = [py, "-c", EMPTY_APP]
    stop_all(start_all(runs))  # the first round fills the bytecode cache
    procs = start_all(runs)
    masters = [m for _, m in procs.values()]
    ps = {name: psutil.Process(proc.pid) for name, (proc, _) in procs.items()}
    cpu0 = {n: p.cpu_times() for n, p in ps.items()}
    t0 = time.monotonic()
    while time.monotonic() - t0 < args.seconds:
        drain(masters)
    wall = time.monotonic() - t0
    cpu1 = {n: p.cpu_times() for n, p in ps.items()}
    rss = {n: p.memory_info().rss / 2**20 for n, p in ps.items()}
    parts = {n: rss_parts(p.pid) for n, p in ps.items()}
    threads = {n: p.num_threads() for n, p in ps.items()}
    stop_all(procs)
    pct = {n: 100 * ((cpu1[n].user + cpu1[n].system) - (cpu0[n].user + cpu0[n].system)) / wall
           for n in ps}
    floor_what = ("Python + Textual" if args.replay
                  else "Python + Textual + psutil + pynvml + nvmlInit + device queries")
    print(f"# {args.seconds:.0f} s side by side, pty {COLS}x{ROWS}; {os.cpu_count()} cores; "
          f"floor = {floor_what}")
    print(f"{'program':<12} {'CPU % of one core':>18} {'RSS MiB':>8}  {'anon/file/shmem MiB':>20} "
          f"{'threads':>8}")
    for n in ps:
        print(f"{n:<12} {pct[n]:>18.2f} {rss[n]:>8.1f}  {parts[n]:>20} {threads[n]:>8}")
    share = rss["cockpit"] - rss["floor"]
    print(f"cockpit RSS {rss['cockpit']:.1f} MiB (target <= {RSS_MAX_MIB:.0f}: "
          f"{verdict(rss['cockpit'] <= RSS_MAX_MIB)}); its share above the floor {share:.1f} MiB "
          f"(target <= {SHARE_MAX_MIB:.0f}: {verdict(share <= SHARE_MAX_MIB)})")
    if "nvitop" in pct:
        ratio = pct["cockpit"] / max(pct["nvitop"], 1e-9)
        print(f"cockpit/nvitop CPU = {ratio:.2f} "
              f"(target <= {CPU_RATIO_MAX}: {verdict(ratio <= CPU_RATIO_MAX)})")


if __name__ == "__main__":
    main()
