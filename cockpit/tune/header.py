"""`csrc/tuned_config.h`: the tiles `cockpit tune` kept, per GPU architecture and head dim, and
the configuration a build for an arch uses now.

attention.cu includes it when it exists (`__has_include`) and reads one table from it,
`COCKPIT_ATTN_TUNED_TILES`: a build for one arch (the build gate's and the tune's, both for the
GPU present) takes that arch's entry, else an entry for every arch (sm 0), else its hand-picked
tile. So one committed file carries the H100's tile and the L4's without either replacing the
other, and a fresh clone on an H100 builds the H100's winner. It lives in csrc/, which keep and
revert already commit and restore. A -DCOCKPIT_ATTN_D128_BN=... on the command line still wins.

A header written before the table (plain `#define COCKPIT_ATTN_D128_BN 64` lines, from one GPU)
is read as an entry for every arch, and written back as one at the next keep.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cockpit.tune.space import DEFAULTS, TUNABLES, KernelParams

HEADER_NAME = "tuned_config.h"
L4_SMEM_LIMIT = 99 * 1024
"""The hand-picked tiles' bound (the L4's opt-in shared memory per block)."""
EVERY_ARCH = 0

_ENTRY = re.compile(r"/\*\s*(sm_\d+|every arch)\s+D=(\d+):\s*(.*?)\s*\*/\s*\\\s*\n\s*"
                    r"\{\s*(\d+)\s*,\s*(\d+)((?:\s*,\s*\d+){8})\s*\}")
_LEGACY = re.compile(r"^#define\s+COCKPIT_ATTN_D(\d+)_([A-Z_]+)\s+(\d+)\s*$", re.MULTILINE)
_LEGACY_SMEM = re.compile(r"^#define\s+COCKPIT_ATTN_MAX_SMEM\s+(\d+)\s*$", re.MULTILINE)
_MORE_THAN_L4 = re.compile(r"\s*\d+ KB per block: more than an L4 allows\.$")
_FIELDS = ("block_m", "block_n", "warps", "min_blocks", "stages", "o_smem", "q_regs")


@dataclass(frozen=True)
class KeptTile:
    """One entry of the table: the tile kept for `sm` (90 for sm_90; 0 for every arch)."""

    sm: int
    head_dim: int
    params: KernelParams
    smem_limit: int
    note: str = ""

    @property
    def arch(self) -> str:
        return f"sm_{self.sm}" if self.sm else "every arch"


def sm_of(arch: str) -> int:
    """`sm_90` / `sm_90a` / `9.0` -> 90; 0 when it names no single arch."""
    digits = re.fullmatch(r"(?:sm_|compute_)?(\d+)\.?(\d)?[af]?", arch.strip())
    if not digits:
        return EVERY_ARCH
    return int(digits.group(1) + (digits.group(2) or ""))


def read_tiles(csrc: Path) -> list[KeptTile]:
    """Every entry the header keeps (the old single-GPU form read as entries for every arch)."""
    try:
        text = (csrc / HEADER_NAME).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    tiles = []
    for _arch, _d, note, sm, head_dim, rest in _ENTRY.findall(text):
        values = [int(v) for v in rest.replace(",", " ").split()]
        params = dict(zip(_FIELDS, values[:7], strict=True))
        params["o_smem"], params["q_regs"] = bool(params["o_smem"]), bool(params["q_regs"])
        kernel = KernelParams.from_dict(params)
        note = _MORE_THAN_L4.sub("", note.removeprefix(f"{kernel.label}.").strip())
        tiles.append(KeptTile(int(sm), int(head_dim), kernel, values[7], note))
    return tiles + _legacy(text)


def _legacy(text: str) -> list[KeptTile]:
    found: dict[int, dict[str, int]] = {}
    for d, macro, value in _LEGACY.findall(text):
        found.setdefault(int(d), {})[macro] = int(value)
    smem = _LEGACY_SMEM.search(text)
    out = []
    for d, macros in found.items():
        if d not in DEFAULTS:
            continue
        base = DEFAULTS[d].as_dict()
        for t in TUNABLES:
            if t.macro in macros:
                base[t.name] = bool(macros[t.macro]) if isinstance(base[t.name], bool) else macros[t.macro]
        out.append(KeptTile(EVERY_ARCH, d, KernelParams.from_dict(base),
                            int(smem.group(1)) if smem else L4_SMEM_LIMIT,
                            "from an earlier tuned_config.h"))
    return out


def read_current(csrc: Path, arch: str = "") -> dict[int, KernelParams]:
    """The configuration each head dim builds with now on `arch` (as attention.cu picks it):
    that arch's kept tile, else one kept for every arch, else the hand-picked one."""
    current = dict(DEFAULTS)
    sm = sm_of(arch) if arch else EVERY_ARCH
    tiles = read_tiles(csrc)
    for wanted in dict.fromkeys((EVERY_ARCH, sm)):
        current.update({t.head_dim: t.params for t in tiles if t.sm == wanted and t.head_dim in current})
    return current


def kept_elsewhere(csrc: Path, arch: str) -> dict[int, list[KeptTile]]:
    """Per head dim, the tiles kept for other archs: where a search on this one starts looking."""
    sm = sm_of(arch)
    out: dict[int, list[KeptTile]] = {}
    for t in read_tiles(csrc):
        if t.sm != sm:
            out.setdefault(t.head_dim, []).append(t)
    return out


def keep(csrc: Path, arch: str, winners: Mapping[int, KernelParams], notes: Mapping[int, str],
         smem_limit: int) -> list[KeptTile]:
    """The table with `winners` kept for `arch`: its entries for other archs stay as they are."""
    sm = sm_of(arch)
    kept = [KeptTile(sm, d, p, smem_limit, notes.get(d, "")) for d, p in sorted(winners.items())]
    others = [t for t in read_tiles(csrc) if not (t.sm == sm and t.head_dim in winners)]
    return sorted(others + kept, key=lambda t: (-t.sm, t.head_dim))


def render(tiles: Sequence[KeptTile]) -> str:
    """The header holding `tiles`."""
    lines = ["// Written by `cockpit tune`: the tiles its confirmations kept, per GPU architecture and",
             "// head dim. csrc/attention.cu includes this file; a build for one arch uses that arch's",
             "// entry, else one for every arch (sm 0), else its hand-picked tile. Delete the file to go",
             "// back to the hand-picked tiles; -DCOCKPIT_ATTN_D128_BN=... on the command line still wins.",
             "#pragma once", "",
             "// {sm, D, BM, BN, warps, min blocks/SM, K/V stages, O staged in smem, Q in registers,",
             "//  opt-in shared memory per block of that arch}",
             "#define COCKPIT_ATTN_TUNED_TILES \\"]
    for t in tiles:
        p = t.params
        note = f"{p.label}. {t.note}".strip().replace("*/", "* /")
        if t.params.smem_bytes(t.head_dim) > L4_SMEM_LIMIT:
            note += f" {t.params.smem_bytes(t.head_dim) // 1024} KB per block: more than an L4 allows."
        values = (t.sm, t.head_dim, p.block_m, p.block_n, p.warps, p.min_blocks, p.stages,
                  int(p.o_smem), int(p.q_regs), t.smem_limit)
        lines += [f"  /* {t.arch} D={t.head_dim}: {note} */ \\",
                  "  {" + ", ".join(str(v) for v in values) + "}, \\"]
    lines += ["  /* end of the table */", ""]
    return "\n".join(lines)


def write_header(csrc: Path, text: str) -> Path:
    path = csrc / HEADER_NAME
    tmp = path.with_suffix(".h.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
