"""The house's counts at one or more commits, side by side: blocks of complexity >= 11 and > 20
(radon, as tests/test_house_caps.py counts), modules over 400 lines, `dict[str, Any]` in cockpit/,
the modules of cockpit/ (the probes aside) that name attention, and the stored shapes of a result
type (`class ...Result`/`...Row`/`...Json`/`...Record` names declared more than once).

    python3 bench/house_counts.py 912ba0c HEAD
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter

from radon.complexity import cc_visit

ATTENTION = re.compile(r"flash|attention|head_dim", re.IGNORECASE)
CLASS = re.compile(r"^class (\w+)", re.MULTILINE)


def files_at(rev: str) -> dict[str, str]:
    listing = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "cockpit"],
                             capture_output=True, text=True, check=True).stdout.split()
    return {path: subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True,
                                 check=True).stdout
            for path in listing if path.endswith(".py")}


def counts(rev: str) -> dict[str, int]:
    files = files_at(rev)
    complexities = [b.complexity for text in files.values() for b in cc_visit(text)]
    names = Counter(n for text in files.values() for n in CLASS.findall(text))
    return {
        "modules": len(files),
        "blocks of complexity >= 11": sum(c > 10 for c in complexities),
        "blocks over 20": sum(c > 20 for c in complexities),
        "worst block": max(complexities),
        "modules over 400 lines": sum(len(t.splitlines()) > 400 for t in files.values()),
        "dict[str, Any]": sum(t.count("dict[str, Any]") for t in files.values()),
        "modules naming attention": sum(bool(ATTENTION.search(t)) for p, t in files.items()
                                        if not p.startswith("cockpit/probes/")),
        "class names declared twice": sum(n > 1 for n in names.values()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="+", help="commits to count (e.g. 912ba0c HEAD)")
    args = parser.parse_args()
    table = {rev: counts(rev) for rev in args.revs}
    rows = list(next(iter(table.values())))
    width = max(map(len, rows))
    print(f"{'':{width}}  " + "  ".join(f"{rev:>10}" for rev in args.revs))
    for row in rows:
        print(f"{row:{width}}  " + "  ".join(f"{table[rev][row]:>10}" for rev in args.revs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
