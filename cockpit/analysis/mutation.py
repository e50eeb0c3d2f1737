"""The cheat catalogue's mutation test, read (workloads/cheats/, bench/cheat_catalogue.py): each
planted cheat goes through its gate with every guard on, then with each guard of that gate off in
turn; this module says what the runs show. A guard whose removal lets no cheat through is a guard
no cheat needs (or a cheat missing from the catalogue); a cheat still caught with its own guard off
was caught by luck (another check's side effect, which a change to that check would lose); a
cheat that passes with every guard on, or fails with another line than its own, is a hole.

Pure: the runs come in as plain values (the runner's JSON), the constants of a cheat's module are
read from its source text without importing it (importing a cheat runs it)."""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["fail", "pass", "could not run"]
HONEST = "honest"
"""The honest twin's module name: it must pass every gate with every guard on."""
DEFEATED_IN_TESTS: dict[str, str] = {
    "shifting-pool":
        "tests/test_timed_outputs.py::test_without_the_shifting_pool_a_result_kept_per_pointer_passes",
    "poisoned-trial-outputs":
        "tests/test_timed_outputs.py::test_a_configuration_that_writes_nothing_fails_its_check_and_its_timed_trial",
}
"""Guards whose cheat is defeated rather than caught in a gate's verdict, each shown by the test
that removes it: with the shifting pool a result kept per input pointer is recomputed or wrong on
a later checked call (its time is the kernel's); with each tune trial's own poisoned outputs a
configuration that writes nothing cannot read another's answer. A planted workload cannot show
them as a line of its own, so the catalogue's table names the test instead."""


@dataclass(frozen=True)
class Cheat:
    """One planted cheat: the gate that must stop it, the guard that must, the line it fails with."""

    name: str
    gate: str
    guard: str
    expect: str
    cpu_ok: bool
    also: tuple[str, ...] = ()
    """Other guards that catch it too, by design (defence in depth, not luck): its own-guard-off
    run turns them off with its guard."""

    @property
    def own_off(self) -> str:
        """What its own-guard-off run turns off: its guard, with the ones it declares `also`."""
        return ",".join((self.guard, *self.also))


@dataclass(frozen=True)
class Run:
    """One cheat through one gate, with one guard off (None: every guard on)."""

    cheat: str
    gate: str
    off: str | None
    verdict: Verdict
    lines: tuple[str, ...] = ()

    @property
    def caught(self) -> bool:
        return self.verdict == "fail"

    def says(self, expect: str) -> bool:
        return any(expect in line for line in self.lines)


@dataclass(frozen=True)
class Mutation:
    """What the runs show."""

    passes_without: dict[str, list[str]]
    """guard -> the cheats caught with every guard on that pass with it off (only guards turned
    off in these runs)."""
    unneeded: list[str]
    """Guards turned off with no cheat passing."""
    unplanted: list[str]
    """Guards no cheat names as its own."""
    own_line: dict[str, bool]
    """cheat -> caught with every guard on, with its EXPECT line."""
    escaped: list[str]
    """Cheats that pass with every guard on."""
    other_line: dict[str, str]
    """cheat -> the first line it was caught with, when its EXPECT line is not among them."""
    lucky: list[str]
    """Cheats caught with their own guard off."""
    honest_failed: dict[str, str] = field(default_factory=dict)
    """gate -> the honest twin's first line there, when it failed."""
    not_run: list[str] = field(default_factory=list)
    """'cheat (gate, off)': runs that could not run."""


def cheat_of(name: str, source: str) -> Cheat:
    """A cheat's declaration from its module's source: GATE, GUARD, EXPECT (str) and CPU_OK (bool)."""
    found: dict[str, Any] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            key = node.targets[0].id
            if key in ("GATE", "GUARD", "EXPECT", "CPU_OK", "ALSO"):
                try:
                    found[key] = ast.literal_eval(node.value)
                except ValueError:
                    raise ValueError(f"{name}: {key} is not a plain value") from None
    missing = [k for k in ("GATE", "GUARD", "EXPECT") if not isinstance(found.get(k), str)]
    if missing:
        raise ValueError(f"{name}: no {', '.join(missing)} = \"...\" at module level (every cheat names "
                         "its gate, its guard and a substring of its failing line)")
    also = found.get("ALSO", ())
    if not isinstance(also, tuple) or not all(isinstance(g, str) for g in also):
        raise ValueError(f"{name}: ALSO is not a tuple of guard names")
    return Cheat(name, found["GATE"], found["GUARD"], found["EXPECT"], found.get("CPU_OK") is True, also)


def mutation(cheats: Sequence[Cheat], guards: Mapping[str, str], runs: Sequence[Run],
             planted: Collection[str] | None = None) -> Mutation:
    """Read the runs of `cheats` (and of the honest twin) against `guards` (name -> gate);
    `planted`: the guards the whole catalogue names (default: those `cheats` name)."""
    by = {(r.cheat, r.gate, r.off): r for r in runs}
    tried = _tried(guards, runs)
    caught = [c for c in cheats if _caught(by.get((c.name, c.gate, None)))]
    passes_without = {g: [c.name for c in caught if _passes_without(c, g, by)] for g in tried}
    named = set(planted) if planted is not None else _named(cheats)
    return Mutation(passes_without=passes_without, unneeded=_unneeded(tried, passes_without),
                    unplanted=_unplanted(guards, named), **_each_cheat(cheats, by),
                    honest_failed=_honest_failed(runs), not_run=_not_run(runs))


