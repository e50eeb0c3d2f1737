"""A tuned setting in a reviewer's words (issue 47), as the workload gave them: "D=128 block_m=128
block_n=64 ..." in a pull request reads "head dim 128: block 128x64, 4 warps, ...". The words live on
the workload's `Knob`s and `group_words`; the manifest carries them out of the workload's child, a
tune journals them with its decision, and the report spells the kept setting in them. The cockpit
knows no kernel's knobs: a setting journaled without words reads as written, and the tile search's
labels from before workloads read in the words cockpit/before_workloads.py keeps for that kernel."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from cockpit import before_workloads
from cockpit.analysis.keep import KeepResult
from cockpit.cli import tune as tune_cli
from cockpit.probes.workload_load import manifest_json
from cockpit.report.decision_line import decision_line
from cockpit.report.decisions import TUNE, decision_words
from cockpit.report.model import KeepDecisionRow
from cockpit.session.journal import JournalWriter, read_journal
from cockpit.tune.space import label
from cockpit.workload.knob_words import KnobWords, spelled
from cockpit.workload.manifest import ManifestError, manifest_from_json
from cockpit.workload.spec import Knob, Reference, Workload, axes
from cockpit.workload.tuned import KnobDecl, group_label

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "sessions"
TILE_WORDS = KnobWords.from_json(before_workloads.TILE_WORDS)
ATTENTION_LIKE = "D=128 block_m=128 block_n=64 warps=4 min_blocks=1 stages=1 o_smem=True q_regs=False"
IN_WORDS = ("head dim 128: block 128x64, 4 warps, min 1 block/SM, 1 stage, O in shared memory, "
            "Q in shared memory")


def recorded_labels() -> set[str]:
    """Every setting the example sessions' tunes measured (their `tune_trial` events)."""
    return {e["config"] for journal in EXAMPLES.glob("*/journal.jsonl")
            for e in map(json.loads, journal.read_text().splitlines()) if e["type"] == "tune_trial"}


def row(summary: str) -> KeepDecisionRow:
    return KeepDecisionRow(1.0, "keep", summary, True, 0.31, None, None, TUNE, (1.28, 1.34), "the tuned values")


def softmax_like(**words: Any) -> Workload:
    """A workload with two knobs kept per N, `words` on them by name (`N` for the group's)."""
    group = {k: words.pop(k) for k in list(words) if k == "N"}
    knobs = tuple(Knob(name, (1, 2, 4), via="kwarg", words=words.get(name)) for name in ("ROWS", "num_warps"))
    return Workload(name="softmax-like", candidates={"ours": lambda x: x}, references=(Reference("ref", len),),
                    make_inputs=lambda seed, **_: (), test_grid=axes(N=[7]), bench_grid=axes(N=[4096]),
                    knobs=knobs, keep_per=("N",), group_words=group)


def test_the_recorded_tiles_read_in_the_words_kept_for_their_kernel() -> None:
    assert before_workloads.tile_setting("D=128 BM128 BN64 4w mb1 1st O:smem Q:smem") == ATTENTION_LIKE
    assert spelled(ATTENTION_LIKE, TILE_WORDS) == IN_WORDS
    assert decision_line(row("KEEP: D=64 BM128 BN128 8w mb2 2st O:reg 1.31x vs current, 1.12x FLASH")) == (
        "KEEP: 1.31x [1.28, 1.34] vs the build before this change (the tuned values), 1.12x vs FLASH, with "
        "head dim 64: block 128x128, 8 warps, min 2 blocks/SM, 2 stages, O in registers; done, no commit recorded")
    labels = recorded_labels()
    assert len(labels) > 50
    for short in labels:  # every token of every recorded tile has its words: none is left as written
        tiles = before_workloads.tile_setting(short)
        assert tiles is not None, short
        words = spelled(tiles, TILE_WORDS)
        assert not any(token in words for token in short.split()), (short, words)
    assert before_workloads.tile_setting("D=128 block_m=128 warps=4") is None  # today's labels are not tiles
    assert before_workloads.tile_setting("D=128 BM128 ROWS=2") is None


