"""The workload probe's correctness mode on a machine without a GPU, for the cheat catalogue's
CPU-runnable cheats (bench/cheat_catalogue.py --cpu, tests/test_cheat_catalogue.py).

    python3 bench/cheat_cpu_probe.py --workspace W JOBS.json

JOBS.json is a list of {"workload": "workloads/cheats/x.py", "off": ["guard", ...], "out": "R.json",
"log": "R.log"}. Each job is the probe's own steps (cockpit/probes/workload_probe.py): the guards
read from COCKPIT_GUARDS_OFF before the workload is imported, its loader, its `check_all` (the
correctness rounds, then ghost replay) and its result file. Left out: the device's identity and
NVML's watch, which need a GPU. torch is imported once; each job runs in a forked child of its own
(its output to its log), so a cheat that tampers with the checks at import reaches no other job.
Prints one JSON line per job: {"out": ..., "rc": 0 passed, 1 failed, 2 could not run}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workspace", type=Path, default=REPO)
    p.add_argument("jobs", type=Path)
    args = p.parse_args(argv)
    jobs = json.loads(args.jobs.read_text(encoding="utf-8"))
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    import torch

    torch.set_num_threads(1)  # one thread: forked children never meet a thread pool started here
    # the probe and its checks imported once, before the forks
    import cockpit.probes.workload.ghost
    import cockpit.probes.workload_probe  # noqa: F401

    for job in jobs:
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 2
            try:
                code = _child(args.workspace, job)
            finally:
                sys.stdout.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"out": job["out"], "rc": os.waitstatus_to_exitcode(status)}), flush=True)
    return 0


def _child(workspace: Path, job: dict[str, Any]) -> int:
    from cockpit.probes import guarded, guards_identity, workload_probe
    from cockpit.probes.workload_load import WorkloadLoadError, first_line, load_workload
    from cockpit.probes.workload_probe import check_all, say, write_result
    from cockpit.workload.guards import OFF_ENV, UnknownGuard
    from cockpit.workload.result_wire import WIRE, WIRE_KEY

    log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ[OFF_ENV] = ",".join(job["off"])
    os.environ["COCKPIT_WORKSPACE"] = str(workspace)
    try:
        guarded.start(os.environ)
        guards_identity.start(workload_probe)  # as the probe's main: before the workload is imported
        w = load_workload(job["workload"], workspace, None, [])
    except (UnknownGuard, WorkloadLoadError) as exc:
        say(str(exc))
        return 2
    result: dict[str, object] = {WIRE_KEY: WIRE, "mode": "correctness", "workload": w.name,
                                 "source": job["workload"], "device": "cpu"}
    if guarded.off():
        result["guards_off"] = sorted(guarded.off())
    try:
        ok = check_all(w, lambda shape: {}, result)
    except (RuntimeError, ValueError, FileNotFoundError, ImportError) as exc:
        say(f"correctness could not run: {first_line(exc)}")
        return 2
    write_result(Path(job["out"]), result)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
