"""A report to paste (issue 36, item 4): REPORT.md and report.html open with the outcome, then the
speedup by shape, the roofline and the per-config table worst first, then the rest; the charts
are labelled SVG; SESSION.md is rendered, never raw, never live. Drawn from the recorded H100
sessions under examples/ and the H100 softmax recording under tests/fixtures/."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import Config
from cockpit.gates.bench.result import read_bench_result
from cockpit.report.bench_charts import roofline_chart, speedup_chart
from cockpit.report.build import build_report
from cockpit.report.chart import ChartUnavailable
from cockpit.report.configs import configs_of
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import Workspace, create_session, resolve_session

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TUNED = "20261123-1109-332d-32-query-rows-per-warp-without-spills"
SOFTMAX = ROOT / "tests" / "fixtures" / "gpu" / "tune-knobs" / "softmax-h100-journal.jsonl"
SOFTMAX_ID = "20261123-2354-fcb0-tune-softmax"
ORDER = ("Outcome", "Speedup by shape", "Roofline", "Configs, worst first", "Session", "Phases",
         "Gate runs", "GPU telemetry", "Notes")


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    assert main(["--workspace", str(tmp_path / "examples"), "export", TUNED]) == 0
    return tmp_path / "examples" / "sessions" / TUNED


@pytest.fixture
def softmax(tmp_path: Path) -> Workspace:
    """The softmax tune recorded on the H100: its bench rows carry the workload's FLOPs and bytes."""
    folder = tmp_path / "softmax" / "sessions" / SOFTMAX_ID
    folder.mkdir(parents=True)
    shutil.copy(SOFTMAX, folder / "journal.jsonl")
    return Workspace(tmp_path / "softmax")


def svg_text(svg: str) -> list[str]:
    """The text the chart shows (matplotlib keeps it as <text> with svg.fonttype none)."""
    return [re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)]


def test_the_report_opens_with_the_outcome_then_the_charts_then_the_table(examples: Path) -> None:
    md = (examples / "REPORT.md").read_text()
    headings = [line[3:] for line in md.splitlines() if line.startswith("## ")]
    assert [h for h in headings if h in ORDER] == list(ORDER)
    assert headings[0] == "Outcome"
    outcome = md.split("## Outcome", 1)[1].split("## ", 1)[0]
    assert "**0.77x vs SDPA** — valid run 008-bench" in outcome
    assert "- **Decision:** KEEP: 1.20x \\[1.18, 1.20\\] vs the build before this change" in outcome
    assert "- **The one fix:** larger tiles" in outcome
    assert "![Speedup of ours and every timed reference" in md and "](report-speedup.svg)" in md
    html = (examples / "report.html").read_text()
    h2 = re.findall(r"<h2>(.*?)</h2>", html)
    assert [h for h in h2 if h in ORDER] == list(ORDER) and h2[0] == "Outcome"
    assert '<span class="number bad">0.77x vs SDPA</span>' in html  # valid, and under 1.0
    # the speedup chart sits right under the outcome, inline
    assert html.index("<h2>Speedup by shape</h2>") < html.index("<svg") < html.index("<h2>Roofline</h2>")


def test_the_speedup_chart_shows_ours_and_every_reference_labelled(examples: Path) -> None:
    svg = (examples / "report-speedup.svg").read_text()
    text = svg_text(svg)
    assert "speedup vs SDPA (x, higher is faster)" in text
    assert "config (bench grid order; all H16)" in text
    assert any(t.startswith("Speedup by shape: attention, run 008-bench, NVIDIA H100") for t in text)
    assert {"FLASH", "cuDNN", "EFFICIENT", "ours, p20-p80 interval", "SDPA (baseline) = 1.0",
            "launch cost (a call under 15 µs)"} <= set(text)
    assert "B4 S8192 D128 bf16 causal".replace("B4", "B2") in text  # every config named on x
    # the baseline's line is named in the legend: a label on the line covered cuDNN, which runs along it
    legend = svg.split('<g id="legend_1">', 1)[1]
    assert "SDPA (baseline) = 1.0" in svg_text(legend)
    assert "<script" not in svg.lower() and not re.search(r"(?:href|src)\s*=\s*\"(?!#)", svg)


