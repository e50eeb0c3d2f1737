"""Where a search starts: the configurations measured first, before TPE takes over.

A search that starts from one known configuration rarely finds a better one by spreading its first
trials over the whole space: a Latin hypercube spends them far from the current values, where most
configurations are slow, and a short budget ends before TPE comes back. Measured on an H100 from the
L4's D=128 tile of the example kernel (BN32): 22 timed trials in 3 minutes never tried BN64, the tile one step
away that is 1.20x faster. So the seed is, in order:

1. the current configuration (what every trial is judged against);
2. the group's winners kept on other GPU architectures, where this GPU's rule allows them: an
   H100's winner is a good first guess on an H200, an L4's on an RTX 4090;
3. the current configuration's neighbours, one knob one step away (or, where the rule allows no
   such single step, the nearest allowed configuration with that step), the moves the session's
   latest profile asks for first (each knob's `hints`), then every knob in the workload's order;
4. a Latin hypercube over the knobs' value indices for the rest, each point moved to the nearest
   allowed configuration, so the search still sees the whole space.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cockpit.tune.space import KnobSetting
from cockpit.tune.study import latin_hypercube

Move = tuple[str, int]
"""A knob and a direction: +1 its next larger value, -1 its next smaller (for a flag, +1 is true)."""

NEIGHBOUR_SHARE = 0.5
"""At most this share of the seed goes to neighbours; the rest still spans the space."""
_LIMITED_BY = re.compile(r"limited by ([a-z ]+?)\s*(?:\(|$)")


def findings(verdict: Mapping[str, Any] | None) -> list[str]:
    """The words of a profile verdict (the profile gate's `kernels[i].verdict`) a knob's hints name:
    its bottleneck, the start of its recommendation, and `limited by X` from its notes."""
    if not verdict:
        return []
    out = [str(verdict.get("bottleneck") or "").lower()]
    recommendation = str(verdict.get("recommendation") or "").lower()
    words = re.findall(r"[a-z0-9-]+", recommendation)
    out += [" ".join(words[:n]) for n in range(1, len(words) + 1)]  # "larger tiles" of "larger tiles: ..."
    out += [f"limited by {m.group(1)}" for n in verdict.get("notes") or ()
            if (m := _LIMITED_BY.search(str(n).lower()))]
    return [f for f in dict.fromkeys(out) if f]


def session_verdict(session_journal: Path, workspace: Path) -> Mapping[str, Any] | None:
    """The verdict of the session's latest finished profile run (its first kernel's); None without one."""
    from cockpit.errors import CockpitError
    from cockpit.session.saved_state import recent_state

    try:
        run = recent_state(session_journal, workspace).last_run("profile", finished=True)
    except CockpitError:
        return None
    result = run.result if run is not None else None
    kernels = result.get("kernels") if isinstance(result, dict) else None
    if not isinstance(kernels, list) or not kernels or not isinstance(kernels[0], dict):
        return None
    verdict = kernels[0].get("verdict")
    return verdict if isinstance(verdict, dict) else None


def profile_moves(hints: Mapping[str, Mapping[str, int]], said: Sequence[str]) -> list[Move]:
    """The knob moves the profile's findings ask for: per finding in the order the verdict gives
    them, each knob whose hints name it. `hints`: knob -> finding -> direction."""
    moves: list[Move] = []
    for finding in said:
        moves += [(knob, d) for knob, by in hints.items() for f, d in by.items() if f == finding]
    return list(dict.fromkeys(moves))


def coords(config: KnobSetting, options: Mapping[str, Sequence[Any]],
           names: Sequence[str]) -> tuple[float, ...]:
    """A configuration as a point of the unit cube: each knob's value index, centred."""
    out = []
    for name, value in zip(names, config, strict=True):
        values = _ordered(options[name])
        out.append((values.index(value) + 0.5) / len(values) if value in values else 0.5)
    return tuple(out)


def nearest(free: Sequence[KnobSetting], point: Sequence[float], options: Mapping[str, Sequence[Any]],
            names: Sequence[str]) -> KnobSetting:
    return min(free, key=lambda c: math.dist(coords(c, options, names), point))


def neighbours(current: KnobSetting, options: Mapping[str, Sequence[Any]], names: Sequence[str],
               feasible: Sequence[KnobSetting], moves: Sequence[Move] = ()) -> list[KnobSetting]:
    """The allowed configurations one step from `current`: the `moves` first, then both steps of
    every knob in order. Where the one-knob step is not allowed, the allowed configuration with that
    knob's stepped value that changes the fewest other knobs (a larger block taking more warps along)."""
    steps = list(moves) + [(n, d) for n in names for d in (+1, -1)]
    out: list[KnobSetting] = []
    for name, direction in dict.fromkeys(steps):
        if name not in names:
            continue
        found = _step(current, names.index(name), direction, options[name], feasible)
        if found is not None and found != current and found not in out:
            out.append(found)
    return out


def _step(current: KnobSetting, i: int, direction: int, values: Sequence[Any],
          feasible: Sequence[KnobSetting]) -> KnobSetting | None:
    ordered = _ordered(values)
    value = current[i]
    if value not in ordered:
        return None
    at = ordered.index(value) + (1 if direction > 0 else -1)
    if isinstance(value, bool):
        wanted: Any = direction > 0
        if wanted == value:
            return None
    elif 0 <= at < len(ordered):
        wanted = ordered[at]
    else:
        return None
    with_it = [c for c in feasible if c[i] == wanted]
    if not with_it:
        return None
    return min(with_it, key=lambda c: sum(a != b for a, b in zip(c, current, strict=True)))


def _ordered(values: Sequence[Any]) -> list[Any]:
    """Numbers in increasing order, flags false first; anything else as declared."""
    if all(isinstance(v, (int, float)) for v in values):
        return sorted(values, key=float)
    return list(values)


def seed_order(feasible: Sequence[KnobSetting], options: Mapping[str, Sequence[Any]], names: Sequence[str],
               current: KnobSetting, n: int, kept_elsewhere: Sequence[KnobSetting] = (),
               moves: Sequence[Move] = (), seed: int = 0) -> tuple[list[KnobSetting], str]:
    """The `n` configurations measured first (the current one first), and how they were chosen."""
    allowed = set(feasible)
    chosen: list[KnobSetting] = [current]
    others = [c for c in dict.fromkeys(kept_elsewhere) if c in allowed and c not in chosen]
    chosen += others[: max(0, n - len(chosen))]
    near = [c for c in neighbours(current, options, names, feasible, moves) if c not in chosen]
    room = min(len(near), max(0, n - len(chosen)), max(1, int(n * NEIGHBOUR_SHARE)))
    chosen += near[:room]
    points, how = latin_hypercube(max(0, n - len(chosen)), len(names), seed)
    for point in points:
        free = [c for c in feasible if c not in chosen]
        if not free:
            break
        chosen.append(nearest(free, point, options, names))
    parts = [f"{len(others[:n - 1])} kept on other archs"] if others else []
    hinted = ", ".join(k + ("+" if d > 0 else "-") for k, d in moves)
    parts.append(f"{room} neighbours" + (f" ({hinted} first, from the profile)" if moves else ""))
    return chosen[:n], f"the current configuration, {', '.join(parts)}, then {how}"
