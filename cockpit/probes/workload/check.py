"""Correctness of every candidate against the workload's oracle, shape by shape, smallest first,
on `ROUNDS` rounds of fresh inputs: new seeds each round; round 2 writes its values into the very
tensors round 1 passed, so a result kept per pointer is stale, and round 3 makes new tensors, so
one kept per shape (or anything else) is. A cache of that kind held #1 on a live GPU MODE
leaderboard in 2026; what a failing later round kept is found by probing (probes/workload/kept.py).
Each candidate gets its own copy of the inputs; what one call is held to is probes/workload/calls.py's.
The oracle's answer is cloned and the buffers it leaves (its output, its copies of the inputs)
filled with a signed NaN before they are freed, so a candidate returning `torch.empty_like(...)`
that lands on them returns NaN, not the oracle's answer. A candidate that fails is named and checked
no further; the others go on, so every failing candidate is reported. A failure at a test-grid
shape of a candidate right at the bench grid's shapes is said as shapes hard-coded for the bench.

Besides failures, the checks flag (`notes`): a workload check that passes the op done wholly in
the next lower precision (probes/workload/downcast.py), and a candidate that is the baseline by
its bits and its kernels (probes/workload/same_kernels.py), on the smallest shape.

A workload with backward modes gets a second check per shape and candidate, its row named
"<shape> backward" (probes/workload/grad_round.py). Each check runs while its guard is on
(cockpit/workload/guards.py, probes/guarded.py)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cockpit.probes import guards_identity
from cockpit.probes.copies import clone
from cockpit.probes.guarded import on
from cockpit.probes.workload.calls import (
    CallSite,
    KnobsFor,
    call,
    failed,
    judge_call,
    oracle_answer,
    words,
)
from cockpit.probes.workload.compare import refill
from cockpit.probes.workload.downcast import coarse_line, downcast_or_why, loose_line, lower_of, named_line
from cockpit.probes.workload.grad_round import GradRound
from cockpit.probes.workload.kept import fingerprint, kept_line
from cockpit.probes.workload.same_kernels import reference_line
from cockpit.workload.result_wire import CheckRowJson, CheckStats
from cockpit.workload.spec import Reference, Shape, Workload

__all__ = ["ROUNDS", "ROUND_SEED", "KnobsFor", "call", "checked_shapes", "correctness"]

Say = Callable[[str], None]
ROUNDS = 3
"""Rounds of fresh inputs per shape."""
ROUND_SEED = 100_003
"""Seeds of round k: the shape's seed + k x this (round 1 keeps the seed earlier versions used)."""


def checked_shapes(w: Workload) -> list[Shape]:
    """What correctness checks: the correctness grid, or with the test-grid guard off only the bench
    grid's smallest and largest shapes."""
    if on("test-grid") or not w.bench_grid:
        return w.correctness_grid()
    ordered = w.smallest_first(w.bench_grid)
    ends = [ordered[0], ordered[-1]]
    return ends if w.shape_name(ends[0]) != w.shape_name(ends[1]) else ends[:1]


def correctness(w: Workload, shapes: Sequence[Mapping[str, Any]], knobs: KnobsFor, say: Say,
                rounds: int = ROUNDS, notes: list[str] | None = None,
                identity: guards_identity.Identity | None = None) -> tuple[list[CheckRowJson], bool]:
    """Every candidate on every shape, smallest first, each on `rounds` rounds of fresh inputs; one
    row per shape and candidate (its worst round's numbers, or the failing round's, and whether a
    repeat on the same inputs gave the same bits). A candidate stops at its first failure; `notes`
    gets the warnings. `identity`: the snapshot of the timer and the checks (the probe's, taken
    before the workload was imported; default: one taken now, which sees what the calls replace)."""
    oracle = w.oracle
    if oracle is None:
        raise ValueError(f"workload {w.name!r} declares no oracle: add Reference(..., oracle=True)")
    held = identity or guards_identity.snapshot()
    run = _Run(w, oracle, w.smallest_first(shapes), knobs, say, held, notes if notes is not None else [])
    return run.go(rounds if on("fresh-rounds") else 1)


