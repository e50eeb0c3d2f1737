"""`cockpit status` on a workspace of 10,000 sessions, as tmux's status line runs it every few seconds.

Two workspaces, each of `--sessions` sessions:
  small        sessions as `cockpit new` makes them (two journal lines and SESSION.md), one an hour,
               every one ended but the newest, which is open
  history_big  bench/history_big.py's: copies of the three example sessions (real H100 sessions,
               ended), one a day from 2026-11-23 on, so most start after today; then `cockpit new`
               opens one today: the open session is among the oldest by name, behind thousands of
               newer ended ones

Each cell is the median of `--runs` warm runs (after one untimed run: bytecode and caches), each a
fresh `python -m cockpit` child process as tmux runs it, the rows' runs taken in turns after every
workspace is built and synced to disk: its whole wall time, and its CPU time
(user + system, which a busy machine inflates less). Two reference rows put them in proportion:
`cockpit status` on a workspace of one session, and the interpreter alone (`python -c pass`).

    python3 bench/status_big.py [--sessions 10000] [--runs 20] [--workspace DIR (kept, reused if built)]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from history_big import build as build_history_big  # noqa: E402
from startup import CHILD_ENV, STATUS_TARGET_S, cockpit, run_s  # noqa: E402

from cockpit.config import Config  # noqa: E402
from cockpit.session import events as ev  # noqa: E402
from cockpit.session.journal import JournalWriter  # noqa: E402
from cockpit.session.workspace import Workspace, create_session  # noqa: E402

HOUR = 3600.0


def build_small(root: Path, sessions: int) -> None:
    """`sessions` sessions as `cockpit new` makes them, one an hour up to now; all but the newest ended."""
    ws = Workspace(root)
    first = time.time() - (sessions - 1) * HOUR - 60
    for k in range(sessions):
        t = first + k * HOUR
        ref = create_session(ws, Config(), f"small session {k}", None, t, tag=f"{k % 65536:04x}")
        if k < sessions - 1:
            writer = JournalWriter(ref.journal)
            writer.append(ev.session_ended(t + 600, "bench: ended"))
            writer.close()


def built(root: Path, sessions: int) -> bool:
    folder = root / "sessions"
    return folder.is_dir() and sum(1 for _ in folder.iterdir()) >= sessions


def make(root: Path, kind: str, sessions: int) -> None:
    """The workspace `kind` under root, unless it is there already."""
    if built(root, sessions):
        return
    shutil.rmtree(root / "sessions", ignore_errors=True)
    t0 = time.perf_counter()
    if kind == "small":
        build_small(root, sessions)
    else:
        build_history_big(root, sessions)
        subprocess.run(cockpit("--workspace", str(root), "new", "bench: status"), check=True,
                       stdout=subprocess.DEVNULL, env=CHILD_ENV)
    print(f"built {kind}: {sessions} sessions in {time.perf_counter() - t0:.0f} s", flush=True)


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = run_s(argv)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved_ms(argvs: list[list[str]], runs: int) -> list[tuple[float, float]]:
    """The median wall and CPU milliseconds of `runs` warm runs of each of `argvs`, taken in turns
    (one run of each, then the next round), so that a box getting busier or quieter, or writing
    back the workspaces just built, weighs on every row alike."""
    for argv in argvs:
        run_s(argv)  # untimed: bytecode, the page cache, the saved folds, the answers kept
    taken: list[list[tuple[float, float]]] = [[] for _ in argvs]
    for _ in range(runs):
        for k, argv in enumerate(argvs):
            taken[k].append(timed(argv))
    return [(statistics.median(w for w, _ in t) * 1000, statistics.median(c for _, c in t) * 1000)
            for t in taken]


def status_rows(named: list[tuple[str, Path]], runs: int) -> list[str]:
    """Table rows: `cockpit status` and `cockpit status --json` on each workspace, and the session shown."""
    argvs = [[*cockpit("--workspace", str(root), "status"), *extra]
             for _, root in named for extra in ([], ["--json"])]
    ms = interleaved_ms(argvs, runs)
    rows = []
    for k, (name, _) in enumerate(named):
        (line, line_cpu), (as_json, json_cpu) = ms[2 * k], ms[2 * k + 1]
        shown = json.loads(subprocess.run(argvs[2 * k + 1], capture_output=True, text=True, env=CHILD_ENV,
                                          check=True).stdout)["session"]
        verdict = "PASS" if max(line, as_json) <= STATUS_TARGET_S * 1000 else "FAIL"
        rows.append(f"| {name} | {line:.0f} ({line_cpu:.0f}) | {as_json:.0f} ({json_cpu:.0f}) | {shown} "
                    f"| {verdict} |")
    return rows


def table(rows: list[str], runs: int) -> str:
    return "\n".join([
        f"\n{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; median of {runs} warm runs, "
        "wall ms (CPU ms)\n",
        "| workspace | `cockpit status` | `cockpit status --json` | session shown | result |",
        "|---|---|---|---|---|",
        *rows,
        f"\ntarget: ≤ {STATUS_TARGET_S * 1000:.0f} ms wall, warm",
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--workspace", type=Path, help="build under here (kept; reused when already built)")
    args = parser.parse_args()
    with contextlib.ExitStack() as kept_or_not:
        base = args.workspace or Path(kept_or_not.enter_context(tempfile.TemporaryDirectory(
            prefix="cockpit-status-")))
        CHILD_ENV["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
        CHILD_ENV.setdefault("PYTHONPYCACHEPREFIX", str(base / "pycache"))
        CHILD_ENV["XDG_CACHE_HOME"] = str(base / "cache")  # saved folds, ended ids: not the user's
        print(table(measure(base, args.sessions, args.runs), args.runs))
    return 0


def measure(base: Path, sessions: int, runs: int) -> list[str]:
    """The table's rows: both workspaces under `base` (built unless there) and the one-session
    reference, all built and written back to disk before any is timed, then timed in turns."""
    named = []
    for kind in ("small", "history_big"):
        root = base / kind
        root.mkdir(parents=True, exist_ok=True)
        make(root, kind, sessions)
        named.append((f"{kind}: {sessions} sessions", root))
    one = base / "one"
    if not built(one, 1):
        one.mkdir(parents=True, exist_ok=True)
        build_small(one, 1)
    named.append(("(reference) one session", one))
    os.sync()  # the write-back of 20,000 new folders is not timed
    rows = status_rows(named, runs)
    (alone, alone_cpu), = interleaved_ms([[sys.executable, "-c", "pass"]], runs)
    return [*rows, f"| (reference) `python -c pass` | {alone:.0f} ({alone_cpu:.0f}) | — | — | — |"]


if __name__ == "__main__":
    sys.exit(main())
