"""The tuned header: every winner a workload's tuned file keeps, as a C header its kernel can include
(`Extension(tuned_header="csrc/tuned_config.h")`), rewritten at every keep.

The build gate already passes the winners of the GPU it builds for as -D flags; the header is for
what that cannot reach: a build outside the cockpit (plain nvcc, setup.py), and a kernel that
describes how a build for *another* arch would launch (an L4 judged by the L4's tile while this box
is an H100). One X-macro lists every define of every winner with its arch:

    #define COCKPIT_TUNED(X) \\
      /* sm_90 D=128: 1.18x [1.16, 1.19] vs the values before (tune-20261124-062522) */ \\
      X(90, COCKPIT_ATTN_D128_BM, 128) \\
      X(90, COCKPIT_ATTN_D128_BN, 64) \\
      ...

so the kernel decides what to do with them (`#define X(sm, name, value) ...`). Only define knobs
are listed; a flag is 1 or 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from cockpit.hardware.limits import arch_of
from cockpit.session.live import atomic_write
from cockpit.workload.tuned import KnobDecl, Winner, define_flags, group_label

MACRO = "COCKPIT_TUNED"


def sm_number(arch: str) -> int:
    """ "sm_90" / "sm_90a" / "9.0" -> 90 (0 when it names no arch)."""
    name = arch_of(arch)
    return int(name.removeprefix("sm_")) if name else 0


def render(knobs: Sequence[KnobDecl], winners: Iterable[Winner], source: str) -> str:
    """The header for `winners` (those of every arch), naming the tuned file it was written from."""
    lines = [
        f"// Written by `cockpit tune` from {source}: each kept winner's -D values, per GPU arch.",
        "// The build gate passes the values of the GPU it builds for; this table is for builds",
        "// outside the cockpit and for a kernel that says how another arch's build launches. To go",
        f"// back to the source's values, delete the winner from {Path(source).name} and this file.",
        "#pragma once",
        "",
        "// X(sm, macro, value): sm 90 is sm_90",
        f"#define {MACRO}(X) \\",
    ]
    for w in sorted(winners, key=lambda w: (sm_number(w.arch), group_label(w.group))):
        flags = define_flags(knobs, w.knobs, w.group)
        if not flags:
            continue
        note = f"{w.arch} {group_label(w.group)}: {w.note} ({w.run})".replace("*/", "* /")
        lines.append(f"  /* {note} */ \\")
        for flag in flags:
            name, _, value = flag.removeprefix("-D").partition("=")
            lines.append(f"  X({sm_number(w.arch)}, {name}, {value}) \\")
    lines += ["  /* end of the table */", ""]
    return "\n".join(lines)


def write_header(path: Path, text: str) -> Path:
    """Written whole or not at all (session.live.atomic_write: one line when the disk refuses)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    return path
