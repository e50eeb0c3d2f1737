"""`cockpit tune`: the search of a workload's knobs headless, from the dry run to the kept winners: the
space its rule allows on the target GPU, the search on every GPU, the confirmation, and the winners
in the workload's tuned file (and its tuned header, where its Extension names one).

Exit 0 when a winner was kept, 1 when nothing beat the current values, 2 on a usage or environment
error."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from cockpit.analysis.keep import KeepResult
from cockpit.cli.parser import session_named, workspace_of
from cockpit.config import Config, ConfigError, load_config
from cockpit.errors import CockpitError
from cockpit.files import read_tail
from cockpit.gates.interpreter import gates_python
from cockpit.session.events import decision
from cockpit.session.journal import JournalWriter, read_journal
from cockpit.session.trust import require_trust
from cockpit.session.workspace import SessionRef, resolve_session
from cockpit.telemetry.nvml import Nvml
from cockpit.tune import events as tev
from cockpit.tune.finish import TuneResult, finish_run
from cockpit.tune.launch import (
    describe_plan,
    group_space,
    make_plan,
    new_run,
    resume_run,
    run_workers,
    spent_s,
)
from cockpit.tune.plan import KnobPlan
from cockpit.tune.progress import tune_progress
from cockpit.tune.target import Gpu, Target, list_gpus, measured_on, pick_gpus, resolve_target
from cockpit.workload.describe import workload_args, workload_manifest
from cockpit.workload.knob_words import KnobWords
from cockpit.workload.manifest import Manifest
from cockpit.workload.probe_wire import SpaceJson


def tune(args: argparse.Namespace) -> int:
    """`cockpit tune`: search the workload's knobs (or, `--dry-run`, print the space)."""
    ws = workspace_of(args)
    config = _with_flags(load_config(ws.root), args)
    ref = resolve_session(ws, session_named(args))  # a session that is not there: said before any probe
    require_trust(ws.root, config)  # nothing the workspace names runs before the user trusts it
    python = gates_python(config.gates, ws.root).path  # the Python with the CUDA torch
    manifest = workload_manifest(ws.root, config, python)
    gpus = list_gpus(Nvml())
    target = resolve_target(args.arch, os.environ, gpus)
    session_dir = ref.path if ref is not None else ws.root / "sessions" / "(dry run)"
    plan, space, notes = _plan(args, ws.root, config, manifest, target, python, ref, session_dir)
    if args.dry_run:
        _print_dry_run(plan, space, config, args.json)
        return 0
    picked = _gpus_to_tune_on(gpus, args.gpus)
    if ref is None:
        raise CockpitError('no open session to record the search in; start one with: cockpit new "OBJECTIVE"')
    plan = replace(plan, target=measured_on(plan.target, plan.arch, picked[0]))  # the card, as NVML names it
    if not args.resume:
        plan = new_run(ws.root, plan)
    for note in notes:
        _say(note)
    writer = JournalWriter(ref.journal)
    _journal_started(writer, plan, picked, space, args.resume)
    try:
        codes = run_workers(ws.root, plan, picked, ref.path / "logs", lambda: _tick(ref.journal))
    except KeyboardInterrupt:
        _say(f"stopped; `cockpit tune --resume` continues {plan.run} where it stopped")
        raise
    _say_workers_failed(codes, ref.path / "logs", f"{plan.run}-gpu{picked[0].index}.log")
    result = finish_run(config, ws.root, plan, picked[0].uuid, _say, python)
    _journal_kept(writer, plan.run, result, manifest.words)
    writer.close()
    print(json.dumps(result) if args.json else "\n".join(result["lines"]))
    return 0 if result["keep"]["action"] == "keep" else 1


def _plan(args: argparse.Namespace, root: Path, config: Config, manifest: Manifest, target: Target,
          python: str, ref: SessionRef | None, session_dir: Path) -> tuple[KnobPlan, SpaceJson, list[str]]:
    """The search to run: the one `--resume` continues (its notes said before it goes on), or a
    new plan over the space the workload's rule allows on `target`."""
    run_dir = session_dir / "tune"
    if args.resume:
        if ref is None:
            raise CockpitError(
                'no open session holds a search to resume; start one with: cockpit new "OBJECTIVE"'
            )
        budget = args.budget * 60 if args.budget is not None else None
        plan, notes = resume_run(root, run_dir, budget, args.trials)
        return plan, {}, notes
    plan, space = make_plan(
        root,
        manifest,
        config,
        target,
        workload_args(root, config),
        run_dir,
        ref.journal if ref is not None else session_dir / "journal.jsonl",
        time.time(),
        python,
        getattr(args, "group", None),
    )
    return plan, space, []


