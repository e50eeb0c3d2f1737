"""report.svg: the session's GPU telemetry on one time axis — utilization, power, temperature and
SM clock — with the phases shaded and named and each gate run marked. Phase names take two rows
above the top panel and never overlap (`chart_labels.py`); a name shortened or left out for want of
room shows as the phase's tooltip (an SVG <title>), as every phase's name does.

matplotlib draws it with its SVG backend alone (no Agg, no GUI), imported only when a report is
exported; text stays text (`svg.fonttype: none`) and ids are salted with a constant, so the same
report draws the same bytes. The SVG is then trimmed to what an inline <svg> needs: no DOCTYPE,
no metadata block, and a check that nothing in it can run or fetch.
"""

from __future__ import annotations

import io
import re
from html import escape
from typing import TYPE_CHECKING

from cockpit.errors import CockpitError
from cockpit.gates.gate import COULD_NOT_RUN
from cockpit.report.chart_labels import FONT_PT, OFFSET_PT, place_labels
from cockpit.report.model import Report, Span

if TYPE_CHECKING:
    from matplotlib.axes import Axes

INSTALL_HINT = "the chart needs matplotlib: pip install -e '.[report]'"
PANELS = (("util", "util %", (0.0, 105.0)), ("power_w", "power W", None),
          ("temp_c", "temp °C", None), ("sm_clock_mhz", "SM MHz", None))
MAX_POINTS = 1200
GATE_COLORS = {"pass": "#2e7d32", "warn": "#ef6c00", "fail": "#c62828", COULD_NOT_RUN: "#8e24aa"}
"""A run that could not run in a colour of its own: not a failure's red, not a cancel's grey."""
_UNSAFE = re.compile(r"<script|javascript:|\bon[a-z]+\s*=|(?:href|src)\s*=\s*[\"'](?!#)", re.I)


class ChartUnavailable(CockpitError):
    """No chart this time; the message says why in one line."""


def render_chart(report: Report) -> str:
    """The chart as SVG text; ChartUnavailable when there is no telemetry or no matplotlib."""
    if not any(s.t for s in report.telemetry):
        raise ChartUnavailable("no GPU telemetry was kept for this session, so there is no chart")
    try:
        import matplotlib
        from matplotlib.backends.backend_svg import FigureCanvasSVG
        from matplotlib.figure import Figure
    except ImportError:
        raise ChartUnavailable(INSTALL_HINT) from None
    start = report.started_t
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "cockpit-report",
                                "font.size": 8, "axes.titlesize": 8, "text.usetex": False}):
        fig = Figure(figsize=(10, 6.4))
        FigureCanvasSVG(fig)
        axes = fig.subplots(len(PANELS), 1, sharex=True)
        for ax, (field, label, limits) in zip(axes, PANELS, strict=True):
            for s in report.telemetry:
                xs, ys = _points(s.t, getattr(s, field), start)
                ax.plot(xs, ys, linewidth=0.8, label=f"GPU {s.gpu}")
            ax.set_ylabel(label)
            if limits:
                ax.set_ylim(*limits)
            _phases(ax, report.spans, start)
            ax.grid(True, linewidth=0.3, alpha=0.5)
        _gate_marks(axes[0], report.spans, start)
        axes[-1].set_xlabel("minutes since the session started")
        if len(report.telemetry) > 1:
            axes[0].legend(loc="lower right", fontsize=6)
        fig.subplots_adjust(left=0.07, right=0.99, top=0.93, bottom=0.08, hspace=0.12)
        names = _phase_names(axes[0], report.spans, start, fig.get_figwidth() * 72)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None, "Format": None,
                                                 "Type": None})
    return safe_svg(_titled(out.getvalue(), names))


