"""The cheat catalogue's mutation test (issue 46): every planted cheat in workloads/cheats/ through
its gate's real probe, once with every guard on and once with each guard of that gate off in turn
(COCKPIT_GUARDS_OFF), then the table: which cheats pass with each guard off, whether each cheat is
caught with its own line, and the flags (a guard no cheat needs, a cheat caught by luck, a hole).
The honest twin (workloads/cheats/honest.py) goes through every gate run and must pass.

    python3 bench/cheat_catalogue.py [--only correctness] [--cpu] [--cheats a,b] [--jobs N] [--json OUT]

On a GPU box each run is `python -m cockpit.probes.workload_probe GATE ...` in a child of its own.
--cpu, for a box without one, runs the correctness gate through bench/cheat_cpu_probe.py (the
probe's own correctness steps, without the device's identity and NVML) and leaves out the cheats
not marked CPU_OK and the bench. The table logic is cockpit/analysis/mutation.py's.
Exit 0 when the catalogue is whole (no flag), 1 otherwise, 2 when it could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CHEATS = REPO / "workloads" / "cheats"
NOT_CHEATS = ("cheat_kit", "honest")
sys.path.insert(0, str(REPO))

from cockpit.analysis.mutation import (  # noqa: E402  (the repository first on the path)
    HONEST,
    Cheat,
    Run,
    cheat_of,
    flag_lines,
    mutation,
    runs_json,
    table_lines,
)
from cockpit.workload.guards import GUARDS, OFF_ENV  # noqa: E402

Job = tuple[str, str, str | None]
"""(cheat, gate, the guard turned off or None)."""


def catalogue(names: list[str] | None = None) -> list[Cheat]:
    """The planted cheats (every module of workloads/cheats/ but the kit and the honest twin)."""
    found = [cheat_of(p.stem, p.read_text(encoding="utf-8")) for p in sorted(CHEATS.glob("*.py"))
             if p.stem not in NOT_CHEATS]
    if names:
        unknown = sorted(set(names) - {c.name for c in found})
        if unknown:
            raise SystemExit(f"no cheat called {', '.join(unknown)} in {CHEATS}")
        found = [c for c in found if c.name in names]
    return found


def plan(cheats: list[Cheat], gates: tuple[str, ...]) -> list[Job]:
    """Each cheat with every guard on, then with each guard of its gate off; the honest twin per gate."""
    jobs: list[Job] = [(HONEST, gate, None) for gate in gates]
    for c in cheats:
        if c.gate in gates:
            jobs.append((c.name, c.gate, None))
            jobs += [(c.name, c.gate, g.name) for g in GUARDS if g.gate == c.gate]
            if c.also:  # caught by more than one guard by design: its own run turns them all off
                jobs.append((c.name, c.gate, c.own_off))
    return jobs


def judged(job: Job, rc: int, result: dict[str, Any] | None, log: list[str]) -> Run:
    """One run's verdict and lines: the gate's own first line, then the probe's."""
    cheat, gate, off = job
    if rc == 2 or result is None:
        return Run(cheat, gate, off, "could not run", tuple(log[-1:] or [f"exit {rc}, no result"]))
    first = _gate_lines(gate, result)
    failed = rc != 0 or result.get("ok") is False or bool(first)
    if gate == "correctness":
        from cockpit.gates.correctness.gate import judge_correctness
        from cockpit.gates.correctness.result import read_checked

        verdict = judge_correctness(read_checked(result))
        # caught: a failing check, or the flag on a candidate ("is this the reference?"); a warning
        # on the workload's check, or a verdict that is no pass only because guards were off, is not
        from cockpit.probes.workload.same_kernels import FLAG

        flagged = any(str(w).startswith(FLAG) for w in result.get("warnings") or [])
        first, failed = [verdict.summary], result.get("ok") is False or flagged
    return Run(cheat, gate, off, "fail" if failed else "pass", tuple(first + log))


def _gate_lines(gate: str, result: dict[str, Any]) -> list[str]:
    """The bench gate's refusals and crash, in its own words (none for correctness)."""
    if gate != "bench":
        return []
    from cockpit.errors import CockpitError
    from cockpit.gates.bench.gate import caught_line, crash_line, refusals
    from cockpit.gates.bench.measured import read_measured

    try:
        measured = read_measured(result)
    except CockpitError as exc:
        return [f"the bench result cannot be read: {exc}"]
    lines = ([] if "speed-of-light" in measured.guards_off
             else [r.line(measured.label(r.impl)) for r in refusals(measured)])
    crashed = crash_line(measured) or caught_line(measured)
    failing = [str(row.get("what")) for row in result.get("rows", []) if row.get("ok") is False]
    return lines + ([crashed] if crashed else []) + failing


