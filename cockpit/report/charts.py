"""Every chart a report draws, each as SVG or the one line that says why it is not there: the
speedup by shape and the roofline (`bench_charts.py`), and the GPU telemetry (`chart.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cockpit.report.bench_charts import roofline_chart, speedup_chart
from cockpit.report.chart import ChartUnavailable, render_chart
from cockpit.report.model import Report

NAMES = ("speedup", "roofline", "telemetry")


@dataclass(frozen=True)
class Drawn:
    svg: str | None
    note: str | None


def draw(report: Report) -> dict[str, Drawn]:
    """Each chart by name (NAMES): drawn, or why not."""
    out = {}
    for name in NAMES:
        try:
            out[name] = Drawn(_render(name, report), None)
        except ChartUnavailable as exc:
            out[name] = Drawn(None, str(exc))
    return out


def every_chart(by_name: Mapping[str, str | None] | None) -> dict[str, str | None]:
    """An entry for each of NAMES (None where `by_name` has none): what the templates read."""
    return {name: (by_name or {}).get(name) for name in NAMES}


def _render(name: str, report: Report) -> str:
    if name == "telemetry":
        return render_chart(report)
    if report.configs is None:
        raise ChartUnavailable(f"no bench in this session measured a config, so there is no {name} chart")
    return speedup_chart(report.configs) if name == "speedup" else roofline_chart(report.configs)
