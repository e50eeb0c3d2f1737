"""The report's two bench charts, from the run `configs.py` reads: the speedup of ours and of
every timed reference over the baseline, config by config across the bench grid; and each config
on the GPU's roofline (achieved TFLOP/s against FLOPs per byte, under the memory and compute
roofs of the card's datasheet peaks).

Drawn like report.svg (`chart.py`): matplotlib's SVG backend alone, imported only here, text kept
as text, the same bytes for the same report, checked by `safe_svg`. Sized for a page 900 px wide.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from cockpit.analysis.roofline import place, ridge
from cockpit.report.chart import INSTALL_HINT, ChartUnavailable, safe_svg
from cockpit.report.configs import LAUNCH_COST_MS
from cockpit.report.model import BenchConfigs, ConfigRow

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from cockpit.hardware.peaks import Peak

OURS_COLOR = "#1565c0"
REFERENCE_COLORS = ("#ef6c00", "#6a1b9a", "#2e7d32", "#ad1457", "#00838f", "#5d4037", "#9e9d24")
LAUNCH_SHADE = "#9e9e9e"


def speedup_chart(configs: BenchConfigs) -> str:
    """Ours and each reference over the baseline (1.0) per config, in the grid's order; ours with
    its interval; configs whose time is the launch shaded."""
    rows = configs.rows
    if not any(r.speedup for r in rows):
        raise ChartUnavailable(f"run {configs.run_id} timed no config of ours and {configs.baseline} "
                               "both, so there is no speedup chart")
    common, names = short_names([r.config for r in rows])
    with _figure(max(4.8, 3.4 + 0.055 * max(map(len, names)))) as (fig, out):  # rotated ticks
        ax = fig.subplots()
        xs = list(range(len(rows)))
        # Named in the legend, not over the plot: a reference as fast as the baseline (cuDNN under
        # SDPA) runs along this line, and a label on it covered that reference's points.
        ax.axhline(1.0, color="#424242", linewidth=1.2, zorder=1,
                   label=f"{_label(configs.baseline)} (baseline) = 1.0")
        _plot_references(ax, configs, xs)
        ours = [r.speedup if r.speedup else float("nan") for r in rows]
        ax.errorbar(xs, ours, yerr=_interval_bars(rows, ours), color=OURS_COLOR, marker="o",
                    markersize=4, linewidth=1.8, elinewidth=0.8, capsize=1.5, zorder=3,
                    label=_ours_legend(configs))
        _shade_launch_bound(ax, [x for x, r in zip(xs, rows, strict=True) if r.launch_cost])
        ax.set_xticks(xs, [_label(n) for n in names], rotation=90, fontsize=7)
        ax.set_xlim(-0.6, len(rows) - 0.4)
        ax.set_xlabel("config (bench grid order" + (f"; all {_label(common)}" if common else "") + ")")
        ax.set_ylabel(f"speedup vs {_label(configs.baseline)} (x, higher is faster)")
        ax.set_title(_speedup_title(configs), fontsize=10)
        ax.grid(True, axis="y", linewidth=0.3, alpha=0.6)
        fig.tight_layout()
    return safe_svg(out.getvalue())


def _plot_references(ax: Axes, configs: BenchConfigs, xs: list[int]) -> None:
    """Each timed reference's speedup over the baseline, a thin line per reference in its own
    colour, so ours stands out."""
    for i, label in enumerate(configs.labels[2:]):
        ys = [_over_baseline(r, label, configs.baseline) for r in configs.rows]
        ax.plot(xs, ys, marker=".", markersize=4, linewidth=0.8, alpha=0.85,
                color=REFERENCE_COLORS[i % len(REFERENCE_COLORS)], label=_label(label))


def _interval_bars(rows: Sequence[ConfigRow], ours: list[float]) -> list[list[float]]:
    """How far each speedup's interval reaches below and above it: 0 where ours was not timed
    (NaN) or carries no interval, so the error bar draws nothing there."""
    below = [s - r.interval[0] if r.interval and s == s else 0.0 for r, s in zip(rows, ours, strict=True)]
    above = [r.interval[1] - s if r.interval and s == s else 0.0 for r, s in zip(rows, ours, strict=True)]
    return [below, above]


def _shade_launch_bound(ax: Axes, launch: list[int]) -> None:
    """Grey bands behind the configs whose time is the launch, named in the legend only when
    some config is: a launch-bound speedup must not be read as the kernel's."""
    for x in launch:
        ax.axvspan(x - 0.5, x + 0.5, color=LAUNCH_SHADE, alpha=0.18, linewidth=0, zorder=0)
    if not launch:
        ax.legend(loc="best", fontsize=8, framealpha=0.9)
        return
    from matplotlib.patches import Patch

    handles, texts = ax.get_legend_handles_labels()
    handles.append(Patch(color=LAUNCH_SHADE, alpha=0.3))
    texts.append(f"launch cost (a call under {LAUNCH_COST_MS * 1000:.0f} µs)")
    ax.legend(handles, texts, loc="best", fontsize=8, framealpha=0.9)