@dataclass
class _Run:
    """The whole check: the rows so far, the candidates that failed (and their row), the warnings."""

    w: Workload
    oracle: Reference
    ordered: list[Shape]
    knobs: KnobsFor
    say: Say
    identity: guards_identity.Identity
    notes: list[str]
    rows: list[CheckRowJson] = field(default_factory=list)
    failed: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """candidate -> the index of its failing row, and whether its line already names what it did."""

    def go(self, rounds: int) -> tuple[list[CheckRowJson], bool]:
        imported = guards_identity.intact(self.identity, "when the workload was imported")
        for index, shape in enumerate(self.ordered):
            live = [c for c in self.w.candidates if c not in self.failed]
            if not live:
                break
            check = _ShapeCheck(self, shape, index)
            if imported is not None:
                for cand in live:
                    check.fail(cand, failed(imported))
                break
            for r in range(rounds):
                check.round(r, rounds, live)
            check.emit_passed(rounds, live)
        if on("test-grid"):
            self._hard_coded()
        return self.rows, not self.failed

    def site(self, shape: Shape) -> CallSite:
        dtype = shape.get(self.w.dtype_key) if self.w.dtype_key else None
        return CallSite(self.w, shape, dtype, self.knobs, self.identity)

    def other(self, shape: Shape) -> CallSite | None:
        """Another shape of the grid to call in between (telling a per-shape cache from a replay)."""
        name = self.w.shape_name(shape)
        return next((self.site(s) for s in self.ordered if self.w.shape_name(s) != name), None)

    def reference(self, inputs: Any) -> Any:
        return oracle_answer(self.oracle, inputs)

    def _hard_coded(self) -> None:
        """A candidate that failed at a test-grid shape and is right, in a round, at every bench-grid
        shape checked: its failing row says shapes hard-coded for the bench."""
        bench = {self.w.shape_name(s) for s in self.w.bench_grid}
        timed = [s for s in self.ordered if self.w.shape_name(s) in bench]
        for cand, (at, named) in self.failed.items():
            row = self.rows[at]
            if named or not timed or row["config"] in bench or row.get("mode") == "backward":
                continue
            fn = self.w.candidates[cand]
            if all(self._right_at(fn, s) for s in timed):
                names = ", ".join(self.w.shape_name(s) for s in timed)
                row["what"] = (f"{words(row)}, yet right at the bench grid's shapes ({names}): shapes "
                               "hard-coded for the bench?")
                self.say(f"FAIL [{cand}] {row['config']}: {row['what']}")

    def _right_at(self, fn: Callable[..., Any], shape: Shape) -> bool:
        inputs = self.w.make_inputs(1000 + ROUND_SEED * ROUNDS, **shape)
        ref = self.reference(inputs)
        stats, _ = judge_call(self.site(shape), fn, clone(inputs), inputs, ref, repeat=False)
        return bool(stats["ok"])


