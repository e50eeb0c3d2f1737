"""The committed example sessions get a roofline (issue 36, item 4): their bench runs were recorded
before the bench stored byte counts, so the report takes the bytes from the attention workload's
own model on each row's shape, keeps the recorded FLOPs and times, and says the bytes are a model."""

from __future__ import annotations

import html
import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from cockpit.before_workloads import BYTES as BEFORE_WORKLOADS_BYTES
from cockpit.cli import main
from cockpit.report.build import build_report
from cockpit.session.workspace import Workspace, resolve_session
from cockpit.workload.formula import parse_formula

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TUNED = "20261123-1109-332d-32-query-rows-per-warp-without-spills"
SOFTMAX = ROOT / "tests" / "fixtures" / "gpu" / "tune-knobs" / "softmax-h100-journal.jsonl"
SOFTMAX_ID = "20261123-2354-fcb0-tune-softmax"
SENTENCE = ("The bytes are the attention workload's model (4 · B · H · S · D · 2: Q, K, V read and O "
            "written once, 2-byte elements); run 008-bench was recorded before the bench stored byte counts.")


def svg_text(svg: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)]


def test_the_model_is_the_attention_workloads_own() -> None:
    """The formula the report evaluates gives what workloads/attention/attention.py's `moved` gives,
    on every shape of its bench grid: one model, not a second opinion."""
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location(
        "attention_example_bytes", ROOT / "workloads" / "attention" / "attention.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    formula = parse_formula(BEFORE_WORKLOADS_BYTES)
    assert module.BENCH
    for shape in module.BENCH:
        assert formula(**shape) == module.moved(**shape), shape
    assert module.WORKLOAD.bytes is module.moved


def test_the_example_sessions_rows_get_the_models_bytes_and_keep_their_recorded_flops(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    ws = Workspace(tmp_path / "examples")
    configs = build_report(ws, resolve_session(ws, TUNED), now=0.0).configs
    assert configs is not None and configs.has_roofline
    assert configs.bytes_model is not None and configs.bytes_model.startswith("bytes are the attention workload's")
    assert len(configs.rows) == 56
    for row in configs.rows:
        b, h, s, d = (int(v) for v in re.match(r"B(\d+) H(\d+) S(\d+) D(\d+)", row.config).groups())  # type: ignore[union-attr]
        assert row.bytes == 4 * b * h * s * d * 2
        assert row.flops == 4 * b * h * s * s * d / (2 if "causal" in row.config else 1)  # as recorded


def test_the_example_reports_draw_the_roofline_and_say_its_bytes_are_a_model(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    assert main(["--workspace", str(tmp_path / "examples"), "export", TUNED]) == 0
    session = tmp_path / "examples" / "sessions" / TUNED
    text = svg_text((session / "report-roofline.svg").read_text())
    assert ("arithmetic intensity (FLOP/byte, bytes: the attention workload's model, not recorded with "
            "the run)") in text
    assert {"ours", "SDPA (baseline)", "roof: 3,350 GB/s memory, 989 TFLOP/s fp16/bf16"} <= set(text)
    md = (session / "REPORT.md").read_text()
    roofline = md.split("## Roofline\n\n", 1)[1].split("\n\n## ", 1)[0]
    assert roofline.startswith("![Each config's achieved TFLOP/s")
    assert roofline.endswith("](report-roofline.svg)\n\n*" + SENTENCE.replace("(", "\\(").replace(")", "\\)") + "*")
    page = (session / "report.html").read_text()
    figure = page.split("<h2>Roofline</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<svg" in figure and SENTENCE in html.unescape(figure)


def test_a_run_that_stored_its_bytes_keeps_them_and_says_nothing_of_a_model(tmp_path: Path) -> None:
    folder = tmp_path / "softmax" / "sessions" / SOFTMAX_ID
    folder.mkdir(parents=True)
    shutil.copy(SOFTMAX, folder / "journal.jsonl")
    ws = Workspace(tmp_path / "softmax")
    configs = build_report(ws, resolve_session(ws, SOFTMAX_ID), now=0.0).configs
    assert configs is not None and configs.has_roofline and configs.bytes_model is None
