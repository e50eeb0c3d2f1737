"""Where the idle cockpit's resident memory above the floor goes: each mapping's resident size
(the Python heap, anonymous memory, each shared library) and the modules it imported that the
floor did not, the cockpit and the floor each idling in its own 160x48 pseudo-terminal, as
bench/telemetry.py runs them (the same floor program).

    python3 bench/idle_memory.py [--at 15] [--replay FILE.jsonl] [--trace]

Both run side by side; each reports on itself `--at` seconds after it started (a timer thread
reads /proc/self/smaps and sys.modules, then the process exits). Bytecode is cached by an
unmeasured first round, as in bench/telemetry.py. Prints: RSS of both and the share; the mappings whose
resident size differs most; the modules beyond the floor, grouped (cockpit, textual, the rest),
with their count and the size of their cached bytecode (a code object in memory is ~3x that).
"""

from __future__ import annotations

import argparse
import json
import marshal
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from telemetry import CHILD_ENV, FLOOR, drain, spawn

REPO = Path(__file__).resolve().parent.parent

REPORT = r"""
import json, os, sys, threading, tracemalloc
if os.environ.get("IDLE_MEMORY_TRACE"):
    tracemalloc.start()
def _report():
    traced = {}
    if tracemalloc.is_tracing():
        for stat in tracemalloc.take_snapshot().statistics("filename"):
            traced[stat.traceback[0].filename] = stat.size
    rss, name = {}, "[anon]"
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
                name = head[5] if len(head) > 5 else "[anon]"
            elif line.startswith("Rss:"):
                rss[name] = rss.get(name, 0) + int(head[1])
    with open(os.environ["IDLE_MEMORY_OUT"], "w") as f:
        json.dump({"rss_kib": rss, "modules": sorted(sys.modules), "traced": traced,
                   "files": {m: getattr(mod, "__file__", None) for m, mod in list(sys.modules.items())}}, f)
    os._exit(0)
threading.Timer(float(os.environ["IDLE_MEMORY_AT"]), _report).start()
"""
COCKPIT = REPORT + "from cockpit.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def run_side_by_side(programs: dict[str, list[str]], at: float, ws: Path) -> dict[str, dict]:
    """Start every program at once, each in its own pty; each reports on itself at `at` s and exits."""
    running = {}
    for name, argv in programs.items():
        CHILD_ENV.update(IDLE_MEMORY_OUT=str(ws / f"{name}.json"), IDLE_MEMORY_AT=str(at))  # spawn's env
        (ws / f"{name}.json").unlink(missing_ok=True)
        running[name] = spawn(argv)
    deadline = time.monotonic() + at + 30
    while any(p.poll() is None for p, _ in running.values()) and time.monotonic() < deadline:
        drain([m for _, m in running.values()])
    got = {}
    for name, (proc, master) in running.items():
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)
        out = ws / f"{name}.json"
        if not out.exists():
            sys.exit(f"idle memory: the {name} wrote no report (run it by hand to see why)")
        got[name] = json.loads(out.read_text())
    return got


def pyc_kib(path: str | None) -> float:
    """The size of a module's bytecode, as its .pyc holds it."""
    if not path or not path.endswith(".py"):
        return 0.0
    try:
        return len(marshal.dumps(compile(Path(path).read_text(), path, "exec"))) / 1024
    except (OSError, SyntaxError, ValueError):
        return 0.0


def group(module: str) -> str:
    top = module.split(".")[0]
    return top if top in ("cockpit", "textual", "rich") else "other"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--at", type=float, default=15.0)
    p.add_argument("--replay", type=Path, help="drive the cockpit's panel from a recording (no GPU)")
    p.add_argument("--trace", action="store_true",
                   help="also Python's allocations by source file, cockpit minus floor (tracemalloc on in "
                        "both: the RSS figures then include its own cost)")
    args = p.parse_args()
    if args.trace:
        CHILD_ENV["IDLE_MEMORY_TRACE"] = "1"
    py = sys.executable
    ws = Path(tempfile.mkdtemp(prefix="idle-memory-"))
    CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(ws / "pycache")
    subprocess.run([py, "-m", "cockpit", "--workspace", str(ws), "new", "idle panel"],
                   check=True, capture_output=True, cwd=REPO, env=CHILD_ENV)
    cockpit = [py, "-c", COCKPIT, "--workspace", str(ws)]
    if args.replay:
        cockpit += ["--replay", str(args.replay.resolve())]
    floor = [py, "-c", REPORT + FLOOR, "textual" if args.replay else "nvml"]
    run_side_by_side({"cockpit": cockpit, "floor": floor}, 3.0, ws)  # fills the bytecode cache
    got = run_side_by_side({"cockpit": cockpit, "floor": floor}, args.at, ws)
    kib = {n: got[n]["rss_kib"] for n in got}
    total = {n: sum(kib[n].values()) / 1024 for n in kib}
    print(f"# at {args.at:.0f} s, pty 160x48; floor = "
          f"{'Python + Textual' if args.replay else 'Python + Textual + psutil + pynvml + NVML queries'}")
    print(f"cockpit {total['cockpit']:.1f} MiB, floor {total['floor']:.1f} MiB, "
          f"share {total['cockpit'] - total['floor']:.1f} MiB")
    names = set(kib["cockpit"]) | set(kib["floor"])
    diff = sorted(((kib["cockpit"].get(k, 0) - kib["floor"].get(k, 0)) / 1024, k) for k in names)
    print("\nmapping (resident MiB above the floor's)")
    for d, k in reversed(diff):
        if abs(d) >= 0.05:
            print(f"{d:8.2f}  {re.sub(r'^.*/(site-packages|lib-dynload|lib)/', '', k)}")
    if args.trace:
        mine, base = got["cockpit"]["traced"], got["floor"]["traced"]
        apart = sorted(((mine.get(f, 0) - base.get(f, 0)) / 1024, f) for f in set(mine) | set(base))
        print(f"\nPython's allocations by file, KiB above the floor's (all: "
              f"{(sum(mine.values()) - sum(base.values())) / 1024:.0f})")
        for d, f in reversed(apart[-30:]):
            print(f"{d:8.1f}  {re.sub(r'^.*/(site-packages|python3[.0-9]*)/', '', f)}")
    floor_mods = set(got["floor"]["modules"])
    extra = [m for m in got["cockpit"]["modules"] if m not in floor_mods]
    files = got["cockpit"]["files"]
    sizes = Counter()
    counts = Counter()
    for m in extra:
        sizes[group(m)] += pyc_kib(files.get(m))
        counts[group(m)] += 1
    print("\nmodules beyond the floor's: group, count, bytecode KiB")
    for g, n in counts.most_common():
        print(f"{g:<8} {n:4d} {sizes[g]:8.0f}")
    biggest = sorted(((pyc_kib(files.get(m)), m) for m in extra), reverse=True)[:25]
    print("\nlargest of them (bytecode KiB)")
    for kb, m in biggest:
        print(f"{kb:8.1f}  {m}")


if __name__ == "__main__":
    main()
