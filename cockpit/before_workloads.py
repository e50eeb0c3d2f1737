"""What results written before workloads existed mean, and their upgrade to today's shapes.

The first sessions benchmarked one kernel, the attention example in csrc/, against PyTorch's
scaled_dot_product_attention and its backends, and their files did not say so. Each stored shape
from that time is upgraded here, where its one reader reads it: a bench probe's file, a bench
result, a tune event, a tuned setting's label, a report.json. Nothing writes these names any more;
nothing else in the cockpit knows that kernel. Plain JSON in, plain JSON out (ground layer)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

WORKLOAD = "attention"
"""The workload of a result that names none."""
BASELINE = "sdpa"
"""The reference its speedups were stated against."""
REFERENCES = ("sdpa", "flash")
"""The references its clocks were compared with (validity), the baseline first."""
LABELS = {"ours": "ours", "sdpa": "SDPA", "flash": "FLASH", "cudnn": "cuDNN", "efficient": "EFFICIENT"}
"""How its implementations are shown."""
PATHS = ("csrc/",)
"""What git may touch for a keep/revert that named no paths."""
BYTES = "4 * B * H * S * D * 2"
"""Its bytes per call: workloads/attention/attention.py's `moved` (tests/test_report_byte_model.py
holds them equal), for its rows, which stored none."""
BYTES_MEANING = "Q, K, V read and O written once, 2-byte elements"
TUNE_UNIT = " TFLOP/s"
"""What a tune of that kernel measured (today's searches state "x <baseline>")."""
TUNE_BASELINE = "FLASH"
TUNE_GROUP = "head_dim"
"""The key a tune's `tune_started` spaces named their group by (its group read "D=<value>")."""
_TUNE_KEYS = (("d", "group"), ("flash", "reference"))
"""Tune event keys then -> now (every search wrote these until the generic keys)."""
TILE_WORDS: dict[str, dict[str, str | dict[str, str]]] = {
    "groups": {"D": "head dim {}"},
    "knobs": {"block_m": "block {}x{block_n}", "block_n": "", "warps": "{} warp(s)",
              "min_blocks": "min {} block(s)/SM", "stages": "{} stage(s)",
              "o_smem": {"True": "O in shared memory", "False": "O in registers"},
              "q_regs": {"True": "Q in registers", "False": "Q in shared memory"}},
}
"""The words of that kernel's knobs for a setting its tile search journaled, which carried none
(workloads/attention/attention.py gives its knobs these: tests/test_knob_words.py holds them equal),
as a tune's decision journals words (cockpit/workload/knob_words.py)."""
_TILE_TOKENS = tuple((re.compile(pattern), name, values) for pattern, name, values in (
    (r"BM(\d+)", "block_m", None), (r"BN(\d+)", "block_n", None), (r"(\d+)w", "warps", None),
    (r"mb(\d+)", "min_blocks", None), (r"(\d+)st", "stages", None),
    (r"O:(smem|reg)", "o_smem", {"smem": "True", "reg": "False"}),
    (r"Q:(smem|reg)", "q_regs", {"smem": "False", "reg": "True"})))
"""The tile search's short tokens ("BM128", "4w", "O:smem"), as the knob each set and its value."""


def bench_probe(data: Mapping[str, object]) -> Mapping[str, object]:
    """A bench probe's file as today's probe writes it: one that names no baseline ran that kernel."""
    if "baseline" in data:
        return dict(data)
    return {**data, "workload": WORKLOAD, "ours": "ours", "candidates": ["ours"], "baseline": BASELINE,
            "labels": dict(LABELS), "compared": list(REFERENCES)}


def bench_result(result: Mapping[str, object],
                 from_rows: Callable[[str], tuple[float | None, int]]) -> Mapping[str, object]:
    """A bench result with no "schema" key in today's keys: what it measured, and its geometric
    means as `vs` ("geomean_vs_flash" under "flash"; `from_rows(reference)`, the geometric mean of
    the rows' speedups over it and their count, where a result from before the gate stored none)."""
    upgraded = {k: v for k, v in result.items() if k not in ("geomean_vs_flash", "configs")}
    speedup, flash = _positive(result.get("geomean_speedup")), _positive(result.get("geomean_vs_flash"))
    if flash is None:
        flash = from_rows("flash")[0]
    vs = {k: v for k, v in ((BASELINE, speedup), ("flash", flash)) if v is not None}
    upgraded.update(workload=WORKLOAD, ours="ours", candidates=["ours"], baseline=BASELINE,
                    labels=dict(LABELS), vs=vs)
    if speedup is not None:
        upgraded["configs"] = from_rows(BASELINE)[1]
    return upgraded


def _positive(value: object) -> float | None:
    """A finite number above 0, else None (a torn or hand-edited file)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    if value <= 0:
        return None
    return float(value)


def keep(decision: Mapping[str, object]) -> Mapping[str, object]:
    """A keep/revert decision: one that names no paths (before the bench named them) touched csrc/."""
    return dict(decision) if "paths" in decision else {**decision, "paths": list(PATHS)}


def validity(verdict: Mapping[str, object]) -> Mapping[str, object]:
    """A validity verdict that names no baseline but timed SDPA was stated against it."""
    clocks = verdict.get("clocks")
    if verdict.get("baseline") is not None or not isinstance(clocks, Mapping) or BASELINE not in clocks:
        return dict(verdict)
    return {**verdict, "baseline": BASELINE, "baseline_label": LABELS[BASELINE]}


def tune_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """A tune event in today's keys: `group` (an int "d" was a head dim: "D=64"), `reference`
    (was "flash"); a start with no unit measured TFLOP/s against FLASH, its spaces by head dim."""
    upgraded = dict(event)
    for old, new in _TUNE_KEYS:
        if old in upgraded and new not in upgraded:
            upgraded[new] = upgraded.pop(old)
    group = upgraded.get("group")
    if isinstance(group, int) and not isinstance(group, bool):
        upgraded["group"] = f"D={group}"
    if upgraded.get("type") == "tune_started":
        upgraded["spaces"] = [_space(s) for s in upgraded.get("spaces") or [] if isinstance(s, Mapping)]
        if "unit" not in upgraded:
            upgraded.update(unit=TUNE_UNIT, baseline=TUNE_BASELINE)
    return upgraded


def _space(space: Mapping[str, object]) -> Mapping[str, object]:
    if "group" in space or TUNE_GROUP not in space:
        return dict(space)
    rest = {k: v for k, v in space.items() if k != TUNE_GROUP}
    return {"group": f"D={space[TUNE_GROUP]}", **rest}


def report_outcome(outcome: Mapping[str, object], version: int) -> Mapping[str, object]:
    """A report.json outcome of versions 2 to 4 in today's fields: "vs_flash" (the best run against
    SDPA's FLASH backend) is in `vs` from version 3; a version 2 file's `vs` is made of it and of
    `best_speedup` (against SDPA, the one baseline then)."""
    upgraded = {k: v for k, v in outcome.items() if k != "vs_flash"}
    flash, best = outcome.get("vs_flash"), outcome.get("best_speedup")
    if version == 2 and flash is not None:
        upgraded["vs"] = [{"reference": r, "label": LABELS[r], "speedup": v}
                          for r, v in ((BASELINE, best), ("flash", flash))]
    return upgraded


def tile_setting(setting: str) -> str | None:
    """A setting that kernel's tile search journaled ("D=128 BM128 BN64 4w mb1 1st O:smem Q:smem": its
    group in a decision's summary, none in a trial's; no `Q:` for Q kept in registers) as today's
    knob search labels one ("D=128 block_m=128 block_n=64 warps=4 min_blocks=1 stages=1 o_smem=True
    q_regs=False"), to be read in `TILE_WORDS`; None for a setting in any other form."""
    tokens = setting.split()
    group = tokens[:1] if tokens[:1] and tokens[0].startswith("D=") else []  # a trial's names none
    knobs = [knob for token in tokens[len(group):] if (knob := _tile_knob(token)) is not None]
    return " ".join(group + knobs) if knobs and len(knobs) + len(group) == len(tokens) else None


def _tile_knob(token: str) -> str | None:
    """One short token as "knob=value"; None for a token that is none of the tile search's."""
    for pattern, name, values in _TILE_TOKENS:
        if (m := pattern.fullmatch(token)) is not None:
            return f"{name}={values[m.group(1)] if values else m.group(1)}"
    return None
