"""Which GPU work each audited call made, from the profiler's activity records: the work nothing
escapes. The bench's audit (probes/workload/escapes.py) runs a few calls of an implementation under
torch's profiler (CUPTI's activity records underneath: every kernel, copy and fill on any stream,
with the correlation id of the API call that launched it), each call inside a host range named
`cockpit.call.<i>`. This module, plain Python, attributes every GPU activity to the call whose
host range holds its launch on the calling thread, and says what escapes:

- work launched from another thread (its launch is on a thread that is not the caller's), and of
  it, what was launched while no call was running: a thread its call does not wait for, refused
  whatever the timer saw (whether the events happen to see such work is a race);
- work on a stream other than the caller's;
- work launched on the caller's thread after every call returned;

and, against the CUDA events' time of the same calls (what the bench's timer sees), whether the
timer saw the work: an events time per call under `SEEN` x the records' busy time per call (the
union of the call's activity intervals, any stream) means the timer missed work. A side stream the
caller's stream waits for, or a thread joined before the call returns, is timed whole: named, not
refused.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

CALL_MARK = "cockpit.call."
"""The host range around audited call i is named CALL_MARK + str(i)."""
API = "cu"
"""The host records that launch work are CUDA's runtime and driver calls (cudaLaunchKernel,
cuLaunchKernelEx for Triton, cudaMemcpyAsync, ...): their correlation id is the work's."""
JOINS = ("cudaStreamWaitEvent", "cuStreamWaitEvent", "cudaDeviceSynchronize", "cuCtxSynchronize",
         "cudaStreamSynchronize", "cuStreamSynchronize", "cudaEventSynchronize", "cuEventSynchronize")
"""The host calls that make the caller wait for work on another stream: a call that launches there
and makes none of them leaves that work running when it returns."""
SEEN = 0.97
"""The timer saw the work when its time per call is at least this share of the records' busy time
(events time a serial stream's gaps too, so honest work reads at or above 1)."""


@dataclass(frozen=True)
class GpuRecord:
    """One record: a host API call or range (on_gpu False: `lane` is its thread id), or a GPU
    kernel, copy or fill (on_gpu True: `lane` is its stream); `link` is the correlation id that
    joins a launch to the work it launched."""

    name: str
    on_gpu: bool
    lane: int
    link: int
    start_ns: int
    dur_ns: int

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.dur_ns


@dataclass(frozen=True)
class Escapes:
    """What the audited calls did on the GPU, and what escaped the caller."""

    calls: int
    kernels: int
    """GPU activities launched inside the calls, every stream and thread."""
    busy_ns: int
    """The union of every attributed activity's interval, over all calls."""
    names: tuple[str, ...]
    """The kernels' names, first seen first (at most 8)."""
    other_threads: int
    """Activities launched from a thread that is not the caller's."""
    unjoined: int
    """Of those, the ones launched while no call was running: a thread its call did not wait for."""
    other_streams: tuple[int, ...]
    late: int
    """Activities launched on the caller's thread after the last call returned."""
    unjoined_streams: int = 0
    """Activities on another stream launched by a call that never made its caller's stream wait
    (no cudaStreamWaitEvent, no synchronize, inside that call)."""

    def busy_us_per_call(self) -> float:
        return self.busy_ns / 1000 / max(1, self.calls)

    def kernels_per_call(self) -> float:
        return self.kernels / max(1, self.calls)


def escapes(records: Sequence[GpuRecord], caller_tid: int, caller_stream: int) -> Escapes:
    """Attribute `records` (see the module docstring); the audit launches no work of its own after
    the calls (its closing event and synchronize are no GPU activity)."""
    ranges, launches, work = _sorted_out(records, caller_tid)
    joined = {_call_of(ranges, a.start_ns) for a in records
              if not a.on_gpu and a.lane == caller_tid and a.name.startswith(JOINS)}
    last_end = ranges[-1][1] if ranges else 0
    mine: list[GpuRecord] = []
    counts = {"thread": 0, "unjoined": 0, "late": 0, "streams": 0}
    for act in work:
        launch = launches.get(act.link)
        where = _launched(launch, ranges, caller_tid, last_end)
        if where is None or launch is None:
            continue
        mine.append(act)
        for key in where:
            counts[key] += 1
        counts["streams"] += act.lane != caller_stream and _call_of(ranges, launch.start_ns) not in joined
    names = tuple(dict.fromkeys(a.name for a in mine))[:8]
    return Escapes(calls=len(ranges), kernels=len(mine), busy_ns=_union_ns(mine), names=names,
                   other_threads=counts["thread"], unjoined=counts["unjoined"],
                   other_streams=tuple(sorted({a.lane for a in mine if a.lane != caller_stream})),
                   late=counts["late"], unjoined_streams=counts["streams"])


