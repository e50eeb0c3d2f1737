"""A keep/revert decision in the words a reviewer reads: the gain with its interval, what it was
against, the change in words, and whether it was carried out.

    KEEP: 1.31x [1.28, 1.34] vs the build before this change (the tuned values before
    tune-20261124-001500), 1.12x vs torch.softmax, with rows of 4096: 2 rows per block, 8 warps;
    done, no commit recorded

A tune journals its gains in its summary, one part per group ("N=4096 ROWS=2 num_warps=8 1.31x
[1.28, 1.34] vs current, 1.12x torch.softmax"); those parts are read back and each setting spelled
out in the words the workload gave its knobs, journaled with the decision (workload/knob_words.py;
a setting the tile search journaled before workloads, in the words before_workloads.py keeps for
it). A summary in no form this knows is shown as journaled. What the journal did not record (an
interval, a commit, words) is said to be missing or read as written, never guessed.
"""

from __future__ import annotations

import re

from cockpit import before_workloads
from cockpit.report.decisions import TUNE
from cockpit.report.model import KeepDecisionRow
from cockpit.report.text import clean_line
from cockpit.workload.knob_words import KnobWords, spelled

_TUNE_PART = re.compile(r"(?P<setting>.+?) (?P<x>\d+\.\d+)x(?: \[(?P<lo>\d+\.\d+), (?P<hi>\d+\.\d+)\])?"
                        r" vs current(?:, (?P<others>.+))?")
"""One group's part of a tune's summary (cockpit/tune/finish.py writes it)."""


def decision_line(d: KeepDecisionRow, words: KnobWords | None = None) -> str:
    """The decision as a pull request states it, a tune's settings in `words` (its workload's)."""
    done = _done(d)
    if d.source != TUNE:
        return f"{d.action.upper()}: {_gain(d.improvement, d.interval)} vs {_versus(d)}; {done}"
    parts = _tune_parts(d.summary)
    if parts is None:
        return f"{d.summary} (vs {_versus(d)}); {done}"
    said = "; ".join(_tune_part(m, d, len(parts), words) for m in parts)
    return f"{d.action.upper()}: {said}; {done}"


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


def _tune_part(m: re.Match[str], d: KeepDecisionRow, parts: int, words: KnobWords | None) -> str:
    """'1.31x [1.28, 1.34] vs the build before this change (...), 1.12x vs torch.softmax, with rows
    of 4096: 2 rows per block, ...'. The row's own interval stands for a one-group tune's where its
    summary has none (the knob search journals it beside)."""
    x = float(m["x"])
    interval = (float(m["lo"]), float(m["hi"])) if m["lo"] else (d.interval if parts == 1 else None)
    others = f", {re.sub(r'x (?!vs )', 'x vs ', m['others'], count=1)}" if m["others"] else ""
    return f"{_gain(x - 1, interval)} vs {_versus(d)}{others}, with {_setting(m['setting'], words)}"


def _setting(setting: str, words: KnobWords | None) -> str:
    """The setting in its workload's words; one the tile search journaled in the words of its kernel."""
    tiles = before_workloads.tile_setting(setting)
    if tiles is not None:
        return clean_line(spelled(tiles, KnobWords.from_json(before_workloads.TILE_WORDS)))
    return clean_line(spelled(setting, words))
