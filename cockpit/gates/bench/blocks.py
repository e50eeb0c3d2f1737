"""What the bench probe's block-by-block judging means for the verdict (issue 32).

A probe that judged each timed block itself (its result carries `block_check`) dropped every block
the card slowed and timed it again after a recovery wait: a slowdown in the window no longer says
anything about the numbers, only how many blocks were timed again and why. What re-measuring
cannot fix stays suspect, and where it can be pinned to configs it is pinned to them, so the rest
of the run still decides:
- a cell whose blocks never got clean within the probe's budget (`clean: false`): its config;
- a process that is not ours on the GPU: the configs whose timed blocks it overlapped (a block
  between the samples that saw it and the samples on either side); one that overlapped no timed
  block moved no number and is a note.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from cockpit.gates.bench.measured import Measured, MeasuredRow
from cockpit.telemetry.block_clocks import Block
from cockpit.telemetry.sample import GpuSample

NEVER_CLEAN = "blocks never clean"
FOREIGN = "a process not ours over their blocks"
NAMED_CONFIGS = 3
"""Configs a reason names before it counts the rest."""


@dataclass(frozen=True)
class Remeasured:
    """The blocks the probe timed again, and why (reason -> blocks)."""

    blocks: int
    why: Mapping[str, int]


def remeasured(rows: Sequence[MeasuredRow]) -> Remeasured:
    """Every cell's re-measured blocks summed, and their reasons."""
    blocks, why = 0, dict[str, int]()
    for cell in (c for row in rows for c in row.cells.values()):
        blocks += cell.remeasured
        for word, count in cell.remeasured_why.items():
            why[word] = why.get(word, 0) + count
    return Remeasured(blocks, why)


def unclean(measured: Measured, watched: Collection[str]) -> tuple[dict[str, str], list[str]]:
    """The configs where a watched implementation's blocks never got clean (config -> "ours: SW
    thermal slowdown in 9 of 9 re-measures"), and a note for each other implementation's
    (its own numbers there are rough; the speedups the verdict vouches for are not)."""
    suspect: dict[str, str] = {}
    notes: list[str] = []
    for row in measured.rows:
        dirty = [(impl, c.unclean_why) for impl, c in row.cells.items() if c.unclean]
        said = [f"{measured.label(impl)}: {why}" for impl, why in dirty if impl in watched]
        if said:
            suspect[row.config] = ", ".join(said)
        notes += [f"{measured.label(impl)}'s blocks never clean at {row.config} ({why}): its times there are "
                  "rough" for impl, why in dirty if impl not in watched]
    return suspect, notes


def unclean_reason(suspect: Mapping[str, str]) -> str:
    """'blocks never clean at B1 H16 S4096 D128 (ours: SW thermal slowdown in 9 of 9 re-measures)',
    naming a few configs and counting the rest."""
    named = [f"{config} ({why})" for config, why in list(suspect.items())[:NAMED_CONFIGS]]
    more = len(suspect) - len(named)
    return f"{NEVER_CLEAN} at " + ", ".join(named) + (f" and {more} more configs" if more else "")


def overlapped(blocks: Sequence[Block], samples: Sequence[GpuSample], pids: Collection[int]) -> list[str]:
    """The configs whose timed blocks a process in `pids` may have shared the GPU with: a block
    that overlaps the span from the sample before one that saw it to the sample after."""
    ordered = sorted(samples, key=lambda s: s.t)
    spans = []
    for i, s in enumerate(ordered):
        if any(p.pid in pids for p in s.processes):
            spans.append((ordered[max(0, i - 1)].t, ordered[min(len(ordered) - 1, i + 1)].t))
    hit = [b.config for b in blocks if any(b.t0 <= hi and b.t1 >= lo for lo, hi in spans)]
    return list(dict.fromkeys(hit))


def config_list(configs: Sequence[str]) -> str:
    """A few configs named, the rest counted."""
    named = list(configs[:NAMED_CONFIGS])
    more = len(configs) - len(named)
    return ", ".join(named) + (f" and {more} more" if more else "")
