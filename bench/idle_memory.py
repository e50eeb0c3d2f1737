"""Where the idle cockpit's resident memory above the floor goes: each mapping's resident size
(the Python heap, anonymous memory, each shared library) and the modules it imported that the
floor did not, the cockpit and the floor each idling in its own 160x48 pseudo-terminal, as
bench/telemetry.py runs them (the same floor program).

    python3 bench/idle_memory.py [--at 15] [--replay FILE.jsonl]

Each program reports on itself `--at` seconds after it started (a timer thread reads
/proc/self/smaps and sys.modules, then the process exits). Bytecode is cached by an unmeasured
first round, as in bench/telemetry.py. Prints: RSS of both and the share; the mappings whose
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

from telemetry import CHILD_ENV, FLOOR, drain, spawn  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

REPORT = r"""
import json, os, sys, threading
def _report():
    rss, name = {}, "[anon]"
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
                name = head[5] if len(head) > 5 else "[anon]"
            elif line.startswith("Rss:"):
                rss[name] = rss.get(name, 0) + int(head[1])
    with open(os.environ["IDLE_MEMORY_OUT"], "w") as f:
        json.dump({"rss_kib": rss, "modules": sorted(sys.modules),
                   "files": {m: getattr(mod, "__file__", None) for m, mod in list(sys.modules.items())}}, f)
    os._exit(0)
threading.Timer(float(os.environ["IDLE_MEMORY_AT"]), _report).start()
"""
COCKPIT = REPORT + "from cockpit.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def run(argv: list[str], at: float, out: Path) -> dict:
    CHILD_ENV.update(IDLE_MEMORY_OUT=str(out), IDLE_MEMORY_AT=str(at))  # spawn's environment
    proc, master = spawn(argv)
    deadline = time.monotonic() + at + 30
    while proc.poll() is None and time.monotonic() < deadline:
        drain([master])
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    os.close(master)
    if not out.exists():
        sys.exit(f"idle memory: {argv[2]!r} wrote no report (run it by hand to see why)")
    return json.loads(out.read_text())


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
    args = p.parse_args()
    py = sys.executable
    ws = Path(tempfile.mkdtemp(prefix="idle-memory-"))
    CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(ws / "pycache")
    subprocess.run([py, "-m", "cockpit", "--workspace", str(ws), "new", "idle panel"],
                   check=True, capture_output=True, cwd=REPO, env=CHILD_ENV)
    cockpit = [py, "-c", COCKPIT, "--workspace", str(ws)]
    if args.replay:
        cockpit += ["--replay", str(args.replay.resolve())]
    floor = [py, "-c", REPORT + FLOOR, "textual" if args.replay else "nvml"]
    for _ in range(2):  # the first round fills the bytecode cache
        got = {name: run(argv, args.at, ws / f"{name}.json")
               for name, argv in (("cockpit", cockpit), ("floor", floor))}
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