def _ours_legend(configs: BenchConfigs) -> str:
    """Ours in the speedup legend: its label (marked as ours unless it is called that) and the
    kind of interval its error bars show."""
    return (_label(configs.ours if configs.ours == "ours" else f"{configs.ours} (ours)")
            + f", {configs.interval_kind} interval")


def _speedup_title(configs: BenchConfigs) -> str:
    """The speedup chart's title: the workload and run, whether the session's bench was valid,
    and the GPU when the run names one."""
    return _label(f"Speedup by shape: {configs.workload}, run {configs.run_id}"
                  + ("" if configs.valid else " (NOT VALID: no valid bench in the session)")
                  + (f", {configs.gpu}" if configs.gpu else ""))


def roofline_chart(configs: BenchConfigs) -> str:
    """Each config of ours (and of the baseline, hollow) at its FLOPs per byte and achieved
    TFLOP/s, under the card's memory roof and its compute roof per dtype the grid used."""
    peak = _roofline_peak(configs)
    counted = [r for r in configs.rows if r.flops and r.bytes]
    with _figure(4.8) as (fig, out):
        ax = fig.subplots()
        ax.set_xscale("log")
        ax.set_yscale("log")
        for label, marker, filled in ((configs.ours, "o", True), (configs.baseline, "s", False)):
            _scatter_label(ax, label, marker, filled, counted, peak)
        xs = [r.flops / r.bytes for r in counted]  # type: ignore[operator]
        lo, hi = min(xs) / 4, max(xs) * 4
        tops = _compute_roofs(counted, peak)
        top = tops[0][0]
        at = ridge(top, peak.memory_gbps)
        lo, hi = min(lo, at / 4), max(hi, at * 4)
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        ax.plot(grid, [min(x * peak.memory_gbps / 1e3, top) for x in grid], color="#424242",
                linewidth=1.6, label=f"roof: {peak.memory_gbps:,.0f} GB/s memory, "
                                     f"{top:,.0f} TFLOP/s {tops[0][1]}".rstrip())
        for other, dtype in tops[1:]:
            ax.axhline(other, color="#757575", linestyle="--", linewidth=0.9,
                       label=f"compute roof {other:,.0f} TFLOP/s {dtype}")
        ax.axvline(at, color="#9e9e9e", linestyle=":", linewidth=0.9)
        ax.annotate(f"ridge {at:.0f} FLOP/B", xy=(at, top), xytext=(4, -12),
                    textcoords="offset points", fontsize=8, color="#616161")
        ax.set_xlim(lo, hi)
        counts = "the workload's counts" if configs.bytes_model is None else \
            f"bytes: the {_label(configs.workload)} workload's model, not recorded with the run"
        ax.set_xlabel(f"arithmetic intensity (FLOP/byte, {counts})")
        ax.set_ylabel("achieved TFLOP/s (log)")
        ax.set_title(_label(f"Roofline: {configs.workload}, run {configs.run_id}, {peak.gpu} "
                            f"({peak.source})"), fontsize=10)
        ax.grid(True, which="both", linewidth=0.3, alpha=0.5)
        ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
        fig.tight_layout()
    return safe_svg(out.getvalue())


