"""The profile places the kernel on its card's roofline from the workload's own counts at the
bench's time: the layer-norm tutorial's shape on an H100 (the recorded device-time visit) is far on
the memory side and no matrix product; an attention config is one."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cockpit.analysis.roofline import MATRIX_INTENSITY, place
from cockpit.gates.profile.result import ProfileResult
from cockpit.hardware.peaks import peak_for

RECORDED = Path(__file__).parent / "fixtures" / "gpu" / "device-time"


def row(name: str, config: str) -> dict[str, object]:
    gate = json.loads(gzip.decompress((RECORDED / name).read_bytes()))
    return next(r for r in gate["result"]["rows"] if r["config"] == config), gate["result"]["device"]


def test_the_layer_norm_sits_on_the_memory_side_and_does_no_matrix_math() -> None:
    r, device = row("layernorm.gate.json.gz", "M=4096 N=8192 fp16")
    ms = r["impl"]["ours"]["median_ms"]
    line = place(ms, r["flops"], r["bytes"], r["dtype"], peak_for(device))
    assert line is not None
    assert line.intensity == pytest.approx(1.75, abs=0.01) and line.side == "memory"
    assert not line.matrix_math
    assert line.pct_memory == pytest.approx(100 * r["impl"]["ours"]["gbps"] / 3350, rel=1e-6)
    assert line.line().startswith("1.75 FLOP/B, memory side of the 295 FLOP/B ridge (fp16): ")
    assert line.ceiling_ms < ms  # the card allows less than it took


def test_an_attention_config_is_a_matrix_product() -> None:
    r, device = row("attention-1.gate.json.gz", "B4 H16 S4096 D128 fp16 full")
    line = place(r["impl"]["ours"]["median_ms"], r["flops"], r["bytes"], r["dtype"], peak_for(device))
    assert line is not None and line.intensity > MATRIX_INTENSITY and line.matrix_math


def test_a_roofline_is_kept_in_the_profile_result_and_read_back() -> None:
    r, device = row("layernorm.gate.json.gz", "M=4096 N=8192 fp16")
    line = place(r["impl"]["ours"]["median_ms"], r["flops"], r["bytes"], r["dtype"], peak_for(device))
    back = ProfileResult.from_json(ProfileResult(roofline=line).to_json())
    assert back.roofline == line


def test_no_counts_no_card_no_roofline() -> None:
    assert place(0.03, None, 1e6, "fp16", peak_for("NVIDIA H100 80GB HBM3")) is None
    assert place(0.03, 1e6, 1e6, "fp16", peak_for("a card no one knows")) is None
