"""A tuned setting in a reviewer's words (issue 47): "D=128 BM128 BN64 4w mb1 1st O:smem Q:smem" in a
pull request reads "head dim 128: block 128x64, 4 warps, ...". The tune keeps its short labels in
its pane, its commit message and the tuned file; the reports spell them out, for the tile search's
labels in the recorded sessions and for today's knob search alike."""

from __future__ import annotations

import json
from pathlib import Path

from cockpit.tune.space import label
from cockpit.workload.knob_words import spelled
from cockpit.workload.tuned import KnobDecl, group_label

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "sessions"


def recorded_labels() -> set[str]:
    """Every setting the example sessions' tunes measured (their `tune_trial` events)."""
    return {e["config"] for journal in EXAMPLES.glob("*/journal.jsonl")
            for e in map(json.loads, journal.read_text().splitlines()) if e["type"] == "tune_trial"}


def test_the_recorded_tiles_read_in_words() -> None:
    assert spelled("D=128 BM128 BN64 4w mb1 1st O:smem Q:smem") == (
        "head dim 128: block 128x64, 4 warps, min 1 block/SM, 1 stage, O in shared memory, Q in shared memory")
    assert spelled("D=64 BM128 BN128 8w mb2 2st O:reg") == (
        "head dim 64: block 128x128, 8 warps, min 2 blocks/SM, 2 stages, O in registers")
    labels = recorded_labels()
    assert len(labels) > 50
    for short in labels:  # every token of every recorded tile has its words: none is left as written
        words = spelled(short)
        assert not any(token in words for token in short.split()), (short, words)


def test_the_knob_search_s_labels_read_in_the_same_words() -> None:
    """The attention workload's knobs as today's tune labels them (workloads/attention/attention.py)."""
    knobs = [KnobDecl(name, "define", f"COCKPIT_ATTN_D{{D}}_{name.upper()}", None)
             for name in ("block_m", "block_n", "warps", "min_blocks", "stages", "o_smem", "q_regs")]
    short = f"{group_label({'D': 128})} {label(knobs, (128, 64, 4, 1, 1, True, False))}"
    assert short == "D=128 block_m=128 block_n=64 warps=4 min_blocks=1 stages=1 o_smem=True q_regs=False"
    assert spelled(short) == spelled("D=128 BM128 BN64 4w mb1 1st O:smem Q:smem")


def test_another_workload_s_knobs_read_as_their_author_wrote_them() -> None:
    assert spelled("N=4096 num_warps=8 ROWS=2") == "N=4096, 8 warps, ROWS=2"
    assert spelled("all ROWS_PER_BLOCK=4 VEC=8 LONG_THREADS=src") == (
        "ROWS_PER_BLOCK=4, VEC=8, LONG_THREADS from the source")
