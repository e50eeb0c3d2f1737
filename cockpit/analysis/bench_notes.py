"""What the bench summary says beside its headline: the implementations whose host cannot keep up
in eager use, and the speedup at equal clocks where ours and the baseline ran at different ones.

Every time in the headline is the device's: the probe holds the stream behind a short spin kernel
while the timed launches queue, so the host's launch cost never enters it. A model that launches
eagerly pays that cost; where an implementation's eager time per call is clearly over its device
time (the probe's `host_bound`), its host sets the pace in use, and the summary says so with both
numbers. That is a note on that implementation, never a reason to drop the config for all.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from cockpit.analysis.stats import geomean
from cockpit.json_fields import JsonObject, as_number, obj


def host_bound_note(rows: Sequence[JsonObject], labels: Mapping[str, str]) -> str:
    """'; torch.softmax host-bound in eager use at 2 configs (eager 14.1 µs vs 9.0 µs on the
    device)': each implementation the probe found host-bound, with the median of its eager and
    its device times over those configs; empty when none was."""
    said = ""
    for impl, times in _host_bound_times(rows).items():
        n = len(times)
        eager = statistics.median(e for e, _ in times)
        device = statistics.median(d for _, d in times)
        said += (f"; {labels.get(impl, impl)} host-bound in eager use at {n} config{'s' if n != 1 else ''} "
                 f"(eager {_us(eager)} vs {_us(device)} on the device)")
    return said


def _host_bound_times(rows: Sequence[JsonObject]) -> dict[str, list[tuple[float, float]]]:
    """Per implementation, the (eager, device) times of each config the probe found it host-bound
    at: the host could not launch it as fast as the GPU ran it."""
    found: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        for impl, cell in ((i, obj(c)) for i, c in obj(row.get("impl")).items()):
            eager, device = as_number(cell.get("eager_ms")), as_number(cell.get("median_ms"))
            if cell.get("host_bound") is True and eager is not None and device is not None:
                found.setdefault(impl, []).append((eager, device))
    return found


def equal_clock_speedup(rows: Sequence[JsonObject], key: str, config_mhz: Mapping[str, Mapping[str, float]],
                        ours: str, baseline: str) -> tuple[float, int] | None:
    """The headline in cycle space: per config, the speedup in `key` times the baseline's clock over
    ours (the ratio of cycles: a kernel that ran at a lower clock did its work in fewer cycles than
    its time says), as a geometric mean over the configs with both clocks; None without any. Exact
    for work that scales with the SM clock; a memory-bound kernel moves less with it."""
    ratios = []
    for row in rows:
        speedup = as_number(row.get(key))
        mhz = config_mhz.get(str(row.get("config")), {})
        mine, theirs = mhz.get(ours), mhz.get(baseline)
        if speedup is not None and speedup > 0 and mine and theirs:
            ratios.append(speedup * theirs / mine)
    return (geomean(ratios), len(ratios)) if ratios else None


def _us(ms: float) -> str:
    return f"{ms * 1e3:.1f} µs" if ms < 1 else f"{ms:.2f} ms"
