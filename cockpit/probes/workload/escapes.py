"""The bench's audit of work that escapes its timer (guard "kernel-records"): a few calls of a
candidate run back to back behind a spin, between two CUDA events (what the bench's timer sees),
under torch's profiler, whose activity records (CUPTI's) hold every kernel, copy and fill on any
stream with the launch that made it. cockpit/probes/kernel_records.py attributes them to the
calls and says what escaped: a call that leaves work on another stream its caller's stream does
not wait for, launches it from another thread, or after it returned, is refused in one line
naming that; work on another stream or thread that the timer does wait for is named and timed
whole. A torch whose profiler cannot record the GPU says so: the audit did not run, in the log."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

import torch

from cockpit.probes import guarded, guards_identity
from cockpit.probes.device_hold import Hold
from cockpit.probes.kernel_records import (
    API,
    CALL_MARK,
    Escapes,
    GpuRecord,
    escape_line,
    escape_note,
    escapes,
)
from cockpit.probes.workload.caught import BenchCaught
from cockpit.workload.result_wire import RecordsJson, TimingCell

AUDIT_CALLS = 8
MARK = "cockpit.mark"


@dataclass(frozen=True)
class Audit:
    found: Escapes
    timer_us: float
    """The CUDA events' time per audited call."""
    refusal: str | None
    note: str | None

    def as_json(self) -> RecordsJson:
        return {"kernels_per_call": round(self.found.kernels_per_call(), 2),
                "busy_us": round(self.found.busy_us_per_call(), 3), "timer_us": round(self.timer_us, 3),
                "streams": [*self.found.other_streams], "names": [*self.found.names[:4]]}


@dataclass(frozen=True)
class Recorded:
    """The audited calls' records, the caller's thread and stream, and the timer's time per call."""

    records: list[GpuRecord]
    caller: int
    stream: int | None
    timer_us: float


def record(run: Callable[[int], object], sets: int, hold: Hold) -> Recorded:
    """`AUDIT_CALLS` calls of run(k), back to back behind a spin, between two events, under the profiler."""
    from torch.profiler import ProfilerActivity, profile, record_function

    caller = threading.get_native_id()
    marker = torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function(MARK):
            marker.fill_(0)  # a kernel on the caller's stream: the records' name for that stream
        if hold.works:
            hold.start(20.0)  # the calls queue behind a spin: the events time the device, not the host
        start.record()
        for i in range(AUDIT_CALLS):
            with record_function(f"{CALL_MARK}{i}"):
                run(i % sets)
        end.record()
        torch.cuda.synchronize()
    records = _activities(prof)
    return Recorded(records, caller, _caller_stream(records, caller),
                    start.elapsed_time(end) * 1000 / AUDIT_CALLS)


def audit(run: Callable[[int], object], sets: int, hold: Hold, config: str = "") -> Audit | str:
    """The audit of `AUDIT_CALLS` calls; a line saying why not when the profiler records no GPU work."""
    if not torch.cuda.is_available():
        return "no CUDA device: no kernel-records audit"
    seen = record(run, sets, hold)
    if seen.stream is None:
        return "the profiler recorded no GPU work (a torch without CUPTI?): no kernel-records audit"
    found = escapes(seen.records, seen.caller, seen.stream)
    return Audit(found, seen.timer_us, escape_line(found, seen.timer_us, config), escape_note(found))


def _activities(prof: object) -> list[GpuRecord]:
    out: list[GpuRecord] = []
    for e in prof.profiler.kineto_results.events():  # type: ignore[attr-defined]
        on_gpu = str(e.device_type()).endswith("CUDA")
        out.append(GpuRecord(e.name(), on_gpu, int(e.device_resource_id()), int(e.correlation_id()),
                            int(e.start_ns()), int(e.duration_ns())))
    return out


def _caller_stream(records: list[GpuRecord], caller: int) -> int | None:
    """The stream of the marker's kernel, launched inside the MARK range on the caller's thread."""
    mark = next((a for a in records if not a.on_gpu and a.name == MARK and a.lane == caller), None)
    if mark is None:
        return None
    links = {a.link for a in records if not a.on_gpu and a.name.startswith(API)
             and mark.start_ns <= a.start_ns <= mark.end_ns}
    return next((a.lane for a in records if a.on_gpu and a.link in links), None)


def audited(impl: str, config: str, fn: Callable[[int], object], sets: int, hold: Hold,
             say: Callable[[str], None]) -> RecordsJson:
    """The kernel-records audit of one candidate (probes/workload/escapes.py): work that escapes the
    timer ends the bench with its line (`BenchCaught`)."""
    started = time.perf_counter()
    found = audit(fn, sets, hold, config)
    if isinstance(found, str):
        say(f"  {impl}: {found}")
        return {"error": found}
    if found.refusal is not None:
        raise BenchCaught(config, impl, "kernel-records", found.refusal)
    if found.note is not None:
        say(f"  {impl}: {found.note}")
    return {**found.as_json(), "audit_s": round(time.perf_counter() - started, 3)}


def audit_candidates(runs: Mapping[str, Callable[[int], object]], candidates: Collection[str], config: str,
                     sets: int, hold: Hold, say: Callable[[str], None], mode: str) -> dict[str, RecordsJson]:
    """Every candidate audited in forward mode (unless the guard is off: the references, torch's own,
    are not, nor the backward modes, whose kernels come from autograd's own threads), then the timer
    and the checks held to the probe's snapshot (a patch made in the warm-up calls, or the audit's)."""
    audits = {}
    if mode == "forward" and guarded.on("kernel-records"):
        audits = {impl: audited(impl, config, run, sets, hold, say)
                  for impl, run in runs.items() if impl in candidates}
    found = guards_identity.breach(guards_identity.taken(), f"during the warm-up calls on {config}")
    if found is not None:  # torch's own references patch nothing: a candidate did (the first, of several)
        raise BenchCaught(config, next((i for i in runs if i in candidates), "ours"), *found)
    return audits


def with_records(cells: Mapping[str, TimingCell],
                 records: Mapping[str, RecordsJson]) -> dict[str, TimingCell]:
    """The cells with each audited implementation's records."""
    return {impl: {**cell, "records": records[impl]} if impl in records else cell
            for impl, cell in cells.items()}
