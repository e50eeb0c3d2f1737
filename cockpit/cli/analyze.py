"""`cockpit analyze FILE.csv|FILE.ncu-rep [--details FILE.details.csv]` (the ncu bottleneck verdict
of each launch, and ncu's own rule estimates ranked, the fix they point at first) and
`cockpit decide SPEEDUP` (the speedup's class and the profiling decision tree's next step)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from cockpit.analysis.bottleneck import NcuThresholds, verdict
from cockpit.analysis.decide import SpeedupThresholds
from cockpit.analysis.decide import decide as classify
from cockpit.analysis.ncu import parse_ncu_csv
from cockpit.analysis.ncu_csv_file import read_ncu_csv
from cockpit.analysis.ncu_report import kernel_block, kernel_json, read_report
from cockpit.analysis.ncu_rules import NoRules, RuleResult, parse_rules, ranked
from cockpit.cli.parser import workspace_of
from cockpit.config import load_config
from cockpit.errors import CockpitError
from cockpit.files import RefusedFile


def analyze(args: argparse.Namespace) -> int:
    """`cockpit analyze FILE`: print a compact block per launch (or one JSON object); 0 once every
    launch has a verdict."""
    return analyze_file(args.file, args.json, details=args.details)


def analyze_file(path: Path, as_json: bool, bench_ms: float | None = None,
                 thresholds: NcuThresholds | None = None, details: Path | None = None) -> int:
    """The verdict of every launch in an ncu report, printed, with ncu's rule estimates that apply
    (best first) when its details page is there."""
    t = thresholds or NcuThresholds()
    text = read_report(path)
    try:
        report = parse_ncu_csv(text)
    except CockpitError as exc:
        raise CockpitError(f"{path}: {exc}") from exc
    if not report.launches:
        raise CockpitError(f"{path}: an ncu CSV header but no kernel launches under it; profile at least "
                           "one launch (check --kernel-name / --launch-skip)")
    judged = [(launch, verdict(launch, t, bench_ms)) for launch in report.launches]
    rules = _rules(details or path.with_suffix(".details.csv"), explicit=details is not None)
    estimates = {k.id: ranked([r for r in rules if r.launch == str(k.id)], None) for k, _ in judged}
    if as_json:
        kernels = [{**kernel_json(k, v, t), "estimates": [r.as_json() for r in estimates[k.id]]}
                   for k, v in judged]
        print(json.dumps({"file": str(path), "kernels": kernels}))
    else:
        print("\n\n".join(kernel_block(k, v, t) + _estimates(estimates[k.id]) for k, v in judged))
    return 0


def _rules(path: Path, explicit: bool) -> list[RuleResult]:
    """ncu's rule results from its details page; none when there is no page (unless named)."""
    try:
        return parse_rules(read_ncu_csv(path))
    except FileNotFoundError as exc:
        if explicit:
            raise CockpitError(f"{path}: no such file; export it with `ncu --import R.ncu-rep --csv --page "
                               "details --print-details all > FILE.details.csv`") from exc
        return []
    except RefusedFile:
        raise  # one line already: a FIFO, a folder, or over the cap
    except OSError as exc:
        raise CockpitError(f"{path}: cannot read it ({exc.strerror}); check its permissions") from exc
    except NoRules as exc:
        raise CockpitError(f"{path}: {exc}") from exc


def _estimates(rules: list[RuleResult]) -> str:
    """ncu's estimates as lines under a launch's block: the one fix they point at first."""
    if not rules:
        return ""
    return "\n  ncu's estimates (the one fix first):\n" + "\n".join(f"    {r.line()}" for r in rules[:5])


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
