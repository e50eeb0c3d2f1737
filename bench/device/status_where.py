"""Where `cockpit status` spends its time on a workspace (a diagnostic beside bench/status_big.py):
in a fresh child process each, the phases of one run (imports, the parser, the verb), whether the
open session came from the kept answer (session/last_open.py) or a listing of the folder, and the
verb's 12 costliest calls under cProfile.

    python3 bench/device/status_where.py WORKSPACE [WORKSPACE ...]   (XDG_CACHE_HOME as status_big's)
"""

from __future__ import annotations

import subprocess
import sys

CHILD = r"""
import sys, time
t0 = time.perf_counter()
import cockpit.cli
t1 = time.perf_counter()
from cockpit.cli.parser import build_parser
argv = ["--workspace", sys.argv[1], "status"]
args = build_parser(argv).parse_args(argv)
t2 = time.perf_counter()
import cockpit.cli.session as verb
from cockpit.session import workspace
listed = []
real = workspace.os.listdir
workspace.os.listdir = lambda p: listed.append(p) or real(p)
t3 = time.perf_counter()
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    verb.status(args)
t4 = time.perf_counter()
print(f"imports {1e3 * (t1 - t0):.1f} ms, parser {1e3 * (t2 - t1):.1f} ms, "
      f"verb imports {1e3 * (t3 - t2):.1f} ms, verb {1e3 * (t4 - t3):.1f} ms; "
      f"folder listed {len(listed)} time(s)")
if len(sys.argv) > 2:
    import cProfile, pstats
    prof = cProfile.Profile()
    with contextlib.redirect_stdout(io.StringIO()):
        prof.runcall(verb.status, args)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(12)
"""


def main() -> int:
    for ws in sys.argv[1:]:
        print(f"== {ws}", flush=True)
        for _ in range(3):
            subprocess.run([sys.executable, "-c", CHILD, ws], check=False)
        subprocess.run([sys.executable, "-c", CHILD, ws, "profile"], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
