"""How the cockpit copes with a big session: `cockpit status`, the TUI's first frame and the export.

Two sessions are built in a temporary workspace from real recordings (bench/export.py's gate runs:
the H200's env, build, correctness, bench and profile results with their logs):

  many-events   100,000 journal events — 40,000 of 20 tunes (the H100 layer-norm tune's started,
                trial and finished events, repeated), 1,000 gate runs (their results as the gates
                write them now), 1,000 stalls, 11,000 notes and phase moves, 46,000 auto statuses
                — and 50,000 telemetry rows (one GPU, 5 s rows: 69 hours);
  fat-results   5,200 bench runs whose full results (57 KB each) sit in the journal, as cockpits
                before the results/ files wrote them: a 282 MB journal, the size measured.

Each command runs as the user runs it, in a fresh `python -m cockpit` process (imports
included): `status` cold (no saved state: the first call after a clone) and warm (the calls
after it), the TUI until the session id is drawn on a pseudo-terminal (bench/startup.py's
method), and `export --format md` with its peak RSS.

    python3 bench/big_session.py [--repeat 3] [--only many-events|fat-results]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from export import recorded_runs  # noqa: E402
from startup import CHILD_ENV, first_frame_s  # noqa: E402

from cockpit.config import Config  # noqa: E402
from cockpit.session import events as ev  # noqa: E402
from cockpit.session.results import gate_finished_event  # noqa: E402
from cockpit.session.workspace import SessionRef, Workspace, create_session  # noqa: E402

T0 = 1_795_300_000.0
TARGETS = {"status": 0.150, "first frame": 1.0, "export": 5.0, "export MB": 300}


def _line(event: dict) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"


def many_events(ws: Workspace, events: int = 100_000, rows: int = 50_000) -> SessionRef:
    """An open session of `events` journal events and `rows` telemetry rows."""
    ref = create_session(ws, Config(), "a long week on one kernel: 100k events", "optimize", T0)
    runs = recorded_runs()
    (ref.path / "logs").mkdir(exist_ok=True)
    (ref.path / "results").mkdir(exist_ok=True)
    gate_runs, stalls, notes_and_moves, tunes, trials = 1_000, 1_000, 11_000, 20, 1_998
    statuses = events - 2 - 2 * gate_runs - stalls - notes_and_moves - tunes * (trials + 2)
    span = rows * 5.0
    out: list[tuple[float, dict]] = []
    tune_journal = REPO / "tests/fixtures/gpu/tune-knobs/layernorm-h100-journal.jsonl"
    recorded = [json.loads(line) for line in tune_journal.read_text().splitlines()]
    started = next(e for e in recorded if e["type"] == "tune_started")
    trial = [e for e in recorded if e["type"] == "tune_trial"]
    done = next(e for e in recorded if e["type"] == "tune_finished")
    for k in range(tunes):
        t = T0 + (k + 0.2) * span / tunes
        run = f"tune-{k:02d}"
        out.append((t, {**started, "t": t, "run": run}))
        for i in range(trials):
            out.append((t + 1 + i, {**trial[i % len(trial)], "t": t + 1 + i, "run": run, "number": i}))
        out.append((t + trials + 2, {**done, "t": t + trials + 2, "run": run}))
    for i in range(gate_runs):
        gate, status, summary, result, log, duration, _probe = runs[i % len(runs)]
        start = T0 + (i + 0.5) * span / gate_runs
        run_id = f"{i + 1:04d}-{gate}"
        rel = f"sessions/{ref.id}/logs/{run_id}.log"
        if i < 12:
            (ref.path / "logs" / f"{run_id}.log").write_text(log)
        out.append((start, ev.gate_started(start, run_id, gate, ("python3",), rel, 1)))
        if i < stalls:
            out.append((start + 1, ev.gate_stalled(start + 1, run_id, gate, 60.0)))
        finished = gate_finished_event(ref.path, ws.root, start + duration, run_id, gate, status, summary,
                                       duration, 0, rel, result)
        out.append((start + duration, finished))
    phases = [p.name for p in Config().template("optimize").phases]
    for i in range(notes_and_moves):
        t = T0 + (i + 0.3) * span / notes_and_moves
        if i % 100 == 0:
            out.append((t, ev.phase_started(t, phases[(i // 100) % len(phases)])))
        else:
            out.append((t, ev.note(t, f"note {i}: tried BLOCK_N={16 << (i % 4)}, spills {i % 7} B")))
    for i in range(statuses):
        t = T0 + (i + 0.1) * span / statuses
        out.append((t, ev.status(t, f"{i // 60}:{i % 60:02d} elapsed · FIX 1:00/30:00 · 29:00 left in phase",
                                 auto=True)))
    out.sort(key=lambda p: p[0])
    with ref.journal.open("a", encoding="utf-8") as f:
        f.writelines(_line(e) for _, e in out)
    gpu = {"type": "gpus", "t": T0, "gpus": [{"index": 0, "name": "NVIDIA H200",
                                             "uuid": "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20"}]}
    with (ref.path / "telemetry.jsonl").open("w", encoding="utf-8") as f:
        f.write(_line(gpu))
        for i in range(rows):
            busy = (i // 60) % 2
            f.write(_line({"t": T0 + 5 * i, "gpu": 0, "uuid": gpu["gpus"][0]["uuid"],
                           "util": 97.0 if busy else 0.0, "memory_mib": 9000.0 if busy else 600.0,
                           "power_w": 610.0 if busy else 88.0, "temp_c": 61.0 if busy else 34.0,
                           "sm_clock_mhz": 1980.0 if busy else 345.0, "samples": 5}))
    return ref


def fat_results(ws: Workspace, bench_runs: int = 5_200) -> SessionRef:
    """An open session whose journal holds `bench_runs` full bench results inline."""
    ref = create_session(ws, Config(), "an old journal: full results inline", "optimize", T0)
    bench = next(r for r in recorded_runs() if r[0] == "bench")
    _gate, status, summary, result, _log, duration, _probe = bench
    with ref.journal.open("a", encoding="utf-8") as f:
        for i in range(bench_runs):
            start = T0 + 60 * i
            run_id = f"{i + 1:04d}-bench"
            rel = f"sessions/{ref.id}/logs/{run_id}.log"
            f.write(_line(ev.gate_started(start, run_id, "bench", ("python3",), rel, 1)))
            f.write(_line(ev.gate_finished(start + duration, run_id, "bench", status, summary, duration,
                                           0, rel, result)))
    return ref


def _child_rss_mb(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `python -m cockpit` process."""
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "cockpit", *argv],
                          capture_output=True, text=True, env=CHILD_ENV, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"bench: cockpit {' '.join(argv)} failed: {done.stderr.strip()[-800:]}")
    seconds, kb = done.stdout.split()
    return float(seconds), int(kb) / 1024