def _sorted_out(records: Sequence[GpuRecord], caller_tid: int
                ) -> tuple[list[tuple[int, int]], dict[int, GpuRecord], list[GpuRecord]]:
    """The calls' host ranges on the caller's thread, the launches by correlation id, the GPU work."""
    ranges = sorted((a.start_ns, a.end_ns) for a in records
                    if not a.on_gpu and a.name.startswith(CALL_MARK) and a.lane == caller_tid)
    launches = {a.link: a for a in records if not a.on_gpu and a.name.startswith(API)}
    ranges_named = {a.name for a in records if not a.on_gpu and not a.name.startswith(API)}
    work = [a for a in records if a.on_gpu and a.name not in ranges_named]  # a range's GPU mirror: no work
    return ranges, launches, work


def _launched(launch: GpuRecord | None, ranges: Sequence[tuple[int, int]], caller_tid: int,
              last_end: int) -> tuple[str, ...] | None:
    """How one piece of GPU work was launched: () inside a call on the caller's thread, ("thread",)
    or ("thread", "unjoined") from another thread, ("late",) after the last call returned; None
    when it is not the calls' (the profiler's or the audit's own, launched before the first)."""
    if launch is None:
        return None
    inside = _call_of(ranges, launch.start_ns) is not None
    if launch.lane != caller_tid:
        return ("thread",) if inside else ("thread", "unjoined")
    if inside:
        return ()
    return ("late",) if launch.start_ns > last_end else None


def _call_of(ranges: Sequence[tuple[int, int]], t: int) -> int | None:
    """The call whose host range holds time `t` (None: between calls)."""
    i = bisect.bisect_right(ranges, (t, 1 << 62)) - 1
    return i if i >= 0 and ranges[i][0] <= t <= ranges[i][1] else None


def _union_ns(acts: Sequence[GpuRecord]) -> int:
    total, reach = 0, -1
    for start, end in sorted((a.start_ns, a.end_ns) for a in acts):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


def escape_line(found: Escapes, timer_us_per_call: float, config: str = "") -> str | None:
    """The bench's refusal when work escaped the timer, naming how (and at which `config`); None
    when the timer saw it all."""
    busy = found.busy_us_per_call()
    at = f" at {config}" if config else ""
    if found.unjoined:
        return (f"launches work from another thread that its call does not wait for{at} ({found.unjoined} "
                f"launches while no call was running); its kernels ran {busy:.1f} µs per call, the timer "
                f"saw {timer_us_per_call:.1f} µs (kernel records, every thread)")
    escaped = found.late or found.unjoined_streams
    if busy <= 0 or (not escaped and timer_us_per_call >= SEEN * busy):
        return None
    how = []
    if found.other_streams:
        how.append(f"on another stream ({', '.join(str(s) for s in found.other_streams)}) its caller's "
                   "stream does not wait for")
    if found.other_threads:
        how.append("launched from another thread")
    if found.late:
        how.append("launched after its call returned")
    where = "; ".join(how) or "outside what the timer waits for"
    return (f"leaves work the timer does not see{at}: {where}; its kernels ran {busy:.1f} µs per call, "
            f"the timer saw {timer_us_per_call:.1f} µs (kernel records, every stream)")


def escape_note(found: Escapes) -> str | None:
    """A line for work on another stream or thread that the timer did see (timed whole)."""
    if not found.other_streams and not found.other_threads:
        return None
    where = (f"stream {', '.join(str(s) for s in found.other_streams)}" if found.other_streams
             else "another thread")
    return f"also runs work on {where}; the timer waits for it (timed whole)"
