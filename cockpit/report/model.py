"""The end-of-session report as data: what `build.py` reads out of a session folder and what the
Markdown, HTML and JSON writers render. Frozen, plain types only, so it round-trips through
JSON (`jsonio.py`) — all but the fields marked `RENDERED_ONLY`, sentences for REPORT.md and
report.html that report.json leaves out; every text in it has been through
`text.clean_line`/`clean_block`.

Times are unix seconds (UTC when shown); durations are seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cockpit.hardware.peaks import Peak
from cockpit.workload.knob_words import KnobWords

SCHEMA_VERSION = 6
READS = (1, 2, 3, 4, 5, 6)
TIMELINE_MAX = 500
"""Statuses and journaled notes a report lists: the latest (a week's 46,000 auto statuses made a
report no one reads, and the export took seconds); `statuses_total` says how many there were."""
"""Versions `jsonio.loads` reads: 3 added `outcome.workload`, `outcome.baseline` and `outcome.vs`
(null and empty when read from a 1 or 2), 4 the statuses' totals; 2 to 4 carry one reference's
speedup of the first workload's beside `vs`, which 5 dropped (cockpit/before_workloads.py's
`report_outcome` reads it into `vs`); 6 added the outcome's interval and configs, what each decision
was compared with, and the session's last correctness and sanitizer runs (null when read from a 5
or before)."""
RENDERED_ONLY = {"report_json": False}
"""Field metadata: a sentence the Markdown and HTML say that report.json (its schema versioned)
does not carry; read back from JSON it is its default, and reports compare equal without it."""


@dataclass(frozen=True)
class ReferenceSpeedup:
    """Ours against one timed reference of the workload: the geometric mean over the configs."""

    reference: str
    """The reference's id in the bench result ("torch.softmax")."""
    label: str
    """How it is shown ("torch.softmax")."""
    speedup: float | None
    """None where no valid run measured it."""


@dataclass(frozen=True)
class Outcome:
    """The best VALID benchmark of the session (geometric mean over its configs, vs its baseline)."""

    best_speedup: float | None
    level: str | None
    """CRITICAL / HIGH / PARITY / MEDIUM / SUCCESS, as the bench classes it (PARITY: its interval
    reaches 1.0)."""
    run_id: str | None
    valid_runs: int
    suspect_runs: int
    text: str
    workload: str | None = None
    """What the session benchmarked."""
    baseline: str | None = None
    """The label of the reference `best_speedup` is stated against ("torch.softmax")."""
    vs: tuple[ReferenceSpeedup, ...] = ()
    """The best valid run against each timed reference; the baseline first."""
    interval: tuple[float, float] | None = None
    """`best_speedup`'s interval (version 6); None where the bench measured none."""
    configs: int | None = None
    """How many configs `best_speedup` is the geometric mean over (version 6)."""


@dataclass(frozen=True)
class Machine:
    """From the env gate's checks, and the telemetry track for what the probe does not say."""

    gpu: str | None
    gpu_count: int | None
    driver: str | None
    cuda: str | None
    torch: str | None
    nvcc: str | None
    python: str | None
    source: str
    """Where it was read: the env run's id, or "telemetry" when no env gate ran."""


@dataclass(frozen=True)
class PhaseRow:
    name: str
    budget_s: float
    actual_s: float
    overrun_s: float
    progress: str
    """pending, running, paused, done, skipped."""
    visits: int


@dataclass(frozen=True)
class TimedText:
    t: float
    text: str
    auto: bool = False


@dataclass(frozen=True)
class ReportFact:
    label: str
    value: str


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]
    """Per column: right-align it."""


@dataclass(frozen=True)
class GateReport:
    """One gate run, with what its kind of gate has to say (facts, warnings, tables)."""

    run_id: str
    gate: str
    status: str
    summary: str
    phase: str | None
    started_t: float
    duration_s: float | None
    log: str
    """Relative to the workspace."""
    facts: tuple[ReportFact, ...]
    warnings: tuple[str, ...]
    tables: tuple[Table, ...]
    speedup: float | None = None
    valid: bool | None = None


@dataclass(frozen=True)
class KeepDecisionRow:
    t: float
    action: str
    summary: str
    confirmed: bool
    improvement: float | None
    commit: str | None
    after_run: str | None
    """The bench run the decision followed."""
    source: str | None = None
    """"tune" for a tune's keep; None for a bench's (version 6)."""
    interval: tuple[float, float] | None = None
    """The speedup over what it was compared with (1 + improvement)'s interval, where journaled."""
    versus: str | None = None
    """What it was compared with, in words: "the best earlier bench, run 004-bench (2026-11-23 11:17
    UTC, commit abc1234)", "the tuned values before tune-20261123-111122" (version 6)."""


@dataclass(frozen=True)
class CheckRun:
    """The session's last finished run of a check a reviewer asks for (correctness, sanitizer), in
    the gate's own words (version 6)."""

    run_id: str
    status: str
    text: str
    """"all 104/104 configs correct on 3 rounds of fresh inputs, ...; rel L2 tolerance 1e-2; worst
    rel L2 2.3e-03 at ...", "compute-sanitizer memcheck: 0 errors on 3 shapes"."""


@dataclass(frozen=True)
class GpuPhase:
    """One GPU during one phase, from the journal's `gpu_summary` events."""

    phase: str
    gpu: int
    samples: int
    util_mean: float | None
    util_max: float | None
    power_mean_w: float | None
    power_max_w: float | None
    temp_max_c: float | None
    sm_clock_min_mhz: float | None
    throttled: str


