"""How sure a tune is of its winner: its regret against its own finalists, the re-confirm, and
near-ties told as ties.

- **Regret.** The search ranks its finalists (the `confirm_top` best) by the trials' values; the
  confirmation measures them again, interleaved. How much slower the search's first is than the
  finalist the confirmation measured fastest (its time over the fastest's, geometric mean over the
  shapes, bootstrapped) says how far the search's own ranking can be trusted: 0 % when its first
  is the fastest.
- **The re-confirm.** Once the confirmation names a winner, the winner, the runner-up and the
  current values are measured once more, interleaved, by the same measuring child. The winner
  held when it is still the fastest of them and still beyond the noise against the current
  values, in a window the validity verdict passes.
- **A tie.** Two configurations whose intervals against the current values overlap are not told
  apart: the lines say "tie", never a winner; keep/revert still follows the keep rule against the
  current values.

Journaled in `tune_finished` as `confidence`, one object per group (version 1); a tune journaled
before has none, which reads as "not recorded", never as a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypedDict

from cockpit.analysis.stats import Estimate
from cockpit.json_fields import as_number, items, obj, objects, text, whole

NOT_RECORDED = "regret and re-confirm not recorded (a tune from before they were)"


class EstimateJson(TypedDict):
    value: float
    lo: float
    hi: float


class RegretJson(TypedDict):
    pick: str
    fastest: str
    slower: EstimateJson
    finalists: int


class TieJson(TypedDict):
    kept: str
    other: str
    kept_vs_current: EstimateJson
    other_vs_current: EstimateJson
    again: list[EstimateJson] | None


class ReconfirmJson(TypedDict):
    held: bool
    winner: str
    winner_vs_current: EstimateJson
    runner_up: str | None
    runner_up_vs_current: EstimateJson | None
    valid: bool
    suspect: str


class ConfidenceJson(TypedDict):
    schema: int
    group: str
    regret: RegretJson | None
    tie: TieJson | None
    reconfirm: ReconfirmJson | None


def times_x(e: Estimate) -> str:
    """`1.18x [1.16, 1.20]`."""
    return f"{e.value:.2f}x [{e.lo:.2f}, {e.hi:.2f}]"


def _percent(ratio: float) -> str:
    return f"{(ratio - 1) * 100:.1f} %"


@dataclass(frozen=True)
class Regret:
    """The search's first against the finalist the confirmation measured fastest."""

    pick: str
    fastest: str
    slower: Estimate
    """The pick's time over the fastest's: exactly 1 when the pick is the fastest."""
    finalists: int

    def words(self) -> str:
        if self.pick == self.fastest:
            return (f"regret 0 %: the search's first, {self.pick}, is the fastest of its {self.finalists} "
                    f"finalist{'s' if self.finalists != 1 else ''} on the confirmation")
        s = self.slower
        return (f"regret {_percent(s.value)} [{_percent(s.lo)}, {_percent(s.hi)}]: the search's first, "
                f"{self.pick}, is that much slower than {self.fastest}, the fastest of its {self.finalists} "
                "finalists on the confirmation")

    def brief(self) -> str:
        if self.pick == self.fastest:
            return "regret 0 %"
        s = self.slower
        return f"regret {_percent(s.value)} [{_percent(s.lo)}, {_percent(s.hi)}]"


@dataclass(frozen=True)
class Tie:
    """The configuration kept and the one it cannot be told apart from: their intervals overlap on
    the confirmation, or the re-confirm ordered them the other way round (`again`)."""

    kept: str
    other: str
    kept_vs_current: Estimate
    other_vs_current: Estimate
    """Both on the confirmation."""
    again: tuple[Estimate, Estimate] | None = None
    """Both on the re-confirm, when it found the other faster."""

    def words(self) -> str:
        said = (f"{self.kept} and {self.other} tie: {times_x(self.kept_vs_current)} and "
                f"{times_x(self.other_vs_current)} the current values")
        if self.again is None:
            return said
        mine, theirs = self.again
        return f"{said} on the confirmation, {times_x(mine)} and {times_x(theirs)} on the re-confirm"


def overlap(a: Estimate, b: Estimate) -> bool:
    """Neither interval wholly above the other: the noise cannot order them."""
    return a.lo <= b.hi and b.lo <= a.hi


@dataclass(frozen=True)
class Reconfirm:
    """The winner, the runner-up and the current values measured once more."""

    winner: str
    winner_vs_current: Estimate
    runner_up: str | None
    runner_up_vs_current: Estimate | None
    valid: bool
    suspect: str = ""
    """Why the window was suspect (the validity verdict's reasons), when it was."""

    @property
    def beyond_noise(self) -> bool:
        """Still faster than the current values beyond the noise, in a window that can say so."""
        return self.valid and self.winner_vs_current.lo > 1.0

    @property
    def still_fastest(self) -> bool:
        r = self.runner_up_vs_current
        return r is None or self.winner_vs_current.value >= r.value

    @property
    def held(self) -> bool:
        return self.beyond_noise and self.still_fastest

    def words(self) -> str:
        read = f"{self.winner} read {times_x(self.winner_vs_current)} the current values"
        if not self.valid:
            return (f"the winner did not hold on a re-confirm: its window is suspect ({self.suspect}); "
                    "re-measure on a quiet GPU")
        if not self.beyond_noise:
            return f"the winner did not hold on a re-confirm: {read}, not beyond the noise"
        runner = (f"{self.runner_up} {times_x(self.runner_up_vs_current)}"
                  if self.runner_up is not None and self.runner_up_vs_current is not None else "")
        if not self.still_fastest:
            return f"the winner did not hold on a re-confirm: {runner}, faster; {read}"
        return f"the winner held on a re-confirm: {read}" + (f", the runner-up {runner}" if runner else "")