@dataclass
class _ShapeCheck:
    """One shape's rounds: each candidate's copy of the round before (round 2 refills it), its
    answers (fingerprints), its worst passing round and gradients, emitted once every round passed."""

    run: _Run
    shape: Shape
    index: int
    passed: dict[str, CheckStats] = field(default_factory=dict)
    passed_grads: dict[str, CheckStats] = field(default_factory=dict)
    given: dict[str, Sequence[Any]] = field(default_factory=dict)
    """Each candidate's copy of the last round's inputs."""
    answers: dict[str, dict[int, Hashable]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.w = self.run.w
        self.name = self.w.shape_name(self.shape)
        self.site = self.run.site(self.shape)

    def round(self, r: int, rounds: int, live: Sequence[str]) -> None:
        """Round `r` of every candidate still passing (and its gradients)."""
        w = self.w
        seed = 1000 + self.index + ROUND_SEED * r
        inputs = w.make_inputs(seed, **self.shape)
        low = _Lowered(self, inputs, lower_of(inputs) if on("precision-floor") else None)
        first = low.get() if r == 0 else None  # before the oracle: the buffers freed last are the oracle's
        mines = {cand: self._copy(cand, inputs, r) for cand in live if cand not in self.run.failed}
        ref = self.run.reference(inputs)  # last: a candidate's first allocation can land on its freed buffer
        loose = None
        if first is not None and low.lower is not None:
            loose = loose_line(w, first, ref, low.lower, self.site.dtype, self.shape, inputs)
            self.loose(loose)
        grads = GradRound(w, inputs, ref, seed) if w.grad_modes else None
        for cand in live:
            if cand in self.run.failed:
                continue
            fn = w.candidates[cand]
            stats, result = judge_call(self.site, fn, mines[cand], inputs, ref, repeat=r == 0)
            if not stats["ok"]:
                self._failed(cand, r, rounds, stats, result, low)
                continue
            if loose is not None and self._coarse(cand, stats, first, ref, low.lower):
                continue
            if r < rounds - 1:
                self.answers.setdefault(cand, {})[r] = fingerprint(result)
            self.passed[cand] = _worst_pass(self.passed.get(cand), stats)
            if r == 0 and self.index == 0 and on("is-reference") and self.w.baseline is not None:
                self.loose(reference_line(self.site, cand, fn, self.w.baseline, inputs))
            if grads is not None:
                self._grads(cand, fn, grads, r)

    def _coarse(self, cand: str, stats: CheckStats, low: Any, ref: Any, lower: Any) -> bool:
        """Under a check that passes the op done in the lower precision: a passing candidate whose
        error is as large as that op's fails, named (downcast.coarse_line)."""
        line = coarse_line(stats["rel_l2"], low, ref, lower)
        if line is not None:
            self.fail(cand, {**stats, "ok": False, "what": line})
        return line is not None

    def _grads(self, cand: str, fn: Callable[..., Any], grads: GradRound, r: int) -> None:
        gstats = grads.check(fn, self.site)
        if not gstats["ok"]:
            self.fail(cand, {**gstats, "rounds": r + 1, "mode": "backward"}, "backward")
            return
        before = self.passed_grads.get(cand)
        if before is None or (gstats["rel_l2"] or 0) > (before["rel_l2"] or 0):
            self.passed_grads[cand] = gstats

    def _failed(self, cand: str, r: int, rounds: int, stats: CheckStats, result: Any, low: _Lowered) -> None:
        """A failing round's row: what a later round's answer kept, a lower precision's answer, or
        the failure as judged."""
        named = stats.pop("named", False) | stats.pop("mutated", False)
        if not named and r > 0 and result is not None:
            kept = kept_line(self.site, self.run.oracle, self.w.candidates[cand], r, result,
                             self.answers.get(cand, {}), self.run.other(self.shape))
            if kept is not None:
                stats["what"], named = kept, True
        answer = low.get() if not named and result is not None else None
        if answer is not None and low.lower is not None:
            lowered = named_line(result, answer, stats.get("tolerance"), low.lower)
            if lowered is not None:
                stats["what"], named = lowered, True
        if not named and r > 0:
            stats["what"] = (f"fails on fresh inputs in round {r + 1} of {rounds} after passing round 1 "
                             f"({words(stats)}): a result kept from an earlier call?")
        self.fail(cand, {**stats, "rounds": r + 1}, named=named)

    def fail(self, cand: str, stats: CheckStats, mode: str = "forward", named: bool = True) -> None:
        """The candidate's failing row: it is checked no further."""
        self.run.failed[cand] = (len(self.run.rows), named)
        stats.pop("named", None)
        stats.pop("mutated", None)
        self._emit(cand, self.w.mode_name(self.shape, mode), {"rounds": 1, **stats})

    def loose(self, line: str | None) -> None:
        """A warning, said once: the same words at another shape (only its numbers differ) go to the log."""
        if line is None or line in self.run.notes:
            return
        self.run.say(f"WARNING {line}")
        words = line.split(" (rel L2 ")[0]
        if not any(note.split(" (rel L2 ")[0] == words for note in self.run.notes):
            self.run.notes.append(line)

    def emit_passed(self, rounds: int, live: Sequence[str]) -> None:
        """Every candidate's worst passing round, then its worst passing gradients."""
        ok = [c for c in live if c not in self.run.failed]
        for cand in ok:
            self._emit(cand, self.name, {**self.passed[cand], "rounds": rounds})
        for cand in ok:
            if cand in self.passed_grads:
                self._emit(cand, self.w.mode_name(self.shape, "backward"),
                           {**self.passed_grads[cand], "rounds": rounds, "mode": "backward"})

    def _copy(self, cand: str, inputs: Any, r: int) -> Any:
        """The candidate's copy of this round's inputs: in round 2 the very tensors it was given in
        round 1, refilled with the new values (a result kept per pointer is then stale)."""
        same = self.given.get(cand) if r == 1 else None
        mine = same if same is not None and refill(same, inputs) else clone(inputs)
        self.given[cand] = mine
        return mine

    def _emit(self, cand: str, name: str, stats: CheckStats) -> None:
        row: CheckRowJson = {"config": name, "shape": dict(self.shape), "candidate": cand, **stats}
        self.run.rows.append(row)
        label = "" if len(self.w.candidates) == 1 else f"[{cand}] "
        self.run.say(f"{'PASS' if row['ok'] else 'FAIL'} [{self.index + 1}/{len(self.run.ordered)}] "
                     f"{label}{name:<36} {_numbers(row)}")


@dataclass
class _Lowered:
    """The op done in the next lower precision on one round's inputs, made once when first needed
    (None: no lower precision, the guard off, or the oracle could not: then said as a warning)."""

    check: _ShapeCheck
    inputs: Any
    lower: Any
    made: bool = False
    value: Any = None

    def get(self) -> Any:
        if self.lower is not None and not self.made:
            self.made = True
            self.value, why = downcast_or_why(self.check.run.oracle, self.inputs, self.lower)
            self.check.loose(why)
        return self.value


def _worst_pass(before: CheckStats | None, stats: CheckStats) -> CheckStats:
    """The worse of a candidate's passing rounds by rel L2, keeping round 1's repeat verdict."""
    if before is None:
        return stats
    if (stats["rel_l2"] or 0) <= (before["rel_l2"] or 0):
        return before
    worse = stats.copy()
    if "deterministic" in before:
        worse["deterministic"] = before["deterministic"]
    if "repeat_max_abs" in before:
        worse["repeat_max_abs"] = before["repeat_max_abs"]
    return worse


def _numbers(row: CheckRowJson) -> str:
    if row["rel_l2"] is None:
        return str(row["what"])
    return (f"max|Δ| {row['max_abs']:.3e}  rel L2 {row['rel_l2']:.3e}  non-finite {row['nonfinite']}"
            + (f"  {row['what']}" if row["what"] else ""))
