"""`csrc/tuned_config.h`: where a kept winner goes, and where the current configuration is read.

attention.cu includes it when it exists (`__has_include`), so every build picks the winner up
(the build gate, nvcc by hand, bench/kernel_check.py) without a flag, and it lives in csrc/,
which keep and revert already commit and restore: a tuned configuration is kept or reverted as
any other kernel change. A -D on the command line still overrides it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from cockpit.tune.space import DEFAULTS, TUNABLES, KernelParams

HEADER_NAME = "tuned_config.h"
L4_SMEM_LIMIT = 99 * 1024
"""The kernel's static_assert bound unless the header raises it (COCKPIT_ATTN_MAX_SMEM)."""

_DEFINE = re.compile(r"^#define\s+COCKPIT_ATTN_D(\d+)_([A-Z_]+)\s+(\d+)\s*$", re.MULTILINE)


def read_current(csrc: Path) -> dict[int, KernelParams]:
    """The configuration each head dim builds with now: the header's, else the hand-picked one."""
    current = dict(DEFAULTS)
    try:
        text = (csrc / HEADER_NAME).read_text(encoding="utf-8")
    except FileNotFoundError:
        return current
    found: dict[int, dict[str, int]] = {}
    for d, macro, value in _DEFINE.findall(text):
        found.setdefault(int(d), {})[macro] = int(value)
    for d, macros in found.items():
        if d in current:
            base = current[d].as_dict()
            for t in TUNABLES:
                if t.macro in macros:
                    value = macros[t.macro]
                    base[t.name] = bool(value) if isinstance(base[t.name], bool) else value
            current[d] = KernelParams.from_dict(base)
    return current


def render(configs: Mapping[int, KernelParams], notes: Mapping[int, str], target_smem: int) -> str:
    """The header for these configurations; `notes`: one line per head dim (how it was chosen)."""
    lines = ["// Written by `cockpit tune`: the kernel configuration its confirmation kept, per head dim.",
             "// csrc/attention.cu includes this file when it exists; delete it to go back to the",
             "// hand-picked defaults. A -DCOCKPIT_ATTN_... on the command line still overrides it.",
             "#pragma once", ""]
    for d in sorted(configs):
        params = configs[d]
        lines.append(f"// D={d}: {params.label}. {notes.get(d, '')}".rstrip())
        for t in TUNABLES:
            lines += [f"#ifndef COCKPIT_ATTN_D{d}_{t.macro}",
                      f"#define COCKPIT_ATTN_D{d}_{t.macro} {int(getattr(params, t.name))}", "#endif"]
        lines.append("")
    needed = max(p.smem_bytes(d) for d, p in configs.items())
    if needed > L4_SMEM_LIMIT:
        lines += [f"// {needed // 1024} KB of shared memory per block: more than an L4 (sm_89) allows,",
                  "// so this build runs on the GPU it was tuned for, not on an L4 (the build gate says so).",
                  "#ifndef COCKPIT_ATTN_MAX_SMEM", f"#define COCKPIT_ATTN_MAX_SMEM {target_smem}", "#endif",
                  ""]
    return "\n".join(lines)


def write_header(csrc: Path, text: str) -> Path:
    path = csrc / HEADER_NAME
    tmp = path.with_suffix(".h.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
