"""One worker of a knob search: a process pinned to one GPU, sharing the studies with the others.

    python -m cockpit.tune.worker --workspace DIR --plan sessions/<ID>/tune/plan.json
                                        --worker N --workers M --gpu UUID --start T --spent S

`cockpit tune` starts one per GPU with CUDA_VISIBLE_DEVICES=<UUID>. This process imports no torch:
its measuring child (the workload probe's `serve`) holds the CUDA context, and define knobs are
built in children of their own, ahead of the timing. Its first builds are its share of every
group's seed. In a shared store (`[tune] storage`) it measures only on the GPU model the studies
hold, and a database that goes away ends it in one line (cockpit/tune/storage.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from cockpit.config import load_config
from cockpit.errors import CockpitError
from cockpit.gates.interpreter import gates_python
from cockpit.hardware.peaks import peak_for
from cockpit.session.journal import Event, JournalWriter
from cockpit.session.trust import require_trust
from cockpit.tune.build import BuildPool, Built, build_variant
from cockpit.tune.measure import ProbeMeasurer, start_measuring
from cockpit.tune.plan import KnobPlan, read_plan
from cockpit.tune.search import Walk, open_study, search, store_of
from cockpit.tune.space import Variant, variant
from cockpit.tune.storage import claim_gpu, one_line_db_errors, owner_of
from cockpit.workload.describe import PROBE


def serve_argv(plan: KnobPlan, workspace: Path, python: str = sys.executable) -> list[str]:
    s = plan.settings
    return [
        python,
        str(PROBE),
        "serve",
        "--workspace",
        str(workspace),
        *plan.workload_argv,
        "--reps",
        str(s.reps),
        "--warmup",
        str(s.warmup),
        "--input-sets",
        str(s.input_sets),
        "--settle-ms",
        f"{s.settle_ms:g}",
        "--rounds",
        str(s.rounds),
    ]


def measurer_for(
    plan: KnobPlan,
    workspace: Path,
    log: Path,
    env: dict[str, str] | None = None,
    python: str = sys.executable,
) -> ProbeMeasurer:
    child_env = dict(
        env if env is not None else os.environ, COCKPIT_WORKSPACE=str(workspace), PYTHONUNBUFFERED="1"
    )
    return ProbeMeasurer(serve_argv(plan, workspace, python), log, env=child_env, cwd=workspace)


JOBS_PER_BUILD = 2
"""A variant is the kernel's .cu and its binding: two translation units, each one compiler process."""


def builder(plan: KnobPlan, workspace: Path, workers_on_box: int, python: str = sys.executable) -> BuildPool:
    """Builds side by side, the box's cores shared by its workers (at most 8 at once: each compile
    of torch's headers holds about a GB)."""
    relink = plan.build.variant_build == "relink"
    jobs = 1 if relink else JOBS_PER_BUILD  # relinked: the .cu alone is compiled

    def one(v: Variant) -> Built:
        return build_variant(
            workspace,
            python,
            plan.workload_argv,
            str(plan.build.name),
            plan.build.sources,
            plan.build.include_dirs,
            v,
            plan.arch,
            jobs,
            relink,
        )

    cpus = os.cpu_count() or 1
    return BuildPool(one, workers=max(1, min(8, cpus // (jobs * max(1, workers_on_box)))))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workspace", type=Path, required=True)
    p.add_argument("--plan", type=Path, required=True)
    p.add_argument("--worker", type=int, default=0)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--gpu", default="", help="the GPU's UUID, for the journal")
    p.add_argument("--start", type=float, required=True, help="when this stretch of the search began")
    p.add_argument("--spent", type=float, default=0.0, help="seconds of budget spent before it")
    args = p.parse_args(argv)
    try:
        return run(args)
    except CockpitError as exc:
        print(f"cockpit tune worker: {exc}", file=sys.stderr, flush=True)
        return 2


def run(args: argparse.Namespace) -> int:
    ws = args.workspace.resolve()
    plan = read_plan(args.plan)
    settings = load_config(ws)
    require_trust(ws, settings)  # read again: a `git pull` since `cockpit tune` checked may name a new python
    store = store_of(ws, plan, settings.tune).asking(owner_of(plan.run_dir, plan.run))
    # the Python with the CUDA torch builds and measures; this process only drives the search
    python = gates_python(settings.gates, ws).path
    pool = builder(plan, ws, args.workers, python)
    for group in plan.groups:
        for config in group.seeds[args.worker :: args.workers]:
            v = variant(plan.knobs, config, group.group, group.others)
            if v is not None:
                pool.submit(v)
    measurer = measurer_for(plan, ws, ws / plan.run_dir / f"probe-{args.worker}.log", python=python)
    writer = JournalWriter(ws / plan.session_journal)
    short_gpu = args.gpu[:12] or f"worker {args.worker}"

    def record(event: Event) -> None:
        writer.append(event)
        print(
            f"{event['type']} {event.get('group', '')} {event.get('config', '')} {event.get('outcome', '')} "
            f"{event.get('value', '')}",
            flush=True,
        )

    deadlines = plan.deadlines(args.start, args.spent)
    total = 0
    print(
        f"worker {args.worker}: GPU {args.gpu}, "
        f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')}",
        flush=True,
    )
    try:
        with one_line_db_errors(store.url):  # the database went away, or another box failed our trial
            device = start_measuring(measurer)
            print(f"worker {args.worker}: measuring on {device}", flush=True)
            for group in plan.groups:
                study = open_study(plan, group, store)
                if store.shared:  # another box's workers measure in these studies too
                    claim_gpu(study, device["device"], store)
                walk = Walk(plan, group, pool, measurer, record, time.time, deadlines[group.label],
                            short_gpu, peak=peak_for(str(device.get("device") or "")))
                total += search(study, walk)
    finally:
        measurer.close()
        pool.close()
        writer.close()
    print(f"worker {args.worker}: {total} configurations measured", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
