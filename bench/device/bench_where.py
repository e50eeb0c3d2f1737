"""Where the attention bench's wall time goes (a diagnostic for the grid's 120 s budget with every
check on): the bench probe run in this process on WORKSPACE's workload, with the pieces around the
timing wrapped in wall clocks (each config; the timed checks' block ends, their oracle calls and
comparisons; the block starts' rotation and poisoning; the kernel-records audits; the input sets),
then one line per piece: calls, total seconds, the costliest single call.

    python3 bench/device/bench_where.py WORKSPACE WORKLOAD OUT.json [probe args ...]
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

TOTALS: dict[str, list[float]] = defaultdict(list)


def clocked(owner: Any, name: str, label: str, sync: bool = False) -> None:
    """owner.name wrapped: each call's wall time kept under `label` (after a device sync when asked,
    so a check's time is not the timed block's drain)."""
    real: Callable[..., Any] = getattr(owner, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if sync:
            import torch

            t_sync = time.perf_counter()
            torch.cuda.synchronize()
            TOTALS[label + " (drain before)"].append(time.perf_counter() - t_sync)
        t0 = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            if sync:
                import torch

                torch.cuda.synchronize()
            TOTALS[label].append(time.perf_counter() - t0)

    setattr(owner, name, wrapped)


def main() -> int:
    workspace, workload, out, *rest = sys.argv[1:]
    t0 = time.perf_counter()
    import torch  # noqa: F401

    from cockpit.probes import guards_identity, workload_probe
    from cockpit.probes.workload import escapes, shifting, timed_check, timing

    TOTALS["import torch + cockpit"].append(time.perf_counter() - t0)
    clocked(timing, "_config", "config")
    clocked(timing, "audit_candidates", "kernel-records audit")
    clocked(timing, "_input_set", "input set made")
    clocked(timing, "_shifted", "shifting pools made")
    clocked(timed_check.TimedCalls, "begin", "block begin (rotate, poison, draw)")
    clocked(timed_check.TimedCalls, "end", "block end (identity + checks)")
    clocked(timed_check.Oracle, "verdict", "one timed check (oracle + compare)", sync=True)
    clocked(timed_check, "compare", "compare alone")
    clocked(shifting.Shifted, "refresh", "refresh one set")
    clocked(guards_identity, "breach", "identity breach check")
    clocked(guards_identity, "taken", "identity snapshot")
    clocked(escapes, "record", "audit record (profiler session)")
    t1 = time.perf_counter()
    argv = ["bench", "--workspace", workspace, "--workload", workload, "--out", out, *rest]
    code = workload_probe.main(argv)
    TOTALS["probe main"].append(time.perf_counter() - t1)
    print(f"\nbench probe exit {code}; where the time went:")
    rows = sorted(TOTALS.items(), key=lambda kv: -sum(kv[1]))
    for label, times in rows:
        print(f"  {label:42s} {len(times):6d} calls {sum(times):9.2f} s  max {max(times):7.3f} s")
    with open(out + ".where.json", "w", encoding="utf-8") as f:
        json.dump({k: v for k, v in TOTALS.items()}, f)
    return code


if __name__ == "__main__":
    sys.exit(main())
