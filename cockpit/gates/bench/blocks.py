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

from cockpit.json_fields import JsonObject, obj, objects, text, whole
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


def judged_by_block(data: Mapping[str, object]) -> bool:
    """The probe judged each timed block by its clocks and re-measured the dirty ones."""
    return isinstance(data.get("block_check"), Mapping)


def remeasured(rows: Sequence[JsonObject]) -> Remeasured:
    """Every cell's re-measured blocks summed, and their reasons."""
    blocks, why = 0, dict[str, int]()
    for row in rows:
        for cell in (obj(c) for c in obj(row.get("impl")).values()):
            blocks += whole(cell.get("remeasured")) or 0
            for word, count in obj(cell.get("remeasured_why")).items():
                why[word] = why.get(word, 0) + (whole(count) or 0)
    return Remeasured(blocks, why)


def label_of(data: Mapping[str, object], impl: str) -> str:
    """How the result shows `impl` (its id where the probe gave it no label)."""
    return text(obj(data.get("labels")).get(impl)) or impl


def unclean(data: Mapping[str, object], watched: Collection[str]) -> tuple[dict[str, str], list[str]]:
    """The configs where a watched implementation's blocks never got clean (config -> "ours: SW
    thermal slowdown in 9 of 9 re-measures"), and a note for each other implementation's
    (its own numbers there are rough; the speedups the verdict vouches for are not)."""
    suspect: dict[str, str] = {}
    notes: list[str] = []
    for row in objects(data.get("rows")):
        config = str(row.get("config"))
        dirty = _never_clean(row)
        said = [f"{label_of(data, impl)}: {why}" for impl, why in dirty if impl in watched]
        if said:
            suspect[config] = ", ".join(said)
        notes += [f"{label_of(data, impl)}'s blocks never clean at {config} ({why}): its times there are "
                  "rough" for impl, why in dirty if impl not in watched]
    return suspect, notes


def _never_clean(row: JsonObject) -> list[tuple[str, str]]:
    """The implementations whose blocks never got clean on this row, each with why."""
    cells = [(impl, obj(c)) for impl, c in obj(row.get("impl")).items()]
    return [(impl, text(c.get("unclean_why")) or "dirty") for impl, c in cells if c.get("clean") is False]


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
