"""Every config of a bench gate run against FLASH, with its interval: the fresh-clone check of
issue 25 (the shipped kernel at or above FLASH on every S >= 1024 config on Hopper).

    python3 bench/kernel_speedups.py BENCH_GATE.json [--min-s 1024] [--against flash]

BENCH_GATE.json is `cockpit gate bench --json`'s output. Prints one line per config (the
implementations whose host cannot keep up in eager use marked; a result from before device time
marks its launch-bound configs), then the geomean and the lowest ratio and interval bottom of the configs with
S >= --min-s; exits 1 when any of those is below 1.0x.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gate_json", type=Path)
    ap.add_argument("workspace", type=Path, nargs="?", help="unused; kept for the device script")
    ap.add_argument("--min-s", type=int, default=1024)
    ap.add_argument("--against", default="flash")
    args = ap.parse_args(argv)
    gate = json.loads(args.gate_json.read_text())
    rows = gate["result"]["rows"]
    key = f"speedup_vs_{args.against}"
    print(f"{gate['status']}: {gate['summary']}")
    print(f"{'config':<34} {'ratio':>7} {'interval':>17}")
    held = []
    order = sorted(rows, key=lambda r: (r.get("D", 0), r.get("dtype", ""), bool(r.get("causal")),
                                        r.get("S", 0)))
    for row in order:
        ratio, ci = row.get(key), row.get(f"{key}_ci") or [None, None]
        if ratio is None:
            continue
        host = [impl for impl, cell in row.get("impl", {}).items() if cell.get("host_bound")]
        mark = (" launch-bound" if row.get("launch_bound") else "") + (
            f" host-bound in eager use: {', '.join(host)}" if host else "")
        lo, hi = (f"{ci[0]:.3f}", f"{ci[1]:.3f}") if ci[0] is not None else ("?", "?")
        print(f"{row['config']:<34} {ratio:>6.3f}x [{lo}, {hi}]{mark}")
        if int(row.get("S", 0)) >= args.min_s:
            held.append((ratio, ci[0] if ci[0] is not None else ratio, row["config"]))
    if not held:
        print(f"no config with S >= {args.min_s}")
        return 1
    geo = math.exp(sum(math.log(r) for r, _, _ in held) / len(held))
    worst = min(held)
    lowest_lo = min(held, key=lambda h: h[1])
    print(f"S >= {args.min_s}: {len(held)} configs, geomean {geo:.3f}x {args.against.upper()}; lowest "
          f"{worst[0]:.3f}x ({worst[2]}); lowest interval bottom {lowest_lo[1]:.3f} ({lowest_lo[2]})")
    ok = worst[0] >= 1.0
    print("at or above 1.0x on every one" if ok else "BELOW 1.0x on at least one")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
