"""One H100 under the default 56-config bench (capture_comparable.sh on a lent box, 2026-11-23):
the card sat at its power cap for 30 % of the window. Judged for comparability the run stands,
with the cap and each implementation's clock shown; judged strictly it is suspect."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

from cockpit.config import Config
from cockpit.gates.bench.validity_rules import judge_probe_window

HERE = Path(__file__).parent / "fixtures" / "gpu" / "comparable"


def probe() -> dict:  # type: ignore[type-arg]
    return json.loads(gzip.decompress((HERE / "probe-bench.json.gz").read_bytes()))


def test_a_power_capped_h100_bench_is_comparable_and_says_so() -> None:
    verdict = judge_probe_window(probe())
    assert verdict["valid"], verdict["reasons"]
    assert any("power cap active for 28.2 s of the 93.1 s window" in n for n in verdict["notes"])


def test_the_same_window_judged_strictly_is_suspect_for_the_cap() -> None:
    strict = dataclasses.replace(Config().thresholds, validity="strict")
    verdict = judge_probe_window(probe(), strict)
    assert not verdict["valid"]
    assert any("power cap" in r for r in verdict["reasons"])


def test_ragged_sizes_are_correct_on_the_h100() -> None:
    gate = json.loads((HERE / "gate-correctness.json").read_text())
    assert gate["summary"].startswith("all 104/104 configs correct")
    sizes = {row["S"] for row in gate["result"]["rows"]}
    assert {1, 17, 65, 127, 1000, 4097} <= sizes
