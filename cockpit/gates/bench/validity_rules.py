"""The bench gate's validity verdict: were ours and the baseline measured under the same
conditions, and were those conditions clean? From the probe's NVML samples of the GPU it ran on
(named by UUID) and the span of each timed block.

Suspect when the window was not clean (`telemetry.validity`: a foreign process on that GPU, a
lost GPU, a watch that never saw it busy, a thermal or HW slowdown beyond its share) or when ours
and the baseline (or another required reference) ran at SM clocks further apart than
`clock_difference` that the power cap does not explain (`telemetry.block_clocks`). The power cap
and the clock each implementation ran at are always shown.

A probe that judged each timed block itself (`block_check`, issue 32) re-measured the blocks a
slowdown touched: a slowdown is then a note, with how many blocks were timed again and why, and
what re-measuring cannot fix is pinned to configs where it can be (`gates/bench/blocks.py`: blocks
never clean, a foreign process over their blocks). A verdict suspect of those configs alone is
`configs_only`: the headline and keep/revert decide on the rest. `[thresholds] validity = "strict"`
keeps the older rule: any clock event makes the bench suspect.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cockpit.config import Thresholds
from cockpit.config.validity_rules import ValidityRules
from cockpit.errors import CockpitError
from cockpit.gates.bench.blocks import (
    FOREIGN,
    NEVER_CLEAN,
    Remeasured,
    config_list,
    overlapped,
    remeasured,
    unclean,
    unclean_reason,
)
from cockpit.gates.bench.measured import Measured, read_measured
from cockpit.gates.bench.validity import BenchValidity, remeasured_words
from cockpit.json_fields import JsonObject
from cockpit.telemetry.block_clocks import (
    Block,
    BlockSamples,
    ImplClock,
    compare_clocks,
    config_clocks,
    impl_clocks,
    samples_in_blocks,
)
from cockpit.telemetry.probe_samples import probe_snapshots
from cockpit.telemetry.sample import GpuSample, GpuStatic, Snapshot
from cockpit.telemetry.validity import SLOWDOWNS, Validity, judge_window
from cockpit.telemetry.window_evidence import ClockEvent, ForeignProcess

STRICT_POWER_CAP_HINT = ('this card sits at its power cap under load: validity = "comparable" (the '
                         'default) accepts that and still checks that ours and the baseline ran at '
                         'comparable clocks; or add "power cap" to tolerated_clock_events')


def compared_with(measured: Measured) -> tuple[str, ...]:
    """The references whose clocks must match ours: those the probe says every speedup is stated
    against (the baseline and the other required references), else the baseline alone."""
    if measured.compared is not None:
        return measured.compared
    return (measured.baseline,) if measured.baseline else ()


def probe_blocks(measured: Measured) -> list[Block]:
    """The timed blocks the probe recorded (none from a probe older than block spans)."""
    return [b for row in measured.rows for b in row.blocks]


def judge_probe_window(data: Mapping[str, object], thresholds: Thresholds | None = None) -> dict[str, object]:
    """The verdict on one run's window, JSON-ready (`probe_validity`, as the journal holds it), for
    a reply read elsewhere (the tuner's confirmation)."""
    return probe_validity(read_measured(data), thresholds).to_json()


def probe_validity(measured: Measured, thresholds: Thresholds | None = None) -> BenchValidity:
    """The verdict on one bench run: valid, reasons, notes, the GPU, the power cap, the clock of
    each implementation and of ours against each baseline, and what the watch saw."""
    thresholds = thresholds or Thresholds()
    rules = thresholds.validity_rules()
    gpu = measured.gpu
    seen_gpu: JsonObject = {"gpu": {"index": gpu.index, "uuid": gpu.uuid, "name": gpu.name,
                                    "pci_bus_id": gpu.pci_bus_id}}
    snapshots = probe_snapshots(list(measured.samples), gpu)
    if not snapshots:
        return _unwatched(measured, rules.mode, seen_gpu)
    samples = [snap.samples[0] for snap in snapshots]
    judged = measured.judged_by_block
    window = _judge_probe_window(measured, snapshots, gpu, rules, judged)
    blocks = probe_blocks(measured)
    reasons, notes = list(window.reasons), list(window.notes)
    suspect: dict[str, str] = {}  # config -> what left it out
    scoped = _pin_foreign(window.evidence.foreign, blocks, samples, reasons, notes, suspect)
    again = remeasured(measured.rows) if judged else None
    if judged:
        scoped += _note_unclean(measured, again, reasons, notes, suspect)
    inside = samples_in_blocks(blocks, samples)
    comparisons = _compare_clocks(measured, inside, compared_with(measured), rules, reasons, notes)
    cap = _power_cap(window.evidence.throttle)
    valid = not reasons
    clocks = impl_clocks(inside)
    order = [r.config for r in measured.rows]
    left_out = _in_row_order(suspect, order)
    return BenchValidity(
        valid, _verdict_word(valid, rules.mode),
        window.checked, rules.mode, tuple(reasons), tuple(notes),
        _power_cap_hint(rules.mode, cap),
        cap.fraction if cap else None, cap.seconds if cap else None,
        _median_clocks(clocks),
        config_clocks(inside), evidence=window.evidence,
        remeasured=again.blocks if again else 0, remeasured_why=dict(again.why) if again else {},
        suspect_configs=left_out, suspect_why=tuple(dict.fromkeys(suspect[c] for c in left_out)),
        configs_only=_configs_only(left_out, scoped, len(reasons), order),
        raw={**seen_gpu, "clocks": {impl: c.as_json() for impl, c in clocks.items()},
             "comparisons": comparisons})


def _unwatched(measured: Measured, mode: str, seen_gpu: JsonObject) -> BenchValidity:
    """The verdict when no NVML sample names the GPU the bench ran on: nothing to judge the run by."""
    why = measured.watch_error or "no NVML samples"
    return BenchValidity(False, "unwatched", False, mode, (f"the GPU was not watched ({why})",), raw=seen_gpu)


def _judge_probe_window(measured: Measured, snapshots: list[Snapshot], gpu: GpuStatic,
                        rules: ValidityRules, judged: bool) -> Validity:
    """The watch window of the run on its own GPU, the probe's pid its own; slowdowns the probe
    re-measured block by block do not count against it."""
    started, finished, pid = measured.started, measured.finished, measured.pid
    if started is None or finished is None or pid is None:
        raise CockpitError("the bench result has NVML samples but not the window they watched (started, "
                           "finished, pid): not what the probe writes; run the gate again")
    return judge_window(snapshots, started, finished, own_pids={int(pid)}, rules=rules,
                        gpus={gpu.uuid} if gpu.uuid else None, remeasured=SLOWDOWNS if judged else ())


def _power_cap(throttle: Sequence[ClockEvent]) -> ClockEvent | None:
    """The power-cap clock event the watch saw, if any: it is always shown, and may be tolerated."""
    return next((t for t in throttle if t.reason == "power cap"), None)


def _median_clocks(clocks: Mapping[str, ImplClock]) -> dict[str, float]:
    """Each implementation's median SM clock, for those with any sample inside their blocks."""
    return {impl: c.median_mhz for impl, c in clocks.items() if c.median_mhz is not None}


def _configs_only(left_out: tuple[str, ...], scoped: int, reasons: int, order: list[str]) -> bool:
    """Whether every reason is pinned to some configs and some configs are left clean: the
    headline then decides on the rest."""
    return bool(left_out) and scoped == reasons and len(left_out) < len(set(order))


def _note_unclean(measured: Measured, again: Remeasured | None, reasons: list[str],
                  notes: list[str], suspect: dict[str, str]) -> int:
    """A judged run's re-measured blocks (a note) and the configs never timed clean (a reason that
    leaves them out). Returns how many reasons this pinned to configs (0 or 1)."""
    if again is not None and again.blocks:
        notes.append(remeasured_words(again.blocks, again.why))
    never, others = unclean(measured, {*measured.candidates, *compared_with(measured)})
    notes += others
    if not never:
        return 0
    reasons.append(unclean_reason(never))
    suspect.update({c: NEVER_CLEAN for c in never})
    return 1


def _in_row_order(suspect: Mapping[str, str], order: list[str]) -> tuple[str, ...]:
    """The suspect configs in the order the bench's rows list them (unknown ones last)."""
    return tuple(sorted(suspect, key=lambda c: order.index(c) if c in order else len(order)))


def _verdict_word(valid: bool, mode: str) -> str:
    """The one-word verdict: what a clean run is called depends on the validity mode."""
    if not valid:
        return "suspect"
    return "comparable" if mode == "comparable" else "valid"


def _power_cap_hint(mode: str, cap: ClockEvent | None) -> str | None:
    """The strict mode's hint when a power cap held the clocks down and was not tolerated."""
    if mode == "strict" and cap is not None and not cap.tolerated:
        return STRICT_POWER_CAP_HINT
    return None

def _pin_foreign(foreign: Sequence[ForeignProcess], blocks: Sequence[Block], samples: Sequence[GpuSample],
                 reasons: list[str], notes: list[str], suspect: dict[str, str]) -> int:
    """Each process that is not ours pinned to the configs whose timed blocks it overlapped (its
    reason names them), or moved to the notes when it overlapped none; window-wide, as before,
    when the probe recorded no block spans. Returns how many reasons are now pinned to configs."""
    if not blocks:
        return 0
    pinned = 0
    for process in foreign:
        if process.pid is None:
            continue
        mark = f": pid {process.pid} ("
        at = next((i for i, r in enumerate(reasons) if mark in r), None)
        if at is None:
            continue
        configs = overlapped(blocks, samples, {process.pid})
        if not configs:
            notes.append(reasons.pop(at) + ", outside every timed block (shown, not suspect)")
            continue
        reasons[at] += f", over the timed blocks of {config_list(configs)}"
        pinned += 1
        suspect.update({c: FOREIGN for c in configs if c not in suspect})
    return pinned


def _compare_clocks(measured: Measured, inside: BlockSamples, baselines: tuple[str, ...],
                    rules: ValidityRules, reasons: list[str], notes: list[str]) -> list[dict[str, object]]:
    """Ours against each baseline's clock in the timed blocks: a line in the reasons (suspect) or
    the notes (comparable) for each, and each comparison as the verdict records it."""
    if not inside:
        notes.append("clocks per implementation not recorded (a probe from before timed block spans)")
        return []
    comparisons: list[dict[str, object]] = []
    cap_explains = rules.mode == "comparable" or "power cap" in rules.tolerate
    implemented = {impl for _, impl in inside}
    for baseline in (b for b in baselines if b in implemented):
        c = compare_clocks(inside, baseline, rules.clock_difference, cap_explains)
        line = c.line(rules.clock_difference, measured.label(baseline))
        (notes if c.comparable else reasons).append(line)
        comparisons.append({**c.as_json(), "line": line})
    return comparisons
