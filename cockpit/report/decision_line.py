"""A keep/revert decision in the words a reviewer reads: the gain with its interval, what it was
against, the change in words, and whether it was carried out.

    KEEP: 1.20x [1.18, 1.20] vs the build before this change (the tuned values before
    tune-20261123-111122), 1.06x vs FLASH, with head dim 128: block 128x64, 4 warps, min 1
    block/SM, 1 stage, O in shared memory, Q in shared memory; done, no commit recorded

A tune journals its gains in its summary, one part per group ("D=128 BM128 BN64 ... 1.20x [1.18,
1.20] vs current, 1.06x FLASH"); those parts are read back and each setting spelled out. A summary
in no form this knows is shown as journaled. What the journal did not record (an interval, a
commit) is said to be missing, never guessed.
"""

from __future__ import annotations

import re

from cockpit.report.decisions import TUNE
from cockpit.report.model import KeepDecisionRow
from cockpit.workload.knob_words import spelled

_TUNE_PART = re.compile(r"(?P<setting>.+?) (?P<x>\d+\.\d+)x(?: \[(?P<lo>\d+\.\d+), (?P<hi>\d+\.\d+)\])?"
                        r" vs current(?:, (?P<others>.+))?")
"""One group's part of a tune's summary (cockpit/tune/finish.py writes it)."""


def decision_line(d: KeepDecisionRow) -> str:
    """The decision as a pull request states it."""
    done = _done(d)
    if d.source != TUNE:
        return f"{d.action.upper()}: {_gain(d.improvement, d.interval)} vs {_versus(d)}; {done}"
    parts = _tune_parts(d.summary)
    if parts is None:
        return f"{d.summary} (vs {_versus(d)}); {done}"
    return f"{d.action.upper()}: " + "; ".join(_tune_part(m, d, len(parts)) for m in parts) + f"; {done}"


def _versus(d: KeepDecisionRow) -> str:
    if d.source == TUNE:
        return f"the build before this change ({d.versus})" if d.versus else "the build before this change"
    return d.versus or "an earlier bench (not recorded)"


def _gain(improvement: float | None, interval: tuple[float, float] | None) -> str:
    """'1.20x [1.18, 1.20]', with what is missing said."""
    if improvement is None:
        return "no speedup recorded"
    spread = f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else " (no interval recorded)"
    return f"{1 + improvement:.2f}x{spread}"


def _done(d: KeepDecisionRow) -> str:
    if not d.confirmed:
        return "not carried out"
    if d.action != "keep":
        return "done"
    return f"done, commit {d.commit}" if d.commit else "done, no commit recorded"


def _tune_parts(summary: str) -> list[re.Match[str]] | None:
    """Each group's part of a tune's summary; None when any part is in no form this reads."""
    _, colon, body = summary.partition(": ")
    parts = [_TUNE_PART.fullmatch(p) for p in body.split("; ")] if colon else []
    found = [m for m in parts if m is not None]
    return found if found and len(found) == len(parts) else None


def _tune_part(m: re.Match[str], d: KeepDecisionRow, parts: int) -> str:
    """'1.20x [1.18, 1.20] vs the build before this change (...), 1.06x vs FLASH, with head dim 128:
    block 128x64, ...'. The row's own interval stands for a one-group tune's where its summary
    has none (the knob search journals it beside)."""
    x = float(m["x"])
    interval = (float(m["lo"]), float(m["hi"])) if m["lo"] else (d.interval if parts == 1 else None)
    others = f", {re.sub(r'x (?!vs )', 'x vs ', m['others'], count=1)}" if m["others"] else ""
    return f"{_gain(x - 1, interval)} vs {_versus(d)}{others}, with {spelled(m['setting'])}"
