"""The key fuzzer at scale: seeds x states x sizes, a table of keys, pastes, resizes, crashes and
invariant breaks (tests/key_fuzz.py says what is checked after every key).

    python3 bench/key_fuzzer.py --seeds 5 --steps 200            # the figures for bench/RESULTS.md
    python3 bench/key_fuzzer.py --seed 7 --state open --size 120x40   # replay one break
    python3 bench/key_fuzzer.py --live-gpu ...                   # with the live NVML panel (a GPU box)

Exit 1 when anything broke (each break printed with its seed and its last keys).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TZ", "UTC")

from tests.key_fuzz import SIZES, STATES, FuzzBreak, Fuzzer


def size_arg(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


async def fuzz(args: argparse.Namespace) -> int:
    seeds = [args.seed] if args.seed is not None else list(range(1, args.seeds + 1))
    states = [args.state] if args.state else list(STATES)
    sizes = [size_arg(args.size)] if args.size else list(SIZES)
    totals = dict.fromkeys(("runs", "keys", "pastes", "resizes", "quits", "gates", "crashes", "breaks"), 0)
    print(f"{'seed':>5} {'state':<13} {'size':>7} {'keys':>5} {'pastes':>6} {'resizes':>7} {'gates':>5} "
          f"{'screens':>7} {'s':>6}  result")
    started = time.perf_counter()
    for seed in seeds:
        for size in sizes:
            for state in states:
                with tempfile.TemporaryDirectory() as root:
                    fuzzer = Fuzzer(seed, state, size, args.steps, Path(root), live_gpu=args.live_gpu)
                    t = time.perf_counter()
                    try:
                        tally = await fuzzer.run()
                        result = "ok"
                    except FuzzBreak as exc:
                        tally, result = fuzzer.tally, f"BREAK {exc}"
                        totals["breaks"] += 1
                    except Exception as exc:  # the app itself raised: a crash
                        tally, result = fuzzer.tally, f"CRASH {exc!r} (seed {seed})"
                        totals["crashes"] += 1
                totals["runs"] += 1
                counted = {"keys": tally.keys, "pastes": tally.pastes, "resizes": tally.resizes,
                           "quits": tally.quits_asked, "gates": tally.gates_started}
                for name, value in counted.items():
                    totals[name] += value
                print(f"{seed:>5} {state:<13} {size[0]:>3}x{size[1]:<3} {tally.keys:>5} {tally.pastes:>6} "
                      f"{tally.resizes:>7} {tally.gates_started:>5} {len(tally.screens):>7} "
                      f"{time.perf_counter() - t:>6.1f}  {result}", flush=True)
    wall = time.perf_counter() - started
    print(f"\n{totals['runs']} runs ({len(seeds)} seeds x {len(states)} states x {len(sizes)} sizes), "
          f"{totals['keys']} keys, {totals['pastes']} pastes, {totals['resizes']} resizes, "
          f"{totals['gates']} gates started, {totals['quits']} quits asked and answered: "
          f"{totals['crashes']} crashes, {totals['breaks']} invariant breaks, {wall:.0f} s")
    return 1 if totals["crashes"] or totals["breaks"] else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3, help="seeds 1..N (default 3)")
    parser.add_argument("--seed", type=int, help="one seed (a replay)")
    parser.add_argument("--state", choices=STATES)
    parser.add_argument("--size", help="COLSxROWS, e.g. 80x24")
    parser.add_argument("--steps", type=int, default=200, help="keys and pastes per run (default 200)")
    parser.add_argument("--live-gpu", action="store_true",
                        help="poll NVML once a second (the GPU panel live)")
    args = parser.parse_args()
    if not os.environ.get("XDG_CACHE_HOME"):  # the saved folds of throwaway sessions: not the user's cache
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="key-fuzzer-cache-")
    return asyncio.run(fuzz(args))


if __name__ == "__main__":
    raise SystemExit(main())
