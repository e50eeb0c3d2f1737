"""A knob setting in the words a reviewer reads. The tune names a setting the short way, to be read
at a glance in its pane, its commit message and the tuned file: "D=128 block_m=128 block_n=64
warps=4 min_blocks=1 stages=1 o_smem=True q_regs=False" (the knob search, tune/space.py `label`), or
"D=128 BM128 BN64 4w mb1 1st O:smem Q:smem" in sessions journaled by the tile search before it. A
pull request spells it out: "head dim 128: block 128x64, 4 warps, min 1 block/SM, 1 stage, O in
shared memory, Q in shared memory".

Only what the setting says is said (the tile search wrote no `Q:` for Q kept in registers, so
none is spelled). A token this glossary does not know reads as written: another workload's knob
is its author's word.
"""

from __future__ import annotations

import re

GROUP_WORDS = {"D": "head dim"}
"""The keep_per keys a setting's group starts with, in words (another key reads as written)."""
_SHORT = tuple((re.compile(pattern), name) for pattern, name in (
    (r"BM(\d+)", "block_m"), (r"BN(\d+)", "block_n"), (r"(\d+)w", "warps"), (r"mb(\d+)", "min_blocks"),
    (r"(\d+)st", "stages"), (r"O:(smem|reg)", "o_place"), (r"Q:(smem|reg)", "q_place")))
"""The tile search's short tokens, as the knob each one set."""
_FLAGS = {"o_smem": ("o_place", {"True": "smem", "False": "reg"}),
          "q_regs": ("q_place", {"True": "reg", "False": "smem"})}
"""The knob search's flags, as the place they put a tile in."""
_COUNTED = {"warps": "warp", "num_warps": "warp", "stages": "stage", "num_stages": "stage"}
_PLACES = {"smem": "shared memory", "reg": "registers"}
_BLOCK = ("block_m", "block_n")


def spelled(setting: str) -> str:
    """The setting in words: its group ("head dim 128: ..."), then each knob."""
    tokens = setting.split()
    group = []
    while tokens and (found := _knob(tokens[0])) is not None and found[0] in GROUP_WORDS:
        group.append(f"{GROUP_WORDS[found[0]]} {found[1]}")
        tokens.pop(0)
    if tokens[:1] == ["all"]:  # the group of a workload that keeps one winner for every shape
        tokens.pop(0)
    knobs = ", ".join(_phrases(tokens))
    return f"{' '.join(group)}: {knobs}" if group and knobs else " ".join(group) or knobs


def _knob(token: str) -> tuple[str, str] | None:
    """(knob, value) of one token of either form; None for a token that sets no knob."""
    for pattern, name in _SHORT:
        if (m := pattern.fullmatch(token)) is not None:
            return name, m.group(1)
    name, equals, value = token.partition("=")
    if not equals or not name or not value:
        return None
    place = _FLAGS.get(name)
    return (place[0], place[1].get(value, value)) if place else (name, value)


def _phrases(tokens: list[str]) -> list[str]:
    """Each knob's words, in the setting's order; the block's two sides said once, together."""
    knobs = [(token, _knob(token)) for token in tokens]
    named = dict(found for _, found in knobs if found is not None)
    out: list[str] = []
    for token, found in knobs:
        said = _said(token, found, named)
        if said not in out:
            out.append(said)
    return out


def _said(token: str, found: tuple[str, str] | None, named: dict[str, str]) -> str:
    """One token in words: the block with both its sides, a knob the glossary knows, else as written."""
    if found is None:
        return token
    return _block(named) if found[0] in _BLOCK else _phrase(*found) or token


def _block(named: dict[str, str]) -> str:
    """"block 128x64" (rows x columns of the tile), or the one side the setting names."""
    rows, columns = (named.get(side) for side in _BLOCK)
    if rows and columns:
        return f"block {rows}x{columns}"
    return f"block of {rows} rows" if rows else f"block of {columns} columns"


def _phrase(name: str, value: str) -> str | None:
    """One knob in words; None for one this glossary does not know."""
    if value == "src":
        return f"{name} from the source"
    if name in _COUNTED:
        return _count(value, _COUNTED[name])
    if name == "min_blocks":
        return f"min {_count(value, 'block')}/SM"
    if name in ("o_place", "q_place") and value in _PLACES:
        return f"{name[0].upper()} in {_PLACES[value]}"
    return None


def _count(value: str, thing: str) -> str:
    return f"{value} {thing}" + ("" if value == "1" else "s")
