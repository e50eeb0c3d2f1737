"""Urgency words say urgency: a bench's level is said as what it asks of the engineer ("behind the
baseline: one fix at a time"), never as "HIGH", which reads as a grade of speed; in the gate's
summary line and in the TUI, for runs journaled before the words too."""

from __future__ import annotations

import json
from pathlib import Path

from cockpit.analysis.decide import URGENCY
from cockpit.session.state import GateRunRecord
from cockpit.ui.controllers.gate_heads import summary_said

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "gpu" / "gates" / "gate-bench.json").read_text())


def test_a_bench_journaled_with_its_raw_level_reads_in_words_of_urgency_in_the_tui() -> None:
    assert "(HIGH)" in RECORDED["summary"]  # the H200 run, journaled before the words
    run = GateRunRecord("001-bench", "bench", 0.0, 1, "logs/001-bench.log", 40.0, RECORDED["status"],
                        RECORDED["summary"], result_inline=RECORDED["result"])
    said = summary_said(run)
    assert said.startswith("0.65x vs SDPA (behind the baseline: one fix at a time) over 56 configs")
    assert not any(f"({level})" in said for level in URGENCY)


def test_another_gate_s_words_are_left_as_they_were_journaled() -> None:
    run = GateRunRecord("002-env", "env", 0.0, 1, "logs/002-env.log", 5.0, "warn", "3 warnings (HIGH)",
                        result_inline={"level": "HIGH"})
    assert summary_said(run) == "3 warnings (HIGH)"
