"""One search worker: a process pinned to one GPU, sharing the studies with the others.

    python -m cockpit.tune.worker --plan sessions/<ID>/tune/plan.json --worker N --workers M
                                  --gpu UUID --nvml-index I --start T --spent S

`cockpit tune` starts one per GPU with CUDA_VISIBLE_DEVICES=<UUID>; this process imports no
torch (its measuring child does), compiles in a pool of nvcc processes, and walks the head dims
in order, each until its deadline or the trial budget. Its first compiles are its share of every
head dim's seed, so the seed never waits on nvcc. In a shared store (`[tune] storage`) the studies
may be another box's too: this worker measures only if its GPU is the model they hold, tags and
beats every trial it asks, and a database that goes away ends it in one line (storage.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from cockpit.errors import CockpitError
from cockpit.hardware.limits import GpuLimits, limits_for
from cockpit.session.journal import Event, JournalWriter
from cockpit.tune.compile import Compiled, CompilePool, Toolchain, compile_config, find_toolchain
from cockpit.tune.measure import Measurer, ProbeMeasurer, start_measuring
from cockpit.tune.runplan import RunPlan, read_plan
from cockpit.tune.search import SearchContext, search
from cockpit.tune.space import KernelParams
from cockpit.tune.storage import Store, claim_gpu, one_line_db_errors, owner_of
from cockpit.tune.study import open_run_study, run_store


class Serving(Measurer, Protocol):
    def start(self) -> dict[str, Any]:
        """Start the measuring child; what it says of its GPU (`device`: the model's name)."""
        ...


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--plan", type=Path, required=True)
    p.add_argument("--worker", type=int, default=0)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--gpu", default="", help="the GPU's UUID, for the journal")
    p.add_argument("--nvml-index", type=int, default=0)
    p.add_argument("--start", type=float, required=True, help="when this stretch of the search began")
    p.add_argument("--spent", type=float, default=0.0, help="seconds of budget spent before it")
    args = p.parse_args(argv)
    try:
        return run(args)
    except CockpitError as exc:
        print(f"cockpit tune worker: {exc}", file=sys.stderr, flush=True)
        return 2


def run(args: argparse.Namespace) -> int:
    plan = read_plan(args.plan)
    limits = limits_for(plan.arch)
    if limits is None:
        raise CockpitError(f"{args.plan}: no limits for {plan.arch}")
    store = run_store(plan).asking(owner_of(plan.run_dir, plan.run))
    toolchain = find_toolchain()
    cpus = os.cpu_count() or 1
    pool = CompilePool(_compiler(toolchain, plan), workers=max(1, cpus // args.workers))
    measurer = ProbeMeasurer(plan.probe, plan.run_dir / f"probe-{args.worker}.log")
    writer = JournalWriter(plan.session_journal)

    def record(event: Event) -> None:
        writer.append(event)
        print(f"{event['type']} {event.get('d', '')} {event.get('config', '')} {event.get('outcome', '')} "
              f"{event.get('tflops', '')}", flush=True)

    print(f"worker {args.worker}: GPU {args.gpu} (nvidia-smi {args.nvml_index}), "
          f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')}", flush=True)
    try:
        total = walk(plan, store, limits, pool, measurer, record, args.worker, args.workers,
                     plan.deadlines(args.start, args.spent), args.gpu[:12] or f"worker {args.worker}")
    finally:
        measurer.close()
        pool.close()
        writer.close()
    print(f"worker {args.worker}: {total} configurations measured", flush=True)
    return 0


def walk(plan: RunPlan, store: Store, limits: GpuLimits, pool: CompilePool, measurer: Serving,
         record: Callable[[Event], None], worker: int, workers: int, deadlines: dict[int, float],
         gpu: str) -> int:
    """This worker's search of every head dim, from its share of the seed to the deadlines; the
    configurations it measured. The measurer starts here: its GPU must be the studies' model."""
    for head in plan.head_dims:
        for params in head.seeds[worker::workers]:
            pool.submit(params, head.head_dim)
    with one_line_db_errors(store.url):  # the database went away, or another box failed our trial
        device = start_measuring(measurer)
        print(f"worker {worker}: measuring on {device}", flush=True)
        total = 0
        for head in plan.head_dims:
            study = open_run_study(store, plan, head)
            if store.shared:  # another box's workers measure in these studies too
                claim_gpu(study, str(device.get("device", "")), store)
            ctx = SearchContext(plan, head, limits, pool, measurer, record, time.time,
                                deadlines[head.head_dim], gpu)
            total += search(study, ctx)
        return total


def _compiler(toolchain: Toolchain, plan: RunPlan) -> Callable[[KernelParams, int], Compiled]:
    def compile_one(params: KernelParams, head_dim: int) -> Compiled:
        return compile_config(toolchain, plan.csrc, plan.cache, params, head_dim, plan.arch, plan.max_smem)
    return compile_one


if __name__ == "__main__":
    sys.exit(main())
