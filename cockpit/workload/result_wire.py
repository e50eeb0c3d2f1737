"""What the workload probe writes in its result file (`workload_probe.py MODE --out R.json`), as
types both sides share: the probe (cockpit/probes/workload_probe.py, probes/workload/timing.py,
probes/workload/check.py) builds them, and the bench and correctness gates parse the file into
their typed objects once, where they read it (gates/bench/measured.py, gates/correctness/result.py).

Every file carries its `wire` version; the probes that run by their path with nothing of the
cockpit (env, build, profile, sanitize) write the same number as their own `WIRE`, and every gate
checks it through gates/probe_call.py:of_this_wire. A file without one is from before the key (the recorded
GPU runs under tests/fixtures/gpu/ are): it is wire 1, the shape below, which the key did not change.
A file of another version is one line saying to run the gate again, never a guess at its fields.
Plain Python with nothing of the cockpit but the shared wire types: the probes import it in the
user's Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from cockpit.workload.probe_wire import GpuIdentity, GpuSampleJson
from cockpit.workload.tuned import WinnerJson

WIRE = 1
"""The version of the result files this cockpit's probes write and its gates read."""
WIRE_KEY = "wire"


def wire_of(document: Mapping[str, object]) -> object:
    """The file's wire version as written (1 for a file from before the key)."""
    return document.get(WIRE_KEY, WIRE)


class TimingCell(TypedDict, total=False):
    """One implementation's time on one shape: the median device time per call, its interval, the
    spread, how it was timed, the eager time per call, the blocks re-measured, and the rates."""

    median_ms: float
    ci_ms: list[float]
    p20_ms: float
    p80_ms: float
    samples: int
    method: str
    calls_per_batch: int
    noise: float
    stop: str
    host_ms_per_call: float
    eager_ms: float
    """The median time per call launched straight onto an idle GPU: what eager use pays."""
    host_bound: bool
    """Its eager time is clearly over its device time: the host cannot keep up (a note)."""
    held: bool
    """The device time was taken behind a spin (False: this torch has no spin kernel)."""
    event_ms: float
    """The events' own cost, taken out of every sample (`event_cost_ms`)."""
    expired_holds: int
    remeasured: int
    remeasured_why: dict[str, int]
    clean: bool
    unclean_why: str
    times_ms: list[float]
    records: RecordsJson
    """A candidate's kernel-records audit (probes/workload/escapes.py)."""
    """The samples themselves, when kept (the tuner's intervals)."""
    tflops: float | None
    gbps: float | None


class RecordsJson(TypedDict, total=False):
    """What the kernel-records audit saw of a candidate's calls: its GPU work per call (every
    stream and thread), the busy time of that work, the timer's time of the same calls, the other
    streams it used and its first kernels' names; or why the audit could not run."""

    kernels_per_call: float
    busy_us: float
    timer_us: float
    streams: list[int]
    names: list[str]
    error: str
    audit_s: float
    """What the audit took (the profiler's start and stop included)."""


class CaughtJson(TypedDict):
    """A guard (workload/guards.py) that caught a candidate during the bench, with its line."""

    config: str
    impl: str
    guard: str
    line: str


class BlockSpan(TypedDict):
    """When one timed block ran, in wall-clock seconds, and how many calls it timed."""

    impl: str
    t0: float
    t1: float
    calls: int


class BenchRowJson(TypedDict, total=False):
    """One bench shape in one mode. Open beyond these keys: the shape's axes at the top level too,
    and ours' speedup over each other implementation, `speedup_vs_<id>` with its interval
    `speedup_vs_<id>_ci` ([lo, hi]), whose names follow the workload's implementations."""

    config: str
    shape: dict[str, object]
    dtype: str | None
    flops: float | None
    bytes: float | None
    impl: dict[str, TimingCell]
    blocks: list[BlockSpan]
    method: str
    l2_note: str
    mode: str
    """forward, backward or full; absent in a forward-only workload's rows."""
    check_s: float
    """Seconds spent checking timed outputs on this config (forward rows; untimed, in the budget)."""
    checked: int
    """Timed calls whose output was checked against the oracle on this config."""


class CrashJson(TypedDict):
    """The implementation that raised at one config, and the first line of what it raised."""

    config: str
    impl: str
    error: str


class GradJson(TypedDict):
    """One input's gradient against the oracle's (backward modes)."""

    input: str
    """`input #0 (x)`: its place in the call and its parameter's name."""
    rel_l2: float | None
    max_abs: float | None
    nonfinite: int


class CheckStats(TypedDict, total=False):
    """What one comparison with the oracle found: the numbers, the words of a failure, and, as the
    rounds add them, the repeat's verdict and each gradient's numbers."""

    ok: bool
    rel_l2: float | None
    max_abs: float | None
    tolerance: float | None
    nonfinite: int
    what: str
    rounds: int
    deterministic: bool
    repeat_max_abs: float | None
    mode: str
    mutated: bool
    """Set while a failing round is judged (the call wrote its input); never in a written row."""
    named: bool
    """Set while a failing round is judged (its line already names the cheat); never in a written row."""
    grads: list[GradJson]


class CheckRowJson(CheckStats, total=False):
    """One candidate checked against the oracle on one shape (and, in backward modes, its
    gradients)."""

    config: str
    shape: dict[str, object]
    candidate: str


class ProbeFileJson(TypedDict, total=False):
    """What every mode's file holds: the run, the GPU it ran on and the NVML window of it."""

    wire: int
    mode: str
    workload: str
    source: str
    device: str
    gpu: GpuIdentity | None
    torch: str
    started: float
    finished: float
    pid: int
    tuned: list[WinnerJson]
    gpu_samples: list[GpuSampleJson]
    gpu_watch_error: str | None
    ok: bool
    guards_off: list[str]
    """The guards (workload/guards.py) the mutation test turned off for this run; absent: none."""


class BenchPartJson(TypedDict, total=False):
    """What `bench` adds: every row measured (those before a crash, and the crash), the
    implementations and how they are shown, and which references every speedup is stated against."""

    rows: list[BenchRowJson]
    ok: bool
    ours: str
    candidates: list[str]
    block_check: dict[str, object]
    """The rules each timed block was judged by (analysis/block_validity.py's BlockRules)."""
    baseline: str | None
    labels: dict[str, str]
    compared: list[str]
    modes: list[str]
    crash: CrashJson
    caught: CaughtJson
    """A guard that caught a candidate (a timed output wrong, work the timer did not see): the
    bench ended there."""
    timed_unchecked: str
    """Why the timed outputs were not checked (the workload declares no oracle)."""


class CheckPartJson(TypedDict, total=False):
    """What `correctness` adds: each check made, smallest shape first, up to the first failure."""

    rows: list[CheckRowJson]
    ok: bool
    planned: int
    oracle: str | None
    modes: list[str]
    warnings: list[str]
    """What the checks flag without failing a candidate: a check looser than the op done in a lower
    precision, a candidate that is the baseline itself, a check that could not run."""