@dataclass(frozen=True)
class GroupConfidence:
    """One group's regret, tie and re-confirm, as `tune_finished` journals them."""

    SCHEMA: ClassVar[int] = 1

    group: str
    regret: Regret | None = None
    """None when the search had nothing to confirm."""
    tie: Tie | None = None
    reconfirm: Reconfirm | None = None
    """None when the confirmation named no winner: nothing to re-confirm."""

    def brief(self) -> str:
        """The panel's line: `D=64: regret 0 %; the winner held on a re-confirm`."""
        parts = [self.regret.brief() if self.regret else "nothing confirmed"]
        if self.tie is not None:
            parts.append(f"{self.tie.kept} and {self.tie.other} tie")
        if self.reconfirm is not None:
            parts.append(f"the winner {'held' if self.reconfirm.held else 'did not hold'} on a re-confirm")
        return f"{self.group}: " + "; ".join(parts)

    def to_json(self) -> ConfidenceJson:
        return {"schema": self.SCHEMA, "group": self.group,
                "regret": _regret_json(self.regret) if self.regret else None,
                "tie": _tie_json(self.tie) if self.tie else None,
                "reconfirm": _reconfirm_json(self.reconfirm) if self.reconfirm else None}

    @classmethod
    def from_json(cls, value: object) -> GroupConfidence | None:
        """None when `value` is not one (no group, or a version this cockpit does not know)."""
        data = obj(value)
        group = text(data.get("group"))
        if group is None or whole(data.get("schema")) != cls.SCHEMA:
            return None
        return cls(group, _regret(data.get("regret")), _tie(data.get("tie")),
                   _reconfirm(data.get("reconfirm")))


def read_confidence(finished: Mapping[str, object] | None) -> tuple[GroupConfidence, ...] | None:
    """The groups' confidence a `tune_finished` event journaled; None when it holds none (a tune
    from before it was recorded, or one still running)."""
    if finished is None or "confidence" not in finished:
        return None
    read = (GroupConfidence.from_json(v) for v in objects(finished["confidence"]))
    return tuple(c for c in read if c is not None)


def confidence_lines(confidence: Sequence[GroupConfidence] | None) -> list[str]:
    return [NOT_RECORDED] if confidence is None else [c.brief() for c in confidence]


# --- to and from JSON ------------------------------------------------------------------------------

def _estimate_json(e: Estimate) -> EstimateJson:
    return {"value": round(e.value, 4), "lo": round(e.lo, 4), "hi": round(e.hi, 4)}


def _estimate(value: object) -> Estimate | None:
    data = obj(value)
    v, lo, hi = (as_number(data.get(k)) for k in ("value", "lo", "hi"))
    return Estimate(v, lo, hi) if v is not None and lo is not None and hi is not None else None


def _regret_json(r: Regret) -> RegretJson:
    return {"pick": r.pick, "fastest": r.fastest, "slower": _estimate_json(r.slower),
            "finalists": r.finalists}


def _regret(value: object) -> Regret | None:
    data = obj(value)
    pick, fastest, slower = text(data.get("pick")), text(data.get("fastest")), _estimate(data.get("slower"))
    if pick is None or fastest is None or slower is None:
        return None
    return Regret(pick, fastest, slower, whole(data.get("finalists")) or 0)


def _tie_json(t: Tie) -> TieJson:
    return {"kept": t.kept, "other": t.other, "kept_vs_current": _estimate_json(t.kept_vs_current),
            "other_vs_current": _estimate_json(t.other_vs_current),
            "again": [_estimate_json(e) for e in t.again] if t.again else None}


def _tie(value: object) -> Tie | None:
    data = obj(value)
    kept, other = text(data.get("kept")), text(data.get("other"))
    mine, theirs = _estimate(data.get("kept_vs_current")), _estimate(data.get("other_vs_current"))
    if kept is None or other is None or mine is None or theirs is None:
        return None
    again = [e for v in items(data.get("again")) if (e := _estimate(v)) is not None]
    return Tie(kept, other, mine, theirs, (again[0], again[1]) if len(again) == 2 else None)


def _reconfirm_json(r: Reconfirm) -> ReconfirmJson:
    runner = r.runner_up_vs_current
    return {"held": r.held, "winner": r.winner, "winner_vs_current": _estimate_json(r.winner_vs_current),
            "runner_up": r.runner_up, "runner_up_vs_current": _estimate_json(runner) if runner else None,
            "valid": r.valid, "suspect": r.suspect}


def _reconfirm(value: object) -> Reconfirm | None:
    data = obj(value)
    winner, mine = text(data.get("winner")), _estimate(data.get("winner_vs_current"))
    if winner is None or mine is None:
        return None
    return Reconfirm(winner, mine, text(data.get("runner_up")), _estimate(data.get("runner_up_vs_current")),
                     data.get("valid") is True, text(data.get("suspect")) or "")
