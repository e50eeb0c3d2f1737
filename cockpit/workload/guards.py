"""The checks that keep a kernel from passing the gates by cheating: one `Guard` per check, named
once here, so the probes that run them, the gates that say their lines, the cheat catalogue
(workloads/cheats/) and its mutation test all mean the same check by the same name.

Each guard is on. `COCKPIT_GUARDS_OFF=name,name` turns guards off for the cheat catalogue's
mutation test (`bench/cheat_catalogue.py`): the probe reads it once, before it imports the
workload (a workload that sets it later changes nothing), and every result it writes lists the
guards that were off, which the gate says in its verdict: a check turned off never passes
silently. A name that is not a guard's is refused in one line.

Plain Python with no torch import: the cockpit's gates read the names and lines without a GPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

OFF_ENV = "COCKPIT_GUARDS_OFF"
"""The environment variable the mutation test sets: a comma-separated list of guard names."""

Gate = Literal["correctness", "bench", "tune"]


@dataclass(frozen=True)
class Guard:
    """One check: its name, the gate that runs it, and the cheat it exists for, in a line."""

    name: str
    gate: Gate
    catches: str


GUARDS: tuple[Guard, ...] = (
    Guard("fresh-rounds", "correctness",
          "a result kept from an earlier call: by pointer, by shape, or the last call's replayed"),
    Guard("inputs-unchanged", "correctness", "an input changed in place"),
    Guard("poisoned-output", "correctness", "an output element never written (stale memory)"),
    Guard("poisoned-reference", "correctness",
          "an output that is the reference's freed buffer (the answer left in memory by the oracle)"),
    Guard("not-constant", "correctness", "a trivial output (all zeros) passed by a loose tolerance"),
    Guard("same-bits-on-repeat", "correctness", "a run-to-run difference (a race)"),
    Guard("output-not-input", "correctness", "an input, or a view of one, returned as the output"),
    Guard("plain-tensor", "correctness", "a lazy or proxy output (a tensor subclass) computed when read"),
    Guard("precision-floor", "correctness",
          "the op done in a lower precision than the workload's (a precision downcast)"),
    Guard("test-grid", "correctness", "shapes hard-coded: right at the bench's shapes only"),
    Guard("ghost-replay", "correctness",
          "an output that does not depend on the candidate's kernel (its fast path never taken)"),
    Guard("is-reference", "correctness", "the baseline itself called as the candidate"),
    Guard("timer-intact", "correctness", "the timer patched (torch.cuda.Event, time.perf_counter, ...)"),
    Guard("evaluator-intact", "correctness", "the cockpit's own checks replaced from the workload"),
    Guard("timed-outputs", "bench", "right when checked, wrong when timed"),
    Guard("shifting-pool", "bench", "a result kept per input pointer while timed"),
    Guard("kernel-records", "bench",
          "work the timer does not see: on another stream, from another thread, after the call returns"),
    Guard("speed-of-light", "bench",
          "a time faster than the card can move the bytes or do the math: a cached or skipped result"),
    Guard("poisoned-trial-outputs", "tune", "a wrong configuration hidden behind a shared output"),
)
BY_NAME: Mapping[str, Guard] = {g.name: g for g in GUARDS}


class UnknownGuard(ValueError):
    """`COCKPIT_GUARDS_OFF` names something that is not a guard."""


def guards_off(environ: Mapping[str, str]) -> frozenset[str]:
    """The guards `environ` turns off (none when the variable is unset or empty)."""
    names = frozenset(n.strip() for n in environ.get(OFF_ENV, "").split(",") if n.strip())
    unknown = sorted(names - set(BY_NAME))
    if unknown:
        raise UnknownGuard(f"{OFF_ENV} names {', '.join(unknown)}, which no check is called; the guards: "
                           f"{', '.join(BY_NAME)}")
    return names


def off_line(off: frozenset[str]) -> str | None:
    """The verdict's line for guards turned off, or None when every guard ran."""
    if not off:
        return None
    return f"checks turned off ({OFF_ENV}): {', '.join(sorted(off))}: this verdict is not a pass"