def test_a_roofline_from_the_workloads_flops_and_bytes_under_the_h100s_roofs(softmax: Workspace) -> None:
    report = build_report(softmax, resolve_session(softmax, SOFTMAX_ID), now=0.0)
    assert report.configs is not None and report.configs.has_roofline
    svg = roofline_chart(report.configs)
    text = svg_text(svg)
    assert "arithmetic intensity (FLOP/byte, the workload's counts)" in text
    assert "achieved TFLOP/s (log)" in text
    assert "roof: 3,350 GB/s memory, 989 TFLOP/s fp16/bf16" in text  # H100 SXM datasheet, both dtypes
    assert {"ours", "torch.softmax (baseline)", "ridge 295 FLOP/B"} <= set(text)
    assert svg == roofline_chart(report.configs)  # the same bytes each time
    assert {"speedup vs torch.softmax (x, higher is faster)", "torch.compile"} <= set(svg_text(speedup_chart(report.configs)))


def test_without_byte_counts_the_roofline_is_one_line() -> None:
    """A run of another workload than the first one (whose bytes cockpit/before_workloads.py models)
    that stored FLOPs but no bytes is not given any: the report knows no model of that workload's
    bytes, so it says why there is no roofline."""
    recorded = json.loads((EXAMPLES / "sessions" / TUNED / "results" / "008-bench.json").read_text())
    result = read_bench_result(recorded)
    assert result is not None and result.schema == 1
    as_schema_2 = read_bench_result({**result.to_json(), "workload": "my-attention"})
    assert as_schema_2 is not None and as_schema_2.schema == 2
    configs = configs_of(as_schema_2, "008-bench", True)
    assert configs.bytes_model is None and not configs.has_roofline
    with pytest.raises(ChartUnavailable, match=r"^the rows of run 008-bench carry FLOP counts but no byte "
                       r"counts \(the workload declared no model for them when it was benched\), so there "
                       r"is no roofline$"):
        roofline_chart(configs)


def test_the_config_table_is_worst_first_with_intervals_and_clocks(examples: Path) -> None:
    md = (examples / "REPORT.md").read_text()
    section = md.split("## Configs, worst first", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("| ").split(" | ")]
    assert header[:4] == ["config", "vs SDPA \\(x\\)", "p20-p80 \\(x\\)", "ours \\(ms\\)"]
    assert "MHz ours/SDPA" in header and "TFLOP/s" in header
    rows = [[c.strip() for c in line.strip("| ").split(" | ")] for line in lines[1:]]
    assert len(rows) == 56
    speedups = [float(r[1]) for r in rows]
    assert speedups == sorted(speedups) and speedups[0] == 0.57
    for r in rows:
        low, high = map(float, r[2].split("–"))
        assert low <= float(r[1]) <= high
    assert rows[0][header.index("MHz ours/SDPA")] == "1980/1980"
    html = (examples / "report.html").read_text()
    assert "<th>vs SDPA (x)</th><th>p20-p80 (x)</th><th>ours (ms)</th>" in html


def test_session_md_is_rendered_and_what_it_holds_stays_text(tmp_path: Path, examples: Path) -> None:
    html = (examples / "report.html").read_text()
    notes = html.split("<h2>Notes</h2>", 1)[1]
    assert "<h2>Plan</h2>" in notes and "<th>Phase</th>" in notes and "<strong>Objective:</strong>" in notes
    assert "**Objective:**" not in notes  # rendered, not raw
    session = tmp_path / "examples" / "sessions" / TUNED
    (session / "SESSION.md").write_text("# Mine\n<script>alert(1)</script> <img src=x onerror=alert(1)>\n"
                                        "[click](javascript:alert(1)) ![pixel](https://example.com/p.png)\n")
    assert main(["--workspace", str(tmp_path / "examples"), "export", TUNED, "--format", "html"]) == 0
    notes = (session / "report.html").read_text().split("<h2>Notes</h2>", 1)[1]
    assert "<h1>Mine</h1>" in notes and "&lt;script&gt;alert(1)&lt;/script&gt;" in notes
    assert "<script" not in notes and "<img" not in notes and "javascript:" not in notes.split("[click]")[0]
    assert 'href="javascript' not in notes and 'src="https' not in notes