def _points(ts: tuple[float, ...], values: tuple[float | None, ...],
            start: float) -> tuple[list[float], list[float]]:
    """Minutes and values, averaged into at most `MAX_POINTS` buckets (an 8-hour track has
    5,760 rows; the chart is ~1,000 pixels wide); a gap over 60 s (the cockpit was closed)
    breaks the line."""
    step = max(1, -(-len(ts) // MAX_POINTS))
    xs: list[float] = []
    ys: list[float] = []
    last = None
    for i in range(0, len(ts), step):
        chunk_t, chunk_v = ts[i:i + step], values[i:i + step]
        if last is not None and chunk_t[0] - last > 60:
            xs.append((last + chunk_t[0]) / 2 / 60 - start / 60)
            ys.append(float("nan"))
        known = [v for v in chunk_v if v is not None]
        xs.append((sum(chunk_t) / len(chunk_t) - start) / 60)
        ys.append(sum(known) / len(known) if known else float("nan"))
        last = chunk_t[-1]
    return xs, ys


def _label(text: str) -> str:
    # matplotlib reads $...$ as math: a literal dollar keeps a phase named "$HOME" a name.
    return text.replace("$", r"\$")


def _phase_spans(spans: tuple[Span, ...]) -> list[Span]:
    return sorted((s for s in spans if s.kind == "phase"), key=lambda s: s.start_t)


def _phases(ax: Axes, spans: tuple[Span, ...], start: float) -> None:
    """A line where each phase starts and every other phase shaded: two collections per panel,
    however many phases a week-long session visited (one artist each took 2.5 s for 111)."""
    from matplotlib.collections import LineCollection, PolyCollection

    phases = _phase_spans(spans)
    if not phases:
        return
    where = ax.get_xaxis_transform()  # x in minutes, y from 0 to 1 of the panel
    starts = [(s.start_t - start) / 60 for s in phases]
    ax.add_collection(LineCollection([[(x, 0), (x, 1)] for x in starts], colors="#555555",
                                     linewidths=0.6, transform=where), autolim=False)
    shaded = [((s.start_t - start) / 60, (s.end_t - start) / 60) for s in phases[1::2]]
    if shaded:
        ax.add_collection(PolyCollection([[(a, 0), (b, 0), (b, 1), (a, 1)] for a, b in shaded],
                                         facecolors="#000000", alpha=0.04, linewidths=0,
                                         transform=where), autolim=False)


def _phase_names(ax: Axes, spans: tuple[Span, ...], start: float, figure_pt: float) -> list[str]:
    """Each phase's name above the top panel where it fits (`place_labels`), and over the whole
    phase an all but transparent band (`phase-N`) to carry its tooltip; the names, by N.
    Call it once the axes' limits and position are final: it converts minutes to points."""
    phases = _phase_spans(spans)
    x0, x1 = ax.get_xlim()
    where = ax.get_position()
    panel = where.width * figure_pt
    labels = place_labels([(s.label, ((s.start_t - start) / 60 - x0) / (x1 - x0) * panel)
                           for s in phases], (1 - where.x0) * figure_pt)  # up to the figure's edge
    for i, (span, label) in enumerate(zip(phases, labels, strict=True)):
        ax.axvspan((span.start_t - start) / 60, (span.end_t - start) / 60, color="#000000",
                   alpha=0.001, linewidth=0, gid=f"phase-{i}")
        if label.text:
            ax.annotate(_label(label.text), xy=((span.start_t - start) / 60, 1.0),
                        xycoords=("data", "axes fraction"), xytext=(OFFSET_PT[0], label.y_pt),
                        textcoords="offset points", fontsize=FONT_PT, ha="left", va="baseline",
                        annotation_clip=False, gid=f"phase-label-{i}")
    ax.set_xlim(x0, x1)  # the bands must not widen what the names were placed against
    return [s.label for s in phases]


def _titled(svg: str, names: list[str]) -> str:
    """Each phase's band, and its label, with the phase's name as a tooltip."""
    for i, name in enumerate(names):
        title = f"<title>{escape(name, quote=False)}</title>"
        for gid in (f"phase-{i}", f"phase-label-{i}"):
            svg = svg.replace(f'<g id="{gid}">', f'<g id="{gid}">{title}', 1)
    return svg


def _gate_marks(ax: Axes, spans: tuple[Span, ...], start: float) -> None:
    """Each gate run as a bar along the top of the utilization panel, coloured by its status
    (one collection per colour: 200 runs are 4 SVG groups, not 200)."""
    bars: dict[str, list[tuple[float, float]]] = {}
    for span in (s for s in spans if s.kind != "phase"):
        color = GATE_COLORS.get(span.kind, "#757575")
        bars.setdefault(color, []).append(((span.start_t - start) / 60,
                                           max((span.end_t - span.start_t) / 60, 0.05)))
    for color, ranges in sorted(bars.items()):
        ax.broken_barh(ranges, (100, 5), color=color, linewidth=0)


def safe_svg(svg: str) -> str:
    """The SVG without its XML prologue, DOCTYPE (an external DTD URL) and metadata; refused if
    anything in it could run a script or fetch something."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    if _UNSAFE.search(svg):
        raise ChartUnavailable("the chart came out with a script or an external link; it was left out")
    return svg