def _tried(guards: Mapping[str, str], runs: Sequence[Run]) -> list[str]:
    """The guards some run turned off (alone, or with others a cheat names)."""
    off = {g for r in runs if r.off is not None for g in r.off.split(",")}
    return [g for g in guards if g in off]


def _named(cheats: Sequence[Cheat]) -> set[str]:
    return {g for c in cheats for g in (c.guard, *c.also)}


def _unneeded(tried: Sequence[str], passes_without: Mapping[str, list[str]]) -> list[str]:
    """Guards turned off with no cheat passing (the ones whose cheat a test shows defeated aside)."""
    return [g for g in tried if not passes_without[g] and g not in DEFEATED_IN_TESTS]


def _unplanted(guards: Mapping[str, str], named: set[str]) -> list[str]:
    return [g for g in guards if g not in named and g not in DEFEATED_IN_TESTS]


def _passes_without(c: Cheat, guard: str, by: Mapping[tuple[str, str, str | None], Run]) -> bool:
    """Whether cheat `c` passes with `guard` off: alone, or (a guard it names) with the others it
    names, since those catch it too by design."""
    if _passed(by.get((c.name, c.gate, guard))):
        return True
    return bool(c.also) and guard in (c.guard, *c.also) and _passed(by.get((c.name, c.gate, c.own_off)))


def _honest_failed(runs: Sequence[Run]) -> dict[str, str]:
    return {r.gate: _first(r) for r in runs if r.cheat == HONEST and r.off is None and r.caught}


def _not_run(runs: Sequence[Run]) -> list[str]:
    return [f"{r.cheat} ({r.gate}, {'all on' if r.off is None else r.off + ' off'})"
            for r in runs if r.verdict == "could not run"]


def _each_cheat(cheats: Sequence[Cheat], by: Mapping[tuple[str, str, str | None], Run]) -> dict[str, Any]:
    """Each cheat with every guard on (its own line or another, or a pass) and with its own guard off."""
    own_line: dict[str, bool] = {}
    other_line: dict[str, str] = {}
    escaped: list[str] = []
    lucky: list[str] = []
    for c in cheats:
        on = by.get((c.name, c.gate, None))
        own_line[c.name] = on is not None and on.caught and on.says(c.expect)
        if _passed(on):
            escaped.append(c.name)
        elif on is not None and on.caught and not own_line[c.name]:
            other_line[c.name] = _first(on)
        if _caught(on) and _caught(by.get((c.name, c.gate, c.own_off))):
            lucky.append(c.name)
    return {"own_line": own_line, "other_line": other_line, "escaped": escaped, "lucky": lucky}


def _first(run: Run) -> str:
    return run.lines[0] if run.lines else "(no line)"


def _passed(run: Run | None) -> bool:
    return run is not None and run.verdict == "pass"


def _caught(run: Run | None) -> bool:
    return run is not None and run.caught


def table_lines(m: Mutation, cheats: Sequence[Cheat], guards: Mapping[str, str]) -> list[str]:
    """The mutation table (rows: guards; what passes with each off), each cheat's own line, the flags."""
    width = max((len(g) for g in guards), default=5) + 2
    lines = ["each guard turned off in turn, and the planted cheats that then pass:"]
    for g, gate in guards.items():
        passing = m.passes_without.get(g)
        said = (f"its cheat defeated, not caught: shown by {DEFEATED_IN_TESTS[g]}" if g in DEFEATED_IN_TESTS
                else "(not turned off in these runs)" if passing is None
                else ", ".join(passing) if passing else "none: no cheat needs it")
        lines.append(f"  {g:<{width}}{gate:<13}{said}")
    cw = max((len(c.name) for c in cheats), default=5) + 2
    lines.append("each cheat with every guard on: caught with its own line?")
    for c in cheats:
        mark = "yes" if m.own_line.get(c.name) else "NO"
        lines.append(f"  {c.name:<{cw}}{c.gate:<13}{c.guard:<{width}}{mark}  ({c.expect!r})")
    return lines + flag_lines(m)


def flag_lines(m: Mutation) -> list[str]:
    """One line per thing the catalogue says is wrong; none when it is whole."""
    flags = [f"a guard no cheat needs: {g} (turned off, every cheat is still caught)" for g in m.unneeded]
    flags += [f"a guard no cheat plants: {g} (no cheat in workloads/cheats/ names it)" for g in m.unplanted]
    flags += [f"a cheat caught without its guard (by luck): {c}" for c in m.lucky]
    flags += [f"a cheat passing with every guard on: {c}" for c in m.escaped]
    flags += [f"a cheat caught, but not with its line: {c}: {line}" for c, line in m.other_line.items()]
    flags += [f"the honest twin fails the {gate} gate: {line}" for gate, line in m.honest_failed.items()]
    flags += [f"could not run: {what}" for what in m.not_run]
    return flags


def runs_json(runs: Sequence[Run]) -> list[dict[str, object]]:
    return [{"cheat": r.cheat, "gate": r.gate, "off": r.off, "verdict": r.verdict, "lines": list(r.lines)}
            for r in runs]


def runs_from_json(rows: Sequence[Mapping[str, Any]]) -> list[Run]:
    """Runs as the runner's recording holds them (its `runs`)."""
    return [Run(str(r["cheat"]), str(r["gate"]), r.get("off"), r["verdict"], tuple(r.get("lines") or ()))
            for r in rows]