def run_children(jobs: list[Job], folder: Path, parallel: int, bench_parallel: int = 1) -> list[Run]:
    """Each job as the real probe in a child python: the correctness runs `parallel` at once, then
    the bench runs `bench_parallel` at once (benches side by side share the GPU: what the guards
    catch holds, the times do not)."""
    checks = [j for j in jobs if j[1] != "bench"]
    benches = [j for j in jobs if j[1] == "bench"]
    return (_children(checks, folder / "c", parallel) + _children(benches, folder / "b", bench_parallel))


def _children(jobs: list[Job], folder: Path, parallel: int) -> list[Run]:
    folder.mkdir(parents=True, exist_ok=True)

    def one(i: int, job: Job) -> Run:
        cheat, gate, off = job
        out = folder / f"{i}.json"
        env = {**os.environ, OFF_ENV: off or "", "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-m", "cockpit.probes.workload_probe", gate, "--workspace",
                               str(REPO), "--workload", f"workloads/cheats/{cheat}.py", "--out", str(out)],
                              env=env, cwd=REPO, capture_output=True, text=True, timeout=900)
        return judged(job, done.returncode, _read(out), (done.stdout + done.stderr).splitlines())

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(one, range(len(jobs)), jobs))


def run_on_cpu(jobs: list[Job], folder: Path) -> list[Run]:
    """Every correctness job through bench/cheat_cpu_probe.py, one child forked per job."""
    spec = [{"workload": f"workloads/cheats/{cheat}.py", "off": [off] if off else [],
             "out": str(folder / f"{i}.json"), "log": str(folder / f"{i}.log")}
            for i, (cheat, _gate, off) in enumerate(jobs)]
    listing = folder / "jobs.json"
    listing.write_text(json.dumps(spec))
    done = subprocess.run([sys.executable, str(REPO / "bench" / "cheat_cpu_probe.py"), str(listing)],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=1800)
    codes = {d["out"]: int(d["rc"]) for d in map(json.loads, done.stdout.splitlines())}
    return [judged(job, codes.get(s["out"], 2), _read(Path(s["out"])),
                   Path(s["log"]).read_text(errors="replace").splitlines() if Path(s["log"]).exists()
                   else done.stderr.splitlines()[-1:])
            for job, s in zip(jobs, spec, strict=True)]


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=("correctness", "bench"), default=None)
    p.add_argument("--cpu", action="store_true", help="no GPU: the CPU-runnable correctness cheats only")
    p.add_argument("--cheats", default="", help="comma-separated cheat names (default: all)")
    p.add_argument("--jobs", type=int, default=1, help="correctness probes run at once (GPU runs)")
    p.add_argument("--bench-jobs", type=int, default=1, help="bench probes run at once (GPU runs)")
    p.add_argument("--json", type=Path, default=None, help="write the runs and the table here")
    args = p.parse_args(argv)
    cheats = catalogue([n for n in args.cheats.split(",") if n])
    planted = {g for c in catalogue() for g in (c.guard, *c.also)}
    gates: tuple[str, ...] = ("correctness",) if args.cpu else ((args.only,) if args.only else ("correctness",
                                                                                               "bench"))
    if args.cpu:
        cheats = [c for c in cheats if c.cpu_ok]
    jobs = plan(cheats, gates)
    with tempfile.TemporaryDirectory(prefix="cheats-") as tmp:
        folder = Path(tmp)
        runs = (run_on_cpu(jobs, folder) if args.cpu
                else run_children(jobs, folder, args.jobs, args.bench_jobs))
    guards = {g.name: g.gate for g in GUARDS}
    m = mutation(cheats, guards, runs, planted)
    lines = table_lines(m, cheats, guards)
    print("\n".join(lines))
    if args.json is not None:
        args.json.write_text(json.dumps({"guards": guards, "gates": list(gates), "cpu": args.cpu,
                                         "cheats": [vars(c) for c in cheats], "runs": runs_json(runs),
                                         "table": lines}, indent=1))
    return 1 if flag_lines(m) else 0


if __name__ == "__main__":
    sys.exit(main())