@dataclass(frozen=True)
class Series:
    """One GPU's telemetry over the session, column by column (None: not read)."""

    gpu: int
    uuid: str | None
    t: tuple[float, ...]
    util: tuple[float | None, ...]
    power_w: tuple[float | None, ...]
    temp_c: tuple[float | None, ...]
    sm_clock_mhz: tuple[float | None, ...]
    sources: tuple[str, ...]
    """"cockpit" (the TUI's track) and/or gate run ids whose own samples filled gaps."""


@dataclass(frozen=True)
class Span:
    """A stretch of the session for the chart: a phase visit or a gate run."""

    label: str
    start_t: float
    end_t: float
    kind: str
    """"phase", or the gate's status for a gate run."""


@dataclass(frozen=True)
class PatternRef:
    id: int
    title: str
    why: str
    t: float | None
    run_id: str | None = None


@dataclass(frozen=True)
class CompareRow:
    metric: str
    this: str
    previous: str
    change: str


@dataclass(frozen=True)
class Comparison:
    previous_id: str
    previous_objective: str
    rows: tuple[CompareRow, ...]


@dataclass(frozen=True)
class ConfigTime:
    """One implementation on one config."""

    label: str
    ms: float
    low_ms: float | None
    high_ms: float | None
    """Its median's interval where the bench measured one, else its p20-p80 spread."""
    mhz: float | None
    """The median SM clock of its timed blocks, where the validity check kept it."""
    tflops: float | None
    gbps: float | None


@dataclass(frozen=True)
class ConfigRow:
    config: str
    """As the bench named it (with its mode where the bench timed several)."""
    times: tuple[ConfigTime, ...]
    """Ours first, then the baseline, then every other timed reference (declared order)."""
    speedup: float | None
    """Ours over the baseline."""
    interval: tuple[float, float] | None
    dtype: str | None
    flops: float | None
    bytes: float | None
    launch_cost: str
    """Why this config's time is mostly the launch (empty when it is not)."""

    @property
    def ours(self) -> ConfigTime:
        return self.times[0]

    def time_of(self, label: str) -> ConfigTime | None:
        return next((t for t in self.times if t.label == label), None)


@dataclass(frozen=True)
class BenchConfigs:
    run_id: str
    valid: bool
    workload: str
    ours: str
    baseline: str
    labels: tuple[str, ...]
    """Ours, the baseline, then the other timed references: the times' order in every row."""
    gpu: str | None
    peak: Peak | None
    rows: tuple[ConfigRow, ...]
    """In the bench grid's order."""
    interval_kind: str
    """"95 % CI" where the bench measured its intervals, "p20-p80" where it kept the spread only."""
    bytes_model: str | None = None
    """Where the rows' byte counts are the workload's model and not the run's own (`byte_model.py`),
    the sentence that says so; None where the run stored them (or no row has any)."""

    def worst_first(self) -> tuple[ConfigRow, ...]:
        """By ours' speedup over the baseline, slowest first; configs without one last."""
        return tuple(sorted(self.rows, key=lambda r: (r.speedup is None, r.speedup or 0.0)))

    @property
    def has_roofline(self) -> bool:
        return any(r.flops and r.bytes for r in self.rows)


@dataclass(frozen=True)
class Report:
    schema_version: int
    session: str
    objective: str
    template: str
    started_t: float
    ended_t: float | None
    as_of_t: float
    """When the report was taken (the end, for an ended session)."""
    duration_s: float
    """Working time: pauses excluded."""
    wall_s: float
    gpu_cost_per_hour: float
    cost: float
    outcome: Outcome
    machine: Machine | None
    phases: tuple[PhaseRow, ...]
    statuses: tuple[TimedText, ...]
    gates: tuple[GateReport, ...]
    decisions: tuple[KeepDecisionRow, ...]
    gpu_phases: tuple[GpuPhase, ...]
    telemetry: tuple[Series, ...]
    spans: tuple[Span, ...]
    notes: str | None
    """SESSION.md as the engineer left it (None when missing)."""
    journal_notes: tuple[TimedText, ...]
    patterns_applied: tuple[PatternRef, ...]
    patterns_created: tuple[PatternRef, ...]
    repeated_mistakes: tuple[PatternRef, ...]
    comparison: Comparison | None
    problems: tuple[str, ...]
    """What could not be read (torn journal lines, missing files), one line each."""
    statuses_total: int = 0
    """Statuses the journal holds; `statuses` lists the latest TIMELINE_MAX (version 4)."""
    journal_notes_total: int = 0
    """Notes the journal holds; `journal_notes` lists the latest TIMELINE_MAX (version 4)."""
    correctness: CheckRun | None = None
    """The last finished correctness run; None: none ran in this session (version 6)."""
    sanitizer: CheckRun | None = None
    """The last finished sanitizer run; None: none ran in this session (version 6)."""
    gpu_phases_note: str | None = field(default=None, compare=False, metadata=RENDERED_ONLY)
    """Why `gpu_phases` is empty, in one sentence (None when it is not, or read from JSON)."""
    configs: BenchConfigs | None = field(default=None, compare=False, metadata=RENDERED_ONLY)
    """The bench run the charts and the per-config table show (`configs.py`); its rows are in
    the gates' tables of report.json, and in the run's own result file."""
    decision_words: KnobWords | None = field(default=None, compare=False, metadata=RENDERED_ONLY)
    """The words the last decision's workload gave its knobs (a tune journals them with its
    decision): the opening's decision line spells the kept setting in them. None: the tune
    journaled none (or read from JSON), and the setting reads as written."""
