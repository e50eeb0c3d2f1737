"""Where a search starts: the configurations measured first, before TPE takes over.

A search that starts from one known configuration rarely finds a better one by spreading its
first trials over the whole space: the Latin hypercube of `study.seed_configurations` spends
them far from the current tile, where most configurations are slow, and a 5-minute budget ends
before TPE comes back. Measured on an H100 from the L4's D=128 tile (BN32): 22 timed trials in
3 minutes never tried BN64, the tile one step away that is 1.20x faster. So the seed is, in order:

1. the current configuration (the reference every trial is judged against);
2. the tiles other GPU architectures kept (tuned_config.h), where this GPU's limits allow them:
   an H100's winner is a good first guess on an H200 or an L40S, an L4's on an RTX 4090;
3. the current configuration's neighbours, one knob one step away, the moves the latest profile
   points at first (`profile_moves`: "larger tiles" -> BN, BM up; registers limiting occupancy
   -> Q from shared memory, more blocks per SM; shared memory limiting it -> smaller tiles, one
   stage; latency -> double buffering), then the rest, BN first (the knob the K/V loop turns on);
4. the Latin hypercube for the rest of the seed, so the search still sees the whole space.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cockpit.config.tune import Value
from cockpit.tune.space import KernelParams
from cockpit.tune.study import seed_configurations

Move = tuple[str, int]
"""A knob and a direction: +1 the next larger value, -1 the next smaller (for booleans, +1 is
true)."""

DEFAULT_ORDER: tuple[str, ...] = ("block_n", "block_m", "warps", "stages", "min_blocks", "q_regs", "o_smem")
NEIGHBOUR_SHARE = 0.5
"""At most this share of the seed goes to neighbours; the rest still spans the space."""

# What the profile gate's verdict names -> the knob moves that answer it, most likely first.
_BY_RECOMMENDATION: tuple[tuple[str, tuple[Move, ...]], ...] = (
    ("larger tiles", (("block_n", +1), ("block_m", +1))),
    ("fewer bytes", (("block_n", +1), ("block_m", +1))),
    ("overlap", (("stages", +1), ("warps", +1))),
)
_BY_LIMITER: tuple[tuple[str, tuple[Move, ...]], ...] = (
    ("registers", (("q_regs", -1), ("min_blocks", +1))),
    ("shared memory", (("block_n", -1), ("stages", -1))),
    ("warps", (("warps", -1),)),
)
_LIMITED_BY = re.compile(r"limited by ([a-z ]+?)\s*(?:\(|$)")
_BY_KIND: dict[str, tuple[Move, ...]] = {
    "latency": (("stages", +1), ("warps", +1)),
    "occupancy": (("min_blocks", +1), ("q_regs", -1)),
    "small-grid": (("block_m", -1),),
}


def profile_moves(verdict: Mapping[str, Any] | None) -> list[Move]:
    """The knob moves a profile verdict (the profile gate's `kernels[i].verdict`) points at."""
    if not verdict:
        return []
    moves: list[Move] = []
    recommendation = str(verdict.get("recommendation", "")).lower()
    limiters = " ".join(m.group(1) for n in verdict.get("notes") or ()
                        if (m := _LIMITED_BY.search(str(n).lower())))
    for phrase, these in _BY_RECOMMENDATION:
        if recommendation.startswith(phrase):
            moves += these
    for word, these in _BY_LIMITER:
        if word in limiters:
            moves += these
    moves += _BY_KIND.get(str(verdict.get("bottleneck", "")), ())
    return list(dict.fromkeys(moves))


def neighbours(current: KernelParams, options: Mapping[str, Sequence[Value]],
               feasible: Iterable[KernelParams], moves: Sequence[Move] = ()) -> list[KernelParams]:
    """The feasible configurations one knob one step from `current`: the `moves` first, then
    every other step in `DEFAULT_ORDER`. A step in block_m that breaks the rows-per-warp rule
    takes warps along (the same rows per warp)."""
    allowed = set(feasible)
    steps = list(moves) + [(name, d) for name in DEFAULT_ORDER for d in (+1, -1)]
    out: list[KernelParams] = []
    for name, direction in dict.fromkeys(steps):
        for candidate in _step(current, name, direction, options):
            if candidate in allowed and candidate != current and candidate not in out:
                out.append(candidate)
                break
    return out


def _step(current: KernelParams, name: str, direction: int,
          options: Mapping[str, Sequence[Value]]) -> list[KernelParams]:
    value = getattr(current, name)
    if isinstance(value, bool):
        wanted = direction > 0
        return [] if value == wanted else [_with(current, **{name: wanted})]
    ordered = sorted(v for v in options.get(name, ()) if not isinstance(v, bool))
    bigger = [v for v in ordered if v > value]
    smaller = [v for v in ordered if v < value]
    nxt = (bigger[0] if bigger else None) if direction > 0 else (smaller[-1] if smaller else None)
    if nxt is None:
        return []
    out = [_with(current, **{name: nxt})]
    if name == "block_m" and int(nxt) * current.warps % current.block_m == 0:
        out.append(_with(current, block_m=nxt, warps=int(nxt) * current.warps // current.block_m))
    return out


def _with(params: KernelParams, **changes: Value) -> KernelParams:
    return KernelParams.from_dict(params.as_dict() | changes)


def seed_order(feasible: Sequence[KernelParams], options: Mapping[str, Sequence[Value]],
               current: KernelParams, n: int, kept_elsewhere: Sequence[KernelParams] = (),
               moves: Sequence[Move] = (), seed: int = 0) -> tuple[list[KernelParams], str]:
    """The `n` configurations measured first (the current one first), and how they were chosen."""
    allowed = set(feasible)
    chosen: list[KernelParams] = [current]
    others = [p for p in kept_elsewhere if p in allowed and p not in chosen]
    chosen += others[: max(0, n - len(chosen))]
    near = [p for p in neighbours(current, options, feasible, moves) if p not in chosen]
    room = min(len(near), max(0, n - len(chosen)), max(1, int(n * NEIGHBOUR_SHARE)))
    chosen += near[:room]
    spread, how = seed_configurations(feasible, options, current, n, seed)
    for p in spread:
        if len(chosen) >= n:
            break
        if p not in chosen:
            chosen.append(p)
    parts = [f"{len(others[:n - 1])} kept on other archs"] if others else []
    hinted = ", ".join(k + ("+" if d > 0 else "-") for k, d in moves)
    parts.append(f"{room} neighbours" + (f" ({hinted} first, from the profile)" if moves else ""))
    return chosen[:n], f"the current configuration, {', '.join(parts)}, then {how}"



def kept_tiles(csrc: Path, arch: str) -> dict[int, list[KernelParams]]:
    """Per head dim, the tiles tuned_config.h keeps for other archs."""
    from cockpit.tune.header import kept_elsewhere

    return {d: [t.params for t in tiles] for d, tiles in kept_elsewhere(csrc, arch).items()}


def profile_hints(session_journal: Path, workspace: Path) -> dict[int | None, list[Move]]:
    """The moves the session's latest profile verdict points at, under the head dim its shape
    names (None: every head dim). Nothing when the session has no finished profile."""
    from cockpit.errors import CockpitError
    from cockpit.session.saved_state import recent_state

    try:
        run = recent_state(session_journal, workspace).last_run("profile", finished=True)
    except CockpitError:
        return {}
    result = run.result if run is not None else None
    kernels = result.get("kernels") if isinstance(result, dict) else None
    if not isinstance(kernels, list) or not kernels or not isinstance(kernels[0], dict):
        return {}
    moves = profile_moves(kernels[0].get("verdict") if isinstance(kernels[0].get("verdict"), dict) else None)
    shape = _HEAD_DIM.search(str(result.get("shape") or "")) if isinstance(result, dict) else None
    return {int(shape.group(1)) if shape else None: moves} if moves else {}


_HEAD_DIM = re.compile(r"\bD(\d+)\b")