def _journal_started(writer: JournalWriter, plan: KnobPlan, picked: list[Gpu], space: SpaceJson,
                     resumed: bool) -> None:
    """The search's start in the journal (the TUI's tune panel follows it), and on stderr."""
    left_s = max(0.0, plan.budget_s - spent_s(plan))
    writer.append(
        tev.tune_started(
            time.time(),
            plan.run,
            plan.target,
            [g.uuid for g in picked],
            left_s,
            plan.trials,
            _spaces(plan, space),
            plan.seed_how,
            resumed,
            workload=plan.workload,
            unit=f"x {plan.baseline}",
            baseline=plan.baseline,
        )
    )
    _say(
        f"{plan.run}: {plan.workload} on {plan.target}, {len(picked)} GPU(s) "
        f"({', '.join(f'{g.index}: {g.name}' for g in picked)}), budget {plan.budget_s / 60:g} min or "
        f"{plan.trials} trials per group; seed: {plan.seed_how}"
    )


def _print_dry_run(plan: KnobPlan, space: SpaceJson, config: Config, as_json: bool) -> None:
    """The space and the plan, nothing run: in words, or as JSON."""
    if as_json:
        print(json.dumps({"plan": plan.to_json(), "space": space}))
    else:
        print("\n".join(describe_plan(plan, space, config.tune.budget_min)))


def _gpus_to_tune_on(gpus: list[Gpu], asked: str | None) -> list[Gpu]:
    """The GPUs the search runs on (`--gpus`, else every one NVML sees); a search needs optuna."""
    if importlib.util.find_spec("optuna") is None:
        raise CockpitError("optuna is not installed: pip install -e '.[tune]' (the search library)")
    picked = pick_gpus(gpus, asked, os.environ)
    if not picked:
        raise CockpitError(
            "no GPU to tune on (NVML sees none); `cockpit tune --dry-run --arch 8.9` "
            "examines a space without one"
        )
    return picked


def _say_workers_failed(codes: list[int], logs: Path, first_log: str) -> None:
    """Every worker failed: stop, naming the first one's last line; some failed: say so, go on."""
    if all(code != 0 for code in codes):
        tail, _ = read_tail(logs / first_log, 64 << 10)  # its last line: a worker's log can be long
        last = (tail.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise CockpitError(f"every worker failed (exit {codes}): {last} (logs in {logs})")
    if any(code != 0 for code in codes):
        _say(f"a worker exited {codes}: see {logs}; the others finished the search")


def _journal_kept(writer: JournalWriter, run: str, result: TuneResult, words: KnobWords | None) -> None:
    """The search's end with its confirmation (a bench of the workload: what the next bench's
    keep/revert compares with), and what it kept as the session's decision, with the words the
    workload gave its knobs (the report spells the kept setting in them)."""
    keep = KeepResult.from_json(result["keep"]) or KeepResult("revert", "nothing kept")
    writer.append(tev.tune_finished(time.time(), run, keep.action, keep.summary, keep=result["keep"],
                                    confidence=result["confidence"],
                                    **({"bench": result["bench"]} if result["bench"] else {})))
    writer.append(
        decision(
            time.time(),
            keep.action,
            keep.summary,
            True,
            source="tune",
            header=keep.header,
            improvement=keep.improvement,
            **({"interval": list(keep.interval)} if keep.interval else {}),
            **({"words": words.to_json()} if words else {}),
        )
    )


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


def _spaces(plan: KnobPlan, space: SpaceJson) -> list[tev.SpaceCount]:
    return [
        {
            "group": g.label,
            "total": plan.combinations,
            "left": len(g.feasible),
            "rejected_by": {"rule": n} if (n := _rejected(space, g.group.key)) else {},
        }
        for g in plan.groups
    ]


def _rejected(space: SpaceJson, key: Mapping[str, object]) -> int:
    said = group_space(space, key)
    return sum(said["rejected"].values()) if said else 0


def _tick(journal: Path) -> None:
    progress = tune_progress(read_journal(journal).events)
    if progress is None:
        return
    best = "; ".join(f"{b.group} {b.config} {b.value.value:.3f}{progress.unit}" for b in progress.best)
    eta = progress.eta_s(time.time()) / 60
    _say(f"{progress.activity()} | queue {progress.queued} | ETA {eta:.1f} min | best {best or 'none yet'}")


def _say(line: str) -> None:
    print(f"cockpit tune: {line}", file=sys.stderr, flush=True)
