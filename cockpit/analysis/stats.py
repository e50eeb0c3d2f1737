"""The objective and its uncertainty: geometric-mean TFLOP/s over the tuning shapes, with a
bootstrap confidence interval over the per-call times, and the rule that noise cannot pick a
winner (better only when the whole interval is above the incumbent's)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BOOTSTRAP_RESAMPLES = 1000
LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    value: float
    lo: float
    hi: float

    def as_dict(self) -> dict[str, float]:
        return {"value": round(self.value, 3), "lo": round(self.lo, 3), "hi": round(self.hi, 3)}

    def __str__(self) -> str:
        return f"{self.value:.1f} [{self.lo:.1f}, {self.hi:.1f}]"


def flops(shape: Mapping[str, Any]) -> float:
    """4·B·H·S²·D (QKᵀ and PV), half of it for causal: the bench gate's count."""
    f = 4.0 * float(shape["B"]) * float(shape["H"]) * float(shape["S"]) ** 2 * float(shape["D"])
    return f / 2 if shape["causal"] else f


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def geomean_tflops(times_ms: Sequence[Sequence[float]], shape_flops: Sequence[float],
                   seed: int = 0) -> Estimate:
    """Geometric mean over shapes of flops / median call time, with a percentile bootstrap:
    each resample redraws every shape's calls with replacement."""
    import numpy as np

    rng = np.random.default_rng(seed)
    logs = np.zeros(BOOTSTRAP_RESAMPLES)
    point = []
    for samples, f in zip(times_ms, shape_flops, strict=True):
        x = np.asarray(samples, dtype=float)
        point.append(f / (float(np.median(x)) * 1e-3) / 1e12)
        draws = x[rng.integers(0, len(x), size=(BOOTSTRAP_RESAMPLES, len(x)))]
        logs += np.log(f / (np.median(draws, axis=1) * 1e-3) / 1e12)
    logs /= len(point)
    lo, hi = np.quantile(np.exp(logs), [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return Estimate(geomean(point), float(lo), float(hi))


def speedup(ours_ms: Sequence[Sequence[float]], base_ms: Sequence[Sequence[float]],
            seed: int = 0) -> Estimate:
    """Geometric mean over shapes of base median / ours median, bootstrapped on both sides."""
    import numpy as np

    rng = np.random.default_rng(seed)
    logs = np.zeros(BOOTSTRAP_RESAMPLES)
    point = []
    for ours, base in zip(ours_ms, base_ms, strict=True):
        a, b = np.asarray(ours, dtype=float), np.asarray(base, dtype=float)
        point.append(float(np.median(b) / np.median(a)))
        ra = np.median(a[rng.integers(0, len(a), size=(BOOTSTRAP_RESAMPLES, len(a)))], axis=1)
        rb = np.median(b[rng.integers(0, len(b), size=(BOOTSTRAP_RESAMPLES, len(b)))], axis=1)
        logs += np.log(rb / ra)
    logs /= len(point)
    lo, hi = np.quantile(np.exp(logs), [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return Estimate(geomean(point), float(lo), float(hi))


def better(candidate: Estimate, incumbent: Estimate) -> bool:
    """Faster beyond the noise: the candidate's whole interval above the incumbent's."""
    return candidate.lo > incumbent.hi


def clearly_slower(candidate: Estimate, best: float, margin: float) -> bool:
    """The pruning rule: even the top of the candidate's interval is more than `margin` below
    the best value so far."""
    return candidate.hi < best * (1 - margin)