def _roofline_peak(configs: BenchConfigs) -> Peak:
    """The card's datasheet peaks, or ChartUnavailable saying why there is no roofline: the rows
    carry no FLOP and byte counts, or no peak is known for the GPU."""
    if not configs.has_roofline:
        has = "FLOP counts but no byte counts" if any(r.flops for r in configs.rows) else \
            "no FLOP and byte counts"
        raise ChartUnavailable(f"the rows of run {configs.run_id} carry {has} (the workload declared "
                               "no model for them when it was benched), so there is no roofline")
    if configs.peak is None:
        raise ChartUnavailable(f"no datasheet peak is known for {configs.gpu or 'this GPU'} "
                               "(cockpit/hardware/peaks.py), so there is no roofline")
    return configs.peak


def _scatter_label(ax: Axes, label: str, marker: str, filled: bool, counted: list[ConfigRow],
                   peak: Peak) -> None:
    """One timed label's configs on the roofline (ours filled, the baseline hollow); nothing when
    none of its times places."""
    points = _roofline_points(label, counted, peak)
    if not points:
        return
    ax.scatter([p[0] for p in points], [p[1] for p in points], s=22, marker=marker,
               facecolors=OURS_COLOR if filled else "none",
               edgecolors=OURS_COLOR if filled else REFERENCE_COLORS[0], linewidths=1.0,
               zorder=3, label=_label(label if label == "ours" else
                                      label + (" (ours)" if filled else " (baseline)")))


def _roofline_points(label: str, counted: list[ConfigRow], peak: Peak) -> list[tuple[float, float]]:
    """(FLOPs per byte, achieved TFLOP/s) of each counted config the label timed and the roofline
    can place."""
    placed = [place(t.ms, r.flops, r.bytes, r.dtype, peak)
              for r in counted if (t := r.time_of(label)) is not None]
    return [(p.intensity, p.tflops) for p in placed if p is not None]


def _compute_roofs(counted: list[ConfigRow], peak: Peak) -> list[tuple[float, str]]:
    """The compute roofs of the dtypes the grid used, highest first, dtypes sharing a peak named
    together ("bf16/fp16"); the card's highest peak, unnamed, when none of them has one."""
    by_top: dict[float, list[str]] = {}
    for dtype in dict.fromkeys(r.dtype or "fp32" for r in counted):
        if (value := peak.tflops_for(dtype)) is not None:
            by_top.setdefault(value, []).append(dtype)
    return sorted(((v, "/".join(d)) for v, d in by_top.items()), reverse=True) or \
        [(max(peak.tflops.values()), "")]


def short_names(configs: Sequence[str]) -> tuple[str, list[str]]:
    """The words every config shares ("B4 H16"), and each config without them: tick labels that
    fit under 56 configs at 900 px."""
    words = [c.split() for c in configs]
    common = [w for w in words[0] if all(w in ws for ws in words)] if len(words) > 1 else []
    names = [" ".join(w for w in ws if w not in common) or c for ws, c in zip(words, configs, strict=True)]
    return " ".join(common), names


def _over_baseline(row: ConfigRow, label: str, baseline: str) -> float:
    time, base = row.time_of(label), row.time_of(baseline)
    return base.ms / time.ms if time is not None and base is not None else float("nan")


def _label(text: str) -> str:
    return text.replace("$", r"\$")  # matplotlib reads $...$ as math


@contextmanager
def _figure(height_in: float) -> Iterator[tuple[Figure, io.StringIO]]:
    """A 10-inch-wide figure (720 pt: a 900 px page shows its 8 pt text at ~10 px) drawn into the
    StringIO as SVG when the block ends; ChartUnavailable without matplotlib."""
    try:
        import matplotlib
        from matplotlib.backends.backend_svg import FigureCanvasSVG
        from matplotlib.figure import Figure
    except ImportError:
        raise ChartUnavailable(INSTALL_HINT) from None
    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "cockpit-report",
                                "font.size": 9, "text.usetex": False}):
        fig = Figure(figsize=(10, height_in))
        FigureCanvasSVG(fig)
        yield fig, out
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None, "Format": None,
                                                 "Type": None})
