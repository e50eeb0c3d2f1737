"""The confirmation: the search's best configurations re-measured in one process, interleaved
with the current configuration and SDPA's default and FLASH backends (the bench gate's blocks),
with bootstrap confidence intervals per shape and over all shapes.

A head dim gets a winner only when the run was valid (the bench gate's verdict on the NVML
window) and the best contender is at least `keep_improvement` faster than the current
configuration with the lower end of its interval above 1: noise cannot pick it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cockpit.analysis.stats import Estimate, flops, geomean_tflops, speedup
from cockpit.tune.space import KernelParams

CURRENT = "current"


@dataclass(frozen=True)
class ShapeResult:
    shape: Mapping[str, Any]
    tflops: float
    vs_current: Estimate
    vs_flash: Estimate


@dataclass(frozen=True)
class Contender:
    name: str
    params: KernelParams
    tflops: Estimate
    vs_current: Estimate
    vs_flash: Estimate
    vs_sdpa: Estimate
    shapes: tuple[ShapeResult, ...]

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "config": self.params.label, "params": self.params.as_dict(),
                "tflops": self.tflops.as_dict(), "vs_current": self.vs_current.as_dict(),
                "vs_flash": self.vs_flash.as_dict(), "vs_sdpa": self.vs_sdpa.as_dict(),
                "shapes": [{"S": s.shape["S"], "D": s.shape["D"], "tflops": round(s.tflops, 1),
                            "vs_current": s.vs_current.as_dict(), "vs_flash": s.vs_flash.as_dict()}
                           for s in self.shapes]}


@dataclass(frozen=True)
class Confirmation:
    head_dim: int
    current: Contender
    contenders: tuple[Contender, ...]
    winner: Contender | None
    why: str

    def as_json(self) -> dict[str, Any]:
        return {"head_dim": self.head_dim, "current": self.current.as_json(),
                "contenders": [c.as_json() for c in self.contenders],
                "winner": self.winner.name if self.winner else None, "why": self.why}


def judge(head_dim: int, times: Mapping[str, Sequence[Sequence[float]]], params: Mapping[str, KernelParams],
          shapes: Sequence[Mapping[str, Any]], bar: float, valid: bool) -> Confirmation:
    """`times`: per implementation (CURRENT, each contender, "sdpa", "flash"), per shape, the
    per-call times in ms."""
    shape_flops = [flops(s) for s in shapes]

    def contender(name: str) -> Contender:
        ours = times[name]
        per_shape = tuple(
            ShapeResult(s, f / (sorted(t)[len(t) // 2] * 1e-3) / 1e12,
                        speedup([t], [times[CURRENT][i]]), speedup([t], [times["flash"][i]]))
            for i, (s, f, t) in enumerate(zip(shapes, shape_flops, ours, strict=True)))
        return Contender(name, params[name], geomean_tflops(ours, shape_flops),
                         speedup(ours, times[CURRENT]), speedup(ours, times["flash"]),
                         speedup(ours, times["sdpa"]), per_shape)

    current = contender(CURRENT)
    others = tuple(sorted((contender(n) for n in params if n != CURRENT),
                          key=lambda c: c.vs_current.value, reverse=True))
    if not others:
        return Confirmation(head_dim, current, others, None, "the search found nothing to confirm")
    best = others[0]
    if not valid:
        return Confirmation(head_dim, current, others, None,
                            "the confirmation run is suspect (see validity): re-measure on a quiet GPU")
    if best.vs_current.lo <= 1.0:
        return Confirmation(head_dim, current, others, None,
                            f"the best, {best.params.label}, is {best.vs_current.value:.2f}x the current "
                            f"configuration but its interval [{best.vs_current.lo:.2f}, "
                            f"{best.vs_current.hi:.2f}] reaches 1: not better beyond the noise")
    if best.vs_current.value < 1 + bar:
        return Confirmation(head_dim, current, others, None,
                            f"the best, {best.params.label}, is {best.vs_current.value:.2f}x the current "
                            f"configuration, under the {bar:.0%} bar")
    return Confirmation(head_dim, current, others, best,
                        f"{best.params.label}: {_ci(best.vs_current)} the current configuration "
                        f"(bar {1 + bar:.2f}x), {_ci(best.vs_flash)} FLASH")


def describe(c: Confirmation) -> list[str]:
    """The confirmation's table, per contender and shape."""
    lines = [f"D={c.head_dim}: " + (f"WINNER {c.winner.params.label}" if c.winner else "no winner") +
             f" — {c.why}"]
    for k in (c.current, *c.contenders):
        lines.append(f"  {k.name:<8} {k.params.label:<30} {k.tflops.value:6.1f} TFLOP/s  "
                     f"vs current {_ci(k.vs_current)}  vs FLASH {_ci(k.vs_flash)}  vs SDPA {_ci(k.vs_sdpa)}")
        for s in k.shapes:
            lines.append(f"           S={s.shape['S']:<6} {s.tflops:6.1f} TFLOP/s  vs current "
                         f"{_ci(s.vs_current)}  vs FLASH {_ci(s.vs_flash)}")
    return lines


def _ci(e: Estimate) -> str:
    return f"{e.value:.3f}x [{e.lo:.3f}, {e.hi:.3f}]"
