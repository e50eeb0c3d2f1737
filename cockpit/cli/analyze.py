"""`cockpit analyze FILE.csv|FILE.ncu-rep [--details FILE.details.csv]` (the ncu bottleneck verdict
of each launch and its one fix, chosen by the function the profile gate asks, so the two print the
same line) and `cockpit decide SPEEDUP` (the speedup's class and the profiling decision tree's next
step).

A details page given alone (`cockpit analyze FILE.details.csv`) is read as the details page it is,
not refused: it is the page ncu prints by default and the one with ncu's own rule estimates, and
the one fix leads with those, so the engineer holding it already holds the gate's fix; sending them
back to the GPU box for a raw page would withhold an answer that is in their hands. What the page
cannot give, the bottleneck verdict (it reads the raw page's metrics), is said to need the raw page.
With no estimate on the page the fix would be the decision tree's, which reads the raw page: that
is refused in one line naming `--details`, rc 1, never a page of `n/a`."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from cockpit.analysis.bottleneck import NcuThresholds, verdict
from cockpit.analysis.decide import SpeedupThresholds
from cockpit.analysis.decide import decide as classify
from cockpit.analysis.ncu import EXPORT_HINT, parse_ncu_csv
from cockpit.analysis.ncu_csv_file import read_ncu_csv
from cockpit.analysis.ncu_report import behind_the_fix, kernel_block, kernel_json, read_report
from cockpit.analysis.ncu_rules import NoRules, RuleResult, is_details_page, parse_rules
from cockpit.analysis.one_fix import OneFix, one_fix
from cockpit.cli.parser import workspace_of
from cockpit.config import load_config
from cockpit.errors import CockpitError
from cockpit.files import RefusedFile
from cockpit.printable import printable


def analyze(args: argparse.Namespace) -> int:
    """`cockpit analyze FILE`: print a compact block per launch (or one JSON object); 0 once every
    launch has a verdict."""
    return analyze_file(args.file, args.json, details=args.details)


def analyze_file(path: Path, as_json: bool, bench_ms: float | None = None,
                 thresholds: NcuThresholds | None = None, details: Path | None = None) -> int:
    """The verdict of every launch in an ncu report and its one fix, printed, with ncu's other
    estimates that apply when its details page is there; a details page alone gives the fix from it."""
    t = thresholds or NcuThresholds()
    text = read_report(path)
    if is_details_page(text):
        return _details_alone(path, text, as_json, details)
    try:
        report = parse_ncu_csv(text)
    except CockpitError as exc:
        raise CockpitError(f"{path}: {exc}") from exc
    if not report.launches:
        raise CockpitError(f"{path}: an ncu CSV header but no kernel launches under it; profile at least "
                           "one launch (check --kernel-name / --launch-skip)")
    rules = _rules(details or path.with_suffix(".details.csv"), explicit=details is not None)
    judged = [(launch, v, one_fix(rules, launch.id, v.recommendation))
              for launch in report.launches for v in (verdict(launch, t, bench_ms),)]
    if as_json:
        print(json.dumps({"file": str(path), "kernels": [kernel_json(k, v, fix, t) for k, v, fix in judged]}))
    else:
        print(printable("\n\n".join(kernel_block(k, v, fix, t) for k, v, fix in judged)))
    return 0


def _details_alone(path: Path, text: str, as_json: bool, details: Path | None) -> int:
    """The one fix of each launch on a details page read without its raw page."""
    both = f"cockpit analyze RAW.csv --details {path}, RAW.csv the same report's raw page ({EXPORT_HINT})"
    if details is not None:
        raise CockpitError(f"{path}: ncu's details page where the raw page goes; run {both}")
    try:
        rules = parse_rules(text)
    except NoRules as exc:
        raise CockpitError(f"{path}: {exc}") from exc
    launches = dict.fromkeys((r.launch, r.kernel) for r in rules)
    fixes = [(launch, kernel, one_fix(rules, launch, None)) for launch, kernel in launches]
    if not any(fix for _, _, fix in fixes):
        raise CockpitError(f"{path}: ncu's details page, and no rule on it estimates a gain, so the fix is "
                           f"the decision tree's, which reads the raw page: run {both}")
    if as_json:
        kernels = [{"name": kernel, "id": int(launch) if launch.isdigit() else launch,
                    "fix": fix.line if fix else None,
                    "estimates": [r.as_json() for r in fix.estimates] if fix else []}
                   for launch, kernel, fix in fixes]
        print(json.dumps({"file": str(path), "page": "details", "kernels": kernels}))
    else:
        print(printable("\n\n".join(_details_block(launch, kernel, fix, both)
                                      for launch, kernel, fix in fixes)))
    return 0


def _details_block(launch: str, kernel: str, fix: OneFix | None, both: str) -> str:
    lines = [f"{kernel}  (launch {launch}, from ncu's details page alone)",
             f"  fix         {fix.line if fix else 'none: no rule estimates a gain on this launch'}",
             *(behind_the_fix(fix) if fix else []),
             f"  verdict     needs the raw page: {both}"]
    return "\n".join(lines)


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