def test_without_matplotlib_each_chart_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["--workspace", str(tmp_path / "examples"), "export", TUNED]) == 0
    assert capsys.readouterr().err.strip() == "cockpit: the chart needs matplotlib: pip install -e '.[report]'"
    md = (tmp_path / "examples" / "sessions" / TUNED / "REPORT.md").read_text()
    speedup = md.split("## Speedup by shape\n\n", 1)[1].split("\n\n", 1)[0]
    assert speedup == "the chart needs matplotlib: pip install -e '.\\[report\\]'"
    assert ".svg)" not in md and "| B4 H16 S1024 D128 fp16 causal | 0.57 |" in md  # the table stays


def test_a_session_with_no_bench_says_so_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(tmp_path), "new", "nothing measured"]) == 0
    capsys.readouterr()
    assert main(["--workspace", str(tmp_path), "export"]) == 0
    session = next((tmp_path / "sessions").iterdir())
    md = (session / "REPORT.md").read_text()
    assert "**no valid benchmark** — not a result" in md
    assert "no bench in this session measured a config, so there is no speedup chart" in md
    assert "No bench in this session measured a config." in md
    html = (session / "report.html").read_text()
    assert "<span class=\"number invalid\">no valid benchmark</span>" in html
    top = html.split("<h2>Session</h2>", 1)[0]
    assert "<figure" not in top and "<svg" not in top and "<table" not in top  # no empty frame
    assert "no bench in this session measured a config, so there is no roofline chart" in top
    assert "<ul>\n</ul>" not in html  # no telemetry: no empty list under the line that says so
    assert not list(session.glob("*.svg"))


def bench_session(ws: Workspace, result: dict[str, object], status: str) -> Path:
    ref = create_session(ws, Config(), "a bench that came to little", "optimize", 1_795_300_000.0)
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(1_795_300_010.0, "001-bench", "bench", ("x",), "logs/001-bench.log", 1))
    writer.append(ev.gate_finished(1_795_300_070.0, "001-bench", "bench", status, "what it came to", 60.0,
                                   1 if status == "fail" else 0, "logs/001-bench.log", result))
    writer.close()
    return ref.path


def test_a_bench_that_died_before_measuring_draws_no_chart_frame(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    ws = Workspace(tmp_path)
    session = bench_session(ws, {"error": "CUDA error: out of memory", "rows": []}, "fail")
    assert main(["--workspace", str(tmp_path), "export"]) == 0
    capsys.readouterr()
    md, html = (session / "REPORT.md").read_text(), (session / "report.html").read_text()
    assert "**no valid benchmark** — not a result" in md
    assert "- **Result:** no valid benchmark: 1 run\\(s\\), all suspect or failed" in md
    for name in ("speedup", "roofline"):
        assert f"no bench in this session measured a config, so there is no {name}" in md
    assert "<figure" not in html.split("<h2>Session</h2>", 1)[0]
    assert not list(session.glob("report-*.svg"))


def test_rows_on_an_unknown_gpu_get_the_speedup_chart_and_say_why_no_roofline(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = {"config": "N=1024", "shape": {"N": 1024}, "flops": 2048.0, "bytes": 8192.0,
           "impl": {"ours": {"median_ms": 0.05}, "ref": {"median_ms": 0.06}}, "speedup_vs_ref": 1.2}
    result = {"schema": 2, "workload": "tiny", "ours": "ours", "candidates": ["ours"], "baseline": "ref",
              "labels": {"ours": "ours", "ref": "ref"}, "rows": [row], "device": "Some Future GPU",
              "geomean_speedup": 1.2, "configs": 1, "vs": {"ref": 1.2}}
    ws = Workspace(tmp_path)
    session = bench_session(ws, result, "warn")
    assert main(["--workspace", str(tmp_path), "export"]) == 0
    capsys.readouterr()
    md = (session / "REPORT.md").read_text()
    assert "](report-speedup.svg)" in md
    roofline = md.split("## Roofline\n\n", 1)[1].split("\n\n## ", 1)[0]
    assert roofline == ("no datasheet peak is known for Some Future GPU \\(cockpit/hardware/peaks.py\\), "
                        "so there is no roofline")
    assert not (session / "report-roofline.svg").exists()