def _row(what: str, value: float, unit: str, target: float) -> str:
    shown = f"{value * 1000:.0f} ms" if unit == "s" and value < 1 else f"{value:.2f} s" if unit == "s" \
        else f"{value:.0f} MB"
    limit = f"{target * 1000:.0f} ms" if unit == "s" and target < 1 else f"{target:g} {unit}"
    return f"| {what} | {shown} | ≤ {limit} | {'PASS' if value <= target else 'FAIL'} |"


def measure(name: str, ws: Workspace, ref: SessionRef, repeat: int) -> list[str]:
    cache = Path(CHILD_ENV["XDG_CACHE_HOME"])
    status = ["--workspace", str(ws.root), "status"]
    small = Workspace(ws.root.parent / f"{name}-small")
    create_session(small, Config(), "one event", "optimize", T0)
    floor = min(_child_rss_mb(["--workspace", str(small.root), "status"])[0] for _ in range(repeat))
    cold = []
    for _ in range(repeat):
        shutil.rmtree(cache / "cockpit", ignore_errors=True)
        cold.append(_child_rss_mb(status)[0])
    warm = [_child_rss_mb(status)[0] for _ in range(repeat)]
    rows = [_row(f"{name}: `cockpit status`, first call (no saved state)", min(cold), "s", 60),
            _row(f"{name}: `cockpit status`", min(warm), "s", TARGETS["status"]),
            _row("(reference) `cockpit status` on a new session", floor, "s", TARGETS["status"])]
    print("\n".join(rows), flush=True)
    first_frame_s(ws.root, b"Total", timeout_s=120)  # warm-up, untimed: .pyc files, page cache
    cold, shown = [], []
    for _ in range(repeat):
        shutil.rmtree(cache / "cockpit", ignore_errors=True)
        cold.append(first_frame_s(ws.root, b"Help"))  # the key bar: drawn before the journal is read
        shutil.rmtree(cache / "cockpit", ignore_errors=True)
        shown.append(first_frame_s(ws.root, b"Total", timeout_s=120))  # the phase table's last row
    warm = [first_frame_s(ws.root, b"Total") for _ in range(repeat)]
    rows = [_row(f"{name}: TUI first frame, no saved state", min(cold), "s", TARGETS["first frame"]),
            _row(f"{name}: TUI session shown, no saved state", min(shown), "s", 120),
            _row(f"{name}: TUI first frame (session shown)", min(warm), "s", TARGETS["first frame"])]
    export = [_child_rss_mb(["--workspace", str(ws.root), "export", ref.id, "--format", "md"])
              for _ in range(repeat)]
    rows.append(_row(f"{name}: `cockpit export --format md`", min(s for s, _ in export), "s",
                     TARGETS["export"]))
    rows.append(_row(f"{name}: export peak RSS", min(mb for _, mb in export), "MB", TARGETS["export MB"]))
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only", choices=("many-events", "fat-results"))
    args = p.parse_args()
    print(f"# {os.cpu_count()} CPUs, python {sys.version.split()[0]}; best of {args.repeat}")
    with tempfile.TemporaryDirectory(prefix="cockpit-big-") as tmp:
        CHILD_ENV["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        paths = (str(REPO), os.environ.get("PYTHONPATH", ""))  # the device's wheels stay visible
        CHILD_ENV["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        print("| measurement | best | target | result |\n|---|---|---|---|")
        for name, build in (("many-events", many_events), ("fat-results", fat_results)):
            if args.only not in (None, name):
                continue
            ws = Workspace(Path(tmp) / name)
            t = time.perf_counter()
            ref = build(ws)
            size = ref.journal.stat().st_size / 1e6
            lines = sum(1 for _ in ref.journal.open("rb"))
            print(f"# {name}: built in {time.perf_counter() - t:.1f} s; "
                  f"journal {lines:,} lines, {size:.1f} MB")
            for row in measure(name, ws, ref, args.repeat):
                print(row, flush=True)
    print(f"# bench peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
