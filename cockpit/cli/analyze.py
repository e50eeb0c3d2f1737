"""`cockpit analyze FILE.csv|FILE.ncu-rep` (the ncu bottleneck verdict of each launch) and
`cockpit decide SPEEDUP` (the speedup's class and the profiling decision tree's next step)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from cockpit.analysis.bottleneck import Thresholds, verdict
from cockpit.analysis.decide import SpeedupThresholds
from cockpit.analysis.decide import decide as classify
from cockpit.analysis.ncu import parse_ncu_csv
from cockpit.analysis.ncu_report import kernel_block, kernel_json, read_report
from cockpit.cli.parser import workspace_of
from cockpit.config import load_config
from cockpit.errors import CockpitError


def analyze(args: argparse.Namespace) -> int:
    """`cockpit analyze FILE`: print a compact block per launch (or one JSON object); 0 once every
    launch has a verdict."""
    return analyze_file(args.file, args.json)


def analyze_file(path: Path, as_json: bool, bench_ms: float | None = None,
                 thresholds: Thresholds | None = None) -> int:
    """The verdict of every launch in an ncu report, printed."""
    t = thresholds or Thresholds()
    text = read_report(path)
    try:
        report = parse_ncu_csv(text)
    except CockpitError as exc:
        raise CockpitError(f"{path}: {exc}") from exc
    if not report.launches:
        raise CockpitError(f"{path}: an ncu CSV header but no kernel launches under it; profile at least "
                           "one launch (check --kernel-name / --launch-skip)")
    judged = [(launch, verdict(launch, t, bench_ms)) for launch in report.launches]
    if as_json:
        print(json.dumps({"file": str(path), "kernels": [kernel_json(k, v, t) for k, v in judged]}))
    else:
        print("\n\n".join(kernel_block(k, v, t) for k, v in judged))
    return 0


def decide(args: argparse.Namespace) -> int:
    """`cockpit decide SPEEDUP [KERNEL_MS]`: the speedup's class and the next step."""
    t = load_config(workspace_of(args).root).thresholds
    try:
        d = classify(args.speedup, args.kernel_ms,
                   SpeedupThresholds(t.speedup_critical, t.speedup_high, t.speedup_medium))
    except ValueError as exc:
        raise CockpitError(f"{exc}; pass the speedup as baseline time / your time, e.g. 0.42") from exc
    if args.json:
        print(json.dumps(asdict(d)))
    else:
        print(f"{d.level}  {d.speedup:.2f}x  next: {d.next_step}  (tool: {d.tool})")
    return 0
