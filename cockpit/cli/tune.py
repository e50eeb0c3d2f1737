"""`cockpit tune`: the search headless, from the dry run to the kept winner.

Two searches share the study, the pruner, the journal events, the confirmation rule and the panel:
- any workload's knobs (cli/tune_knobs.py): defines built into variants of its Extension, kwargs
  passed to its candidate, winners kept per GPU arch and `keep_per` group in its tuned file;
- the attention example's tiles (below): csrc/attention.cu's seven knobs per head dim, compiled
  alone without torch's headers (seconds a configuration instead of the binding's ~50 s) and held
  to a register and shared-memory model of the target GPU before anything compiles; winners go to
  csrc/tuned_config.h. A workload gets it by declaring exactly those knobs, kept per head dim.

Exit 0 when a winner was kept, 1 when nothing beat the current configuration, 2 on a usage or
environment error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from cockpit.cli.parser import workspace_of
from cockpit.config import Config, ConfigError, load_config
from cockpit.errors import CockpitError
from cockpit.gates.interpreter import gates_python
from cockpit.session.events import decision
from cockpit.session.journal import JournalWriter, read_journal
from cockpit.session.workspace import resolve_session
from cockpit.telemetry.nvml import Nvml
from cockpit.tune import events as tev
from cockpit.tune.finish import finish_run
from cockpit.tune.header import read_current
from cockpit.tune.launch import checks_from_manifest, new_run, resume_run, run_workers, spent_s
from cockpit.tune.plan import TunePlan, describe, make_plan
from cockpit.tune.progress import tune_progress
from cockpit.tune.space import TUNABLE_NAMES
from cockpit.tune.study import run_store
from cockpit.tune.target import list_gpus, pick_gpus, resolve_target
from cockpit.workload.describe import describe as describe_workload
from cockpit.workload.manifest import Manifest


def tune(args: argparse.Namespace) -> int:
    """`cockpit tune`: search the kernel's configurations (or, `--dry-run`, print the space)."""
    ws = workspace_of(args)
    config = _with_flags(load_config(ws.root), args)
    python = gates_python(config.gates, ws.root).path  # the Python with the CUDA torch
    manifest = describe_workload(ws.root, config, python)
    if not tiles_search(manifest, ws.root):
        from cockpit.cli.tune_knobs import tune_knobs

        return tune_knobs(args, ws, config, manifest, python)
    gpus = list_gpus(Nvml())
    target = resolve_target(args.arch, os.environ, gpus)
    csrc = ws.root / "csrc"
    plan = make_plan(config.tune, config.workload, target, read_current(csrc, target.limits.arch))
    if args.dry_run:
        if args.json:
            print(json.dumps(plan.as_json()))
        else:
            print("\n".join(describe(plan, config.tune)))
        return 0
    if importlib.util.find_spec("optuna") is None:
        raise CockpitError("optuna is not installed: pip install -e '.[tune]' (the search library)")
    picked = pick_gpus(gpus, args.gpus, os.environ)
    if not picked:
        raise CockpitError("no GPU to tune on (NVML sees none); `cockpit tune --dry-run --arch 8.9` "
                           "examines a space without one")
    ref = resolve_session(ws, getattr(args, "session", None))
    if ref is None:
        raise CockpitError('no open session to record the search in; start one with: cockpit new "OBJECTIVE"')
    run_dir = ref.path / "tune"
    if args.resume:
        budget = args.budget * 60 if args.budget is not None else None
        run, notes = resume_run(run_dir, budget, args.trials)
    else:
        cache = ws.root / "build" / "tune"
        checks = checks_from_manifest(manifest, [s.head_dim for s in plan.spaces])
        run, notes = new_run(config, plan, checks, run_dir, ref.journal, csrc, cache, time.time()), []
    for note in notes:
        _say(note)
    writer = JournalWriter(ref.journal)
    left_s = max(0.0, run.budget_s - spent_s(run))
    writer.append(tev.tune_started(time.time(), run.run, run.target, [g.uuid for g in picked], left_s,
                                   run.trials, _spaces(plan), run.seed_how, args.resume))
    _say(f"{run.run}: {run.target}, {len(picked)} GPU(s) "
         f"({', '.join(f'{g.index}: {g.name}' for g in picked)}), budget {run.budget_s / 60:g} min or "
         f"{run.trials} trials per head dim; seed: {run.seed_how}; study {run_store(run, config.tune).where}")
    try:
        codes = run_workers(run, picked, ref.path / "logs", lambda: _tick(ref.journal))
    except KeyboardInterrupt:
        _say(f"stopped; `cockpit tune --resume` continues {run.run} where it stopped")
        raise
    if all(code != 0 for code in codes):
        log = ref.path / "logs" / f"{run.run}-gpu{picked[0].index}.log"
        last = (log.read_text(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise CockpitError(f"every worker failed (exit {codes}): {last} (logs in {ref.path / 'logs'})")
    if any(code != 0 for code in codes):
        _say(f"a worker exited {codes}: see {ref.path / 'logs'}; the others finished the search")
    result = finish_run(config, run, picked[0], _say)
    keep = result["keep"]
    writer.append(tev.tune_finished(time.time(), run.run, keep["action"], keep["summary"], keep=keep))
    writer.append(decision(time.time(), keep["action"], keep["summary"], True, source="tune",
                           header=keep.get("header"), improvement=keep.get("improvement")))
    writer.close()
    if args.json:
        print(json.dumps(result))
    else:
        print("\n".join(result["lines"]))
    return 0 if keep["action"] == "keep" else 1


def tiles_search(manifest: Manifest, root: Path) -> bool:
    """Whether the workload is the attention tiles' kernel: its seven knobs kept per head dim, and
    csrc/attention.cu, the file that search compiles alone."""
    return ({k.name for k in manifest.knobs} == set(TUNABLE_NAMES) and manifest.keep_per == ("D",)
            and (root / "csrc" / "attention.cu").is_file())


def _with_flags(config: Config, args: argparse.Namespace) -> Config:
    tune = config.tune
    if args.budget is not None:
        if args.budget <= 0:
            raise CockpitError(f"--budget {args.budget:g}: give minutes > 0")
        tune = replace(tune, budget_min=args.budget)
    if args.trials is not None:
        if args.trials < tune.seed_trials:
            raise ConfigError(f"{tune.line('seed_trials')}: --trials {args.trials} is fewer than the seed's "
                              f"{tune.seed_trials} configurations (tune.seed_trials); lower seed_trials or "
                              "raise --trials")
        tune = replace(tune, trials=args.trials)
    return replace(config, tune=tune)


def _spaces(plan: TunePlan) -> list[dict[str, Any]]:
    return [{"head_dim": s.head_dim, "total": s.total, "left": len(s.feasible),
             "rejected_by": s.rejected_by()} for s in plan.spaces]


def _tick(journal: Path) -> None:
    progress = tune_progress(read_journal(journal).events)
    if progress is None:
        return
    best = "; ".join(f"{b.group} {b.config} {b.value}" for b in progress.best) or "none yet"
    eta = progress.eta_s(time.time()) / 60
    _say(f"{progress.activity()} | queue {progress.queued} | ETA {eta:.1f} min | best {best}")


def _say(line: str) -> None:
    print(f"cockpit tune: {line}", file=sys.stderr, flush=True)

