"""The tune gate on a GPU box, end to end, with its numbers collected into $OUT.

    python3 bench/tune_run.py all   [--budget 5]    # sweep + search + confirmation, in the foreground
    python3 bench/tune_run.py start [--budget 15]   # the correctness sweep now, the search detached (setsid)
    python3 bench/tune_run.py scale [--budget 3]    # detached: the same search on 1 GPU, then on all of them
    python3 bench/tune_run.py wait  [--seconds 540] # wait for what start/scale began, then collect into $OUT

Installs nothing: optuna must import (carry it as a wheel). Everything runs in scratch workspaces
under $COCKPIT_TUNE_RUN (default /tmp/cockpit-tune), copies of this repository's cockpit.toml,
csrc/ and workloads/, so the checkout is never touched; a later command on the same (warm) machine
finds them.
- The correctness sweep builds configurations of the workload's knobs that between them take every
  value of every knob its rule allows on the present GPU (the current ones too), per group of
  shapes (keep_per), in parallel (the tune's own variant builds), reports each build's time, and
  checks each on the group's correctness shapes through the tune's measuring child.
- The search is `cockpit tune --json` in a fresh session while `cockpit telemetry record`
  samples NVML every 0.5 s, for the GPUs' idle fraction; bench/tune_report.py summarizes.
$OUT gets: check.json, tune-report.txt, tune-summary.json, the files a kept winner wrote (the
workload's tuned file and tuned header), tune-logs.tar.gz; for `scale`: scale-report.txt,
scale-summary.json, scale-logs.tar.gz.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from tune_report import summarize, table  # noqa: E402

from cockpit.config import load_config  # noqa: E402
from cockpit.gates.interpreter import gates_python  # noqa: E402
from cockpit.telemetry.nvml import Nvml  # noqa: E402
from cockpit.tune.launch import make_plan  # noqa: E402
from cockpit.tune.measure import MeasureCrashed, MeasureFailed, start_measuring  # noqa: E402
from cockpit.tune.search import NOTHING_TO_BUILD, request_for  # noqa: E402
from cockpit.tune.space import KnobSetting, label, variant  # noqa: E402
from cockpit.tune.target import list_gpus, resolve_target  # noqa: E402
from cockpit.tune.worker import builder, measurer_for  # noqa: E402
from cockpit.workload.describe import workload_args, workload_manifest  # noqa: E402

RUN = Path(os.environ.get("COCKPIT_TUNE_RUN", "/tmp/cockpit-tune"))
OUT = Path(os.environ.get("OUT") or RUN / "out")


def say(text: str) -> None:
    print(text, flush=True)


def workspace(name: str, confirm_top: int | None = None) -> Path:
    """A scratch copy of cockpit.toml, csrc/ and workloads/; [tune] edited where asked."""
    ws = RUN / name
    if ws.exists():
        shutil.rmtree(ws)
    ws.mkdir(parents=True)
    for folder in ("csrc", "workloads"):
        shutil.copytree(REPO / folder, ws / folder)
    text = (REPO / "cockpit.toml").read_text()
    head, _, rest = text.partition("\n[tune]\n")
    body, _, tail = rest.partition("\n[tune.space]\n")
    if confirm_top is not None:
        body = re.sub(r"(?m)^confirm_top = .*$", f"confirm_top = {confirm_top}", body)
    # H100/H200 sit at their power cap under these kernels: the normal loaded state, not a
    # disturbance (README, Gates); without it every confirmation would be suspect.
    head = head.replace("tolerated_clock_events = []", 'tolerated_clock_events = ["power cap"]')
    (ws / "cockpit.toml").write_text(f"{head}\n[tune]\n{body}" + (f"\n[tune.space]\n{tail}" if tail else ""))
    return ws


def cockpit(ws: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), *args], cwd=REPO,
                          text=True, **kwargs)


def covering(feasible: list[KnobSetting], current: KnobSetting) -> list[KnobSetting]:
    """The current configuration, then for every value of every knob a feasible configuration
    that has it (preferring ones that add the most values not yet covered)."""

    def values(c: KnobSetting) -> set[tuple[int, Any]]:
        return set(enumerate(c))

    chosen = [current]
    wanted = set().union(*map(values, feasible))
    covered = values(current)
    while wanted - covered:
        best = max(feasible, key=lambda c: len(values(c) - covered))
        chosen.append(best)
        covered |= values(best)
    return chosen


def check(ws: Path) -> dict[str, Any]:
    """Build a covering set of configurations per group in parallel and check each one's correctness."""
    config = load_config(ws)
    python = gates_python(config.gates, ws).path
    gpus = list_gpus(Nvml())
    target = resolve_target(None, {}, gpus)
    session = ws / "sessions" / "check"
    plan, _ = make_plan(ws, workload_manifest(ws, config, python), config, target, workload_args(ws, config),
                        session / "tune", session / "journal.jsonl", time.time(), python)
    pool = builder(plan, ws, 1, python)
    jobs = []
    for g in plan.groups:
        for c in covering(list(g.feasible), g.current):
            v = variant(plan.knobs, c, g.group, g.others)
            jobs.append((g, c, NOTHING_TO_BUILD if v is None else pool.submit(v)))
    started = time.time()
    built = [(g, c, f.result()) for g, c, f in jobs]
    wall = time.time() - started
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpus[0].uuid)
    measurer = measurer_for(plan, ws, RUN / "check-probe.log", env=env, python=python)
    rows = []
    try:
        start_measuring(measurer)
        for g, c, b in built:
            row: dict[str, Any] = {"group": g.label, "config": label(plan.knobs, c),
                                   "compile_s": round(b.seconds, 2), "cached": b.cached,
                                   "registers": b.registers, "spills": b.spills}
            if not b.ok:
                row.update(ok=False, detail=f"does not build: {b.error}")
            else:
                try:
                    reply = measurer.request({"op": "check", "config": request_for(plan, g, c),
                                              "shapes": list(g.group.checks)})
                    row.update(ok=bool(reply["ok"]), detail=reply["detail"])
                except MeasureCrashed as exc:
                    measurer.restart()
                    row.update(ok=False, detail=f"crashed: {exc}")
                except MeasureFailed as exc:
                    row.update(ok=False, detail=f"failed: {exc}")
            say(f"{'PASS' if row['ok'] else 'FAIL'}  {g.label} {row['config']:<40} "
                f"build {row['compile_s']:5.1f} s  regs {row['registers']} spills {row['spills']}  "
                f"{row['detail']}")
            rows.append(row)
    finally:
        measurer.close()
        pool.close()
    times = sorted(r["compile_s"] for r in rows if r["compile_s"])
    return {"gpu": gpus[0].name, "arch": plan.arch, "workload": plan.workload, "total": len(rows),
            "passed": sum(r["ok"] for r in rows),
            "failed": [f"{r['group']} {r['config']}: {r['detail']}" for r in rows if not r["ok"]],
            "compile": {"configs": len(times), "parallel_wall_s": round(wall, 1), "cpus": os.cpu_count(),
                        "median_s": times[len(times) // 2] if times else None,
                        "max_s": times[-1] if times else None},
            "rows": rows}


def search(name: str, budget: float, gpus: str | None = None, confirm_top: int | None = None) -> Path:
    """One `cockpit tune` in a fresh session with NVML recorded; returns its workspace."""
    ws = workspace(name, confirm_top)
    cockpit(ws, "new", f"tune run {name}", check=True, capture_output=True)
    record = ["telemetry", "record", "--seconds", str(int(budget * 60 + 1800)), "--interval", "0.5",
              "-o", str(ws / "nvml.jsonl")]
    telemetry = subprocess.Popen([sys.executable, "-m", "cockpit", *record], cwd=REPO,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    args = ["tune", "--budget", f"{budget:g}", "--json", *(["--gpus", gpus] if gpus else [])]
    with (ws / "tune.json").open("w") as out, (ws / "tune.log").open("w") as log:
        rc = cockpit(ws, *args, stdout=out, stderr=log).returncode
    telemetry.terminate()
    telemetry.wait()
    (ws / "tune.rc").write_text(f"{rc}\n")
    say(f"{name}: cockpit tune exited {rc} ({ws / 'tune.log'})")
    return ws


def session_of(ws: Path) -> Path:
    return sorted((ws / "sessions").glob("*/journal.jsonl"))[-1].parent


def report(ws: Path, check_json: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The run's summary and its table; a run that never started says why (its log's end)."""
    try:
        result = json.loads((ws / "tune.json").read_text() or "null")
        summary = summarize(session_of(ws), result, ws / "nvml.jsonl", check_json)
    except (SystemExit, OSError, ValueError, IndexError) as exc:
        tune_log = ws / "tune.log"
        log = tune_log.read_text(errors="replace").strip().splitlines() if tune_log.exists() else []
        summary = {"error": str(exc), "rc": (ws / "tune.rc").read_text().strip(), "log_tail": log[-20:],
                   "trials_per_min": None, "gpus": []}
        return summary, [f"{ws.name}: no summary ({exc}); cockpit tune said:", *log[-20:]]
    return summary, table(summary)


def kept_paths(ws: Path) -> list[str]:
    """What a kept winner wrote (workspace-relative), from `cockpit tune --json`'s result."""
    try:
        result = json.loads((ws / "tune.json").read_text() or "null")
    except (OSError, ValueError):
        return []
    keep = (result or {}).get("keep") or {}
    return [p for p in keep.get("paths", []) if (ws / p).is_file()]


def collect() -> None:
    """Whatever is done into $OUT (at most 8 files)."""
    OUT.mkdir(parents=True, exist_ok=True)
    if (RUN / "check.json").exists():
        shutil.copy(RUN / "check.json", OUT / "check.json")
    if (RUN / "single" / "tune.rc").exists():
        ws = RUN / "single"
        swept = json.loads((RUN / "check.json").read_text()) if (RUN / "check.json").exists() else None
        summary, lines = report(ws, swept)
        (OUT / "tune-summary.json").write_text(json.dumps(summary, indent=1))
        (OUT / "tune-report.txt").write_text("\n".join(lines) + "\n")
        say("\n".join(lines))
        for kept in kept_paths(ws):
            shutil.copy(ws / kept, OUT / Path(kept).name)
        _tar(OUT / "tune-logs.tar.gz", [ws / "sessions", ws / "tune.log", ws / "tune.json", ws / "nvml.jsonl",
                                        RUN / "single.log", RUN / "check-probe.log"])
    if (RUN / "two" / "tune.rc").exists():
        (one, one_lines), (two, two_lines) = report(RUN / "one"), report(RUN / "two")
        ratio = (two["trials_per_min"] / one["trials_per_min"]) \
            if one["trials_per_min"] and two["trials_per_min"] else None
        scale = {"one_gpu": one, "two_gpus": two,
                 "trials_per_min": [one["trials_per_min"], two["trials_per_min"]],
                 "speedup": round(ratio, 2) if ratio else None}
        lines = ["== 1 GPU", *one_lines, "== all GPUs", *two_lines,
                 f"trials per minute: {one['trials_per_min']} on 1 GPU, {two['trials_per_min']} on "
                 f"{len(two['gpus'])}: {scale['speedup']}x"]
        (OUT / "scale-summary.json").write_text(json.dumps(scale, indent=1))
        (OUT / "scale-report.txt").write_text("\n".join(lines) + "\n")
        say("\n".join(lines))
        _tar(OUT / "scale-logs.tar.gz", [RUN / n / f for n in ("one", "two")
                                          for f in ("sessions", "tune.log", "tune.json", "nvml.jsonl")]
             + [RUN / "scale.log"])


def _tar(path: Path, members: list[Path]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for m in members:
            if m.exists():
                tar.add(m, arcname=str(m.relative_to(RUN)))


def detach(*args: str) -> None:
    log = RUN / f"{args[0].lstrip('_')}.log"
    subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *args], cwd=REPO,
                     stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    say(f"started in the background ({log}); collect with: python3 bench/tune_run.py wait")


def run_check() -> None:
    ws = workspace("check")
    result = check(ws)
    (RUN / "check.json").write_text(json.dumps(result, indent=1))
    say(f"correctness sweep: {result['passed']}/{result['total']} correct; compile {result['compile']}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=("all", "start", "scale", "wait", "_single", "_scale"))
    p.add_argument("--budget", type=float, help="search minutes (all 5, start 15, scale 3 per run)")
    p.add_argument("--seconds", type=float, default=540, help="wait: at most this long")
    args = p.parse_args(argv)
    RUN.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    if args.mode == "all":
        run_check()
        search("single", args.budget or 5)
        collect()
    elif args.mode == "start":
        run_check()
        detach("_single", "--budget", str(args.budget or 15))
    elif args.mode == "scale":
        detach("_scale", "--budget", str(args.budget or 3))
    elif args.mode == "_single":
        search("single", args.budget)
    elif args.mode == "_scale":
        first = list_gpus(Nvml())[0].index
        search("one", args.budget, gpus=str(first), confirm_top=1)
        search("two", args.budget, confirm_top=1)
    else:
        deadline = time.time() + args.seconds
        pending = [RUN / n / "tune.rc" for n, log in (("single", "single.log"), ("two", "scale.log"))
                   if (RUN / log).exists()]
        while time.time() < deadline and not all(p.exists() for p in pending):
            time.sleep(5)
        collect()
        left = [str(p.parent.name) for p in pending if not p.exists()]
        if left:
            say(f"still running: {', '.join(left)}; run `python3 bench/tune_run.py wait` again")
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
