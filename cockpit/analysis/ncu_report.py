"""An ncu report read from a file, and each launch's bottleneck verdict with its one fix
(one_fix.py) as text and as JSON.

A CSV is ncu's raw page (`ncu --csv --page raw --print-units base`, to a file or captured from
stdout); a .ncu-rep is exported to that CSV with the local ncu first. An unreadable or non-ncu
file raises CockpitError.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from cockpit.analysis.bottleneck import BottleneckVerdict
from cockpit.analysis.launch_reading import NcuThresholds, fmt_ns, occupancy_limiters, stall_note, top_stalls
from cockpit.analysis.ncu import EXPORT_HINT, KernelLaunch
from cockpit.analysis.ncu_csv_file import read_ncu_csv
from cockpit.analysis.ncu_metrics import ACHIEVED, COMPUTE, MEMORY, MEMORY_UNITS, THEORETICAL, WAVES
from cockpit.analysis.one_fix import OneFix
from cockpit.errors import CockpitError
from cockpit.files import RefusedFile, open_file
from cockpit.json_fields import compact

IMPORT_TIMEOUT_S = 300


def read_report(path: Path) -> str:
    """The CSV text of an ncu report: the file itself, or a .ncu-rep exported through ncu."""
    try:
        if path.suffix == ".ncu-rep":
            open_file(path).close()  # only a regular file goes to ncu: a FIFO would hang its import
            return import_ncu_rep(path)
        text = read_ncu_csv(path)
    except FileNotFoundError as exc:
        raise CockpitError(f"{path}: no such file; pass an ncu CSV ({EXPORT_HINT}) or a .ncu-rep") from exc
    except RefusedFile:
        raise  # one line already: a FIFO, a folder, or over the cap
    except OSError as exc:
        raise CockpitError(f"{path}: cannot read it ({exc.strerror}); check its permissions") from exc
    if "\0" in text[:65536]:
        raise CockpitError(f"{path}: a binary file, not an ncu CSV; a .ncu-rep needs that suffix, "
                           f"or export a CSV with: {EXPORT_HINT}")
    return text


def import_ncu_rep(path: Path) -> str:
    ncu = shutil.which("ncu")
    export = (f"ncu --import {path.name} --csv --page raw --print-units base > "
              f"{path.with_suffix('.csv').name}")
    if ncu is None:
        raise CockpitError(f"{path}: cockpit analyze needs ncu to import a .ncu-rep; export a CSV on "
                           f"the GPU box with: {export}")
    argv = [ncu, "--import", str(path), "--csv", "--page", "raw", "--print-units", "base"]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=IMPORT_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise CockpitError(f"{path}: ncu --import took over {IMPORT_TIMEOUT_S} s; export the CSV on the "
                           f"GPU box with: {export}") from exc
    except OSError as exc:
        raise CockpitError(f"{path}: cannot run {ncu} ({exc.strerror}); export the CSV on the GPU box "
                           f"with: {export}") from exc
    if out.returncode != 0:
        last = next((line.strip() for line in reversed(out.stderr.splitlines()) if line.strip()),
                    f"exit code {out.returncode}")
        raise CockpitError(f"{path}: ncu could not import it ({last}); is it a complete .ncu-rep?")
    return out.stdout


def kernel_json(launch: KernelLaunch, v: BottleneckVerdict, fix: OneFix,
                t: NcuThresholds | None = None) -> dict[str, Any]:
    """The launch, its metrics and verdict; the recommendation is the one fix, `tree_fix` the
    decision tree's when ncu's estimate chose another (the profile gate's verdict has the same)."""
    return {
        "name": launch.short_name, "kernel": launch.name, "id": launch.id, "device": launch.device,
        "cc": launch.cc, "grid": list(launch.grid), "block": list(launch.block),
        "duration_ns": launch.duration_ns,
        "metrics": {name: m.value for name, m in v.evidence.items()},
        "units": {name: m.unit for name, m in v.evidence.items() if m.unit},
        "occupancy_limiters": list(occupancy_limiters(launch, t or NcuThresholds())),
        "top_stalls": [{"reason": r, "cycles_per_issue": value} for r, value in top_stalls(launch)],
        "verdict": {"bottleneck": v.bottleneck, "headline": v.headline,
                    "recommendation": fix.line, "confidence": v.confidence,
                    "confidence_reason": v.confidence_reason, "notes": list(v.notes),
                    **compact({"tree_fix": fix.tree_fix})},
        "estimates": [r.as_json() for r in fix.estimates],
    }


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} %"


def kernel_block(launch: KernelLaunch, v: BottleneckVerdict, fix: OneFix,
                 t: NcuThresholds | None = None) -> str:
    """A dozen lines a kernel engineer reads at a glance, the one fix among them."""
    duration = launch.duration_ns
    waves = launch.value(WAVES)
    units = ", ".join(f"{name} {_pct(launch.value(metric))}" for name, metric in MEMORY_UNITS)
    theo = launch.value(THEORETICAL)
    limiters = occupancy_limiters(launch, t or NcuThresholds())
    limiter = f"limited by {' and '.join(limiters)}" if limiters else "not limited"
    stalls = top_stalls(launch)
    lines = [
        f"{launch.short_name}  (launch {launch.id}, device {launch.device or '?'}, cc {launch.cc or '?'})",
        f"  kernel      {launch.name}",
        f"  duration    {fmt_ns(duration) if duration is not None else 'n/a'}   grid {launch.grid} x "
        f"block {launch.block}" + (f", {waves:.2f} waves/SM" if waves is not None else ""),
        f"  SOL         compute {_pct(launch.value(COMPUTE))}  memory {_pct(launch.value(MEMORY))}"
        f"  ({units})",
        f"  occupancy   theoretical {_pct(theo)}  achieved {_pct(launch.value(ACHIEVED))}  {limiter}",
        "  stalls      " + (", ".join(f"{r} {value:.2f}" for r, value in stalls) + "  (cycles per issue)"
                            if stalls else "n/a (add --section WarpStateStats)"),
        f"  verdict     {v.bottleneck}: {v.headline}",
        f"  fix         {fix.line}",
        f"  confidence  {v.confidence}: {v.confidence_reason}",
    ]
    notes = [n for n in v.notes if n != stall_note(stalls)]
    lines += [f"  {'notes' if i == 0 else '':<10}  - {note}" for i, note in enumerate(notes)]
    return "\n".join(lines + behind_the_fix(fix))


def behind_the_fix(fix: OneFix) -> list[str]:
    """What else could have been the fix: ncu's other estimates, and the decision tree's fix when
    ncu's estimate came first."""
    others = [f"    {line}" for line in fix.estimate_lines()[1:]]
    return ((["  ncu's other estimates:", *others] if others else [])
            + ([f"  the decision tree said: {fix.tree_fix}"] if fix.tree_fix else []))