def test_the_attention_workload_gives_its_knobs_the_words_kept_for_its_old_tiles() -> None:
    """One set of words: the example workload's own (workloads/attention/attention.py), which the
    words kept for the recorded tiles repeat."""
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("attention_example_words",
                                                  ROOT / "workloads" / "attention" / "attention.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    manifest = manifest_from_json(manifest_json(module.WORKLOAD, "workloads/attention/attention.py"))
    assert manifest.words == TILE_WORDS
    decls = [KnobDecl(k.name, k.via, k.macro, k.start) for k in manifest.knobs]
    short = f"{group_label({'D': 128})} {label(decls, (128, 64, 4, 1, 1, True, False))}"
    assert short == ATTENTION_LIKE and spelled(short, manifest.words) == IN_WORDS


def test_a_workload_s_words_travel_in_its_manifest_and_a_tune_s_decision() -> None:
    workload = softmax_like(ROWS="{} row(s) per block", num_warps="{} warp(s)", N="rows of {}")
    data = manifest_json(workload, "w.py")
    manifest = manifest_from_json(json.loads(json.dumps(data)))
    words = manifest.words
    assert words is not None and manifest_from_json(json.loads(json.dumps(data))) == manifest
    assert KnobWords.from_json(json.loads(json.dumps(words.to_json()))) == words
    assert spelled("N=4096 ROWS=1 num_warps=8", words) == "rows of 4096: 1 row per block, 8 warps"
    # a manifest described before words (a cached one of an older cockpit) has none
    old = {**data, "knobs": [{k: v for k, v in knob.items() if k != "words"} for knob in data["knobs"]]}
    assert manifest_from_json({k: v for k, v in old.items() if k != "group_words"}).words is None
    assert manifest_from_json(manifest_json(softmax_like(), "w.py")).words is None


def test_words_are_text_never_a_computation() -> None:
    for bad in ("{:>999999999}", "{0.__class__}", "{x[0]}", "{!r}", "{", 3, {"True": 1}):
        with pytest.raises(ManifestError, match=r"knobs\.ROWS\.words"):
            manifest_from_json(manifest_json(softmax_like(ROWS=bad), "w.py"))
    journaled = KnobWords.from_json({"knobs": {"ROWS": "{:>999999999}", "num_warps": "{} warp(s)"}})
    assert journaled == KnobWords({"num_warps": "{} warp(s)"})  # a journal's bad words are left out
    assert spelled("N=4096 ROWS=2 num_warps=1", journaled) == "N=4096, ROWS=2, 1 warp"


def test_another_workload_s_knobs_read_as_their_author_wrote_them() -> None:
    words = KnobWords({"num_warps": "{} warp(s)", "LONG_THREADS": "{} threads", "VEC": {"8": "8-wide loads"},
                       "ROWS": "{} rows over {TILE}"})
    assert spelled("N=4096 num_warps=8 ROWS=2", words) == "N=4096, 8 warps, ROWS=2"  # ROWS names no TILE here
    assert spelled("all ROWS_PER_BLOCK=4 VEC=8 LONG_THREADS=src", words) == (
        "ROWS_PER_BLOCK=4, 8-wide loads, LONG_THREADS from the source")
    assert spelled("all VEC=4", words) == "VEC=4"  # a value its words do not name
    assert spelled("N=4096 num_warps=8 ROWS=2", None) == "N=4096 num_warps=8 ROWS=2"  # no words: as written
    assert spelled("N=4096 num_warps=8 ROWS=2", KnobWords()) == "N=4096 num_warps=8 ROWS=2"


def test_a_tune_journals_its_words_with_its_decision_and_the_pr_spells_its_setting(tmp_path: Path) -> None:
    summary = "KEEP: N=4096 ROWS=2 num_warps=8 1.31x vs current, 1.12x torch.softmax"
    result: Any = {"keep": KeepResult("keep", summary, 0.31, interval=(1.28, 1.34)).to_json(),
                   "confidence": [], "bench": None}
    words = KnobWords({"ROWS": "{} row(s) per block", "num_warps": "{} warp(s)"}, {"N": "rows of {}"})
    writer = JournalWriter(tmp_path / "journal.jsonl")
    tune_cli._journal_kept(writer, "tune-1", result, words)
    writer.close()
    events = read_journal(tmp_path / "journal.jsonl").events
    assert decision_words(events) == words
    assert decision_line(row(summary), decision_words(events)) == (
        "KEEP: 1.31x [1.28, 1.34] vs the build before this change (the tuned values), 1.12x vs torch.softmax, "
        "with rows of 4096: 2 rows per block, 8 warps; done, no commit recorded")
    assert decision_line(row(summary)).endswith(  # a decision journaled before words: as written
        "with N=4096 ROWS=2 num_warps=8; done, no commit recorded")
