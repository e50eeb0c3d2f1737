"""The edit-build loop through the Build gate, on a GPU box: first build, no-op, kernel-only
edit (csrc/attention.cu), binding edit (csrc/binding.cpp). Each row is `cockpit gate build`.

    python bench/build_loop.py [--keep DIR]

Targets: kernel-only edit rebuilt and importable <= 10 s; no-op <= 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def gate(ws: Path) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), "gate", "build",
                          "--json"], capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    try:
        report = json.loads(out.stdout)
    except ValueError:
        sys.exit(f"no JSON from the build gate:\n{out.stdout}\n{out.stderr[-3000:]}")
    return wall, report


def touch_source(path: Path) -> None:
    """A real edit: append a comment line (content and mtime change)."""
    with path.open("a") as f:
        f.write(f"// edit {time.time()}\n")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--keep", type=Path, help="leave the workspace (logs, build dir) here")
    args = p.parse_args()
    ws = args.keep or Path(tempfile.mkdtemp(prefix="build-loop-"))
    ws.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "csrc", ws / "csrc", dirs_exist_ok=True)
    subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), "new", "build loop"],
                   check=True, capture_output=True, cwd=REPO)
    print(f"# build_loop: {os.cpu_count()} cores, workspace {ws}")
    rows = []
    for label, edit in (("first build", None), ("no-op", None),
                        ("kernel-only edit", ws / "csrc" / "attention.cu"),
                        ("no-op again", None), ("binding edit", ws / "csrc" / "binding.cpp")):
        if edit is not None:
            touch_source(edit)
        wall, report = gate(ws)
        result = report.get("result", {})
        rows.append((label, wall, report.get("duration_s"), report["status"], result.get("steps"),
                     report["summary"]))
    print(f"{'step':<18} {'wall s':>7} {'gate s':>7} {'status':>7} {'ninja steps':>11}  summary")
    for label, wall, dur, status, steps, summary in rows:
        print(f"{label:<18} {wall:>7.2f} {dur or 0:>7.2f} {status:>7} {steps or 0:>11}  {summary}")
    by = {r[0]: r for r in rows}
    print(f"kernel-only edit {by['kernel-only edit'][1]:.2f} s (target <= 10 s: "
          f"{'PASS' if by['kernel-only edit'][1] <= 10 else 'FAIL'}); no-op {by['no-op'][1]:.2f} s "
          f"(target <= 1 s: {'PASS' if by['no-op'][1] <= 1 else 'FAIL'})")


if __name__ == "__main__":
    main()
