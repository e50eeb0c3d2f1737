"""How long `cockpit export` takes on an 8-hour session, and `cockpit history` on 100 sessions.

The 8-hour session is built in a temporary folder by replaying real recordings: the H200's idle
and loaded telemetry ticks (tests/fixtures/telemetry) repeated at 1 Hz for 28,800 s through the
cockpit's own TrackWriter (5,760 rows), 200 gate runs cycling through the recorded env, build,
correctness, bench and profile results with their logs (each bench with its probe's 880 NVML
samples), 200 status lines and a GPU summary per phase. Each export runs as the user runs it,
`python3 -m cockpit export ID --format F` in a fresh process (imports included), best of 3.

    python3 bench/export.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cockpit.config import Config  # noqa: E402
from cockpit.gates.build.gate import judge_build  # noqa: E402
from cockpit.gates.env.gate import env_verdict, read_env_result  # noqa: E402
from cockpit.gates.profile.gate import CLOCK_NOTE, judge_profile  # noqa: E402
from cockpit.report.export import DEFAULT_NAMES  # noqa: E402
from cockpit.session import events as ev  # noqa: E402
from cockpit.session import timer  # noqa: E402
from cockpit.session.journal import JournalWriter, read_journal  # noqa: E402
from cockpit.session.state import fold  # noqa: E402
from cockpit.session.status import compose_status  # noqa: E402
from cockpit.session.workspace import SessionRef, Workspace, create_session  # noqa: E402
from cockpit.telemetry.history import History  # noqa: E402
from cockpit.telemetry.recording import read_recording, shift_snapshot  # noqa: E402
from cockpit.telemetry.track import TrackWriter  # noqa: E402

FIX = REPO / "tests" / "fixtures"
T0 = 1_795_300_000.0
HOURS = 8


def recorded_runs() -> list[tuple[str, str, str, dict, str, float, dict | None]]:
    """(gate, status, summary, result, log text, duration, probe result) from the recordings."""
    env_path = FIX / "gpu" / "env-result-h200.json"
    status, summary = env_verdict(read_env_result(env_path))
    env = ("env", status, summary, json.loads(env_path.read_text()), (FIX / "gpu" / "env-run-h200.log")
           .read_text(), 5.2, None)
    log = (FIX / "gpu" / "build" / "clean.log").read_text()
    probe = json.loads((FIX / "gpu" / "build" / "noop-result.json").read_text()) | {"duration_s": 26.2}
    b = judge_build(log.splitlines(), 0, probe)
    build = ("build", b.status, b.summary, b.result, log, 26.71, None)
    c = json.loads((FIX / "gpu" / "gates" / "gate-correctness.json").read_text())
    correctness = ("correctness", c["status"], c["summary"], c["result"], "", c["duration_s"], None)
    g = json.loads((FIX / "gpu" / "gates-blocks" / "gate-bench.json").read_text())
    samples = json.loads(gzip.decompress((FIX / "gpu" / "gates-blocks" / "probe-bench.json.gz").read_bytes()))
    bench = ("bench", g["status"], g["summary"], g["result"],
             (FIX / "gpu" / "gates-blocks" / "gate-bench.stderr").read_text(), g["duration_s"], samples)
    p = judge_profile((FIX / "gpu" / "ncu" / "ours-d64.csv").read_text(), {"clock_note": CLOCK_NOTE["base"]},
                      None)
    ncu_log = (FIX / "gpu" / "ncu" / "ours-d64.stdout").read_text()
    profile = ("profile", p.status, p.summary, p.result, ncu_log, 12.0, None)
    return [env, build, correctness, bench, bench, profile]


def shifted_probe(probe: dict, start: float) -> dict:
    dt = start - probe["started"]
    return {**probe, "started": probe["started"] + dt, "finished": probe["finished"] + dt,
            "gpu_samples": [{**s, "t": s["t"] + dt} for s in probe["gpu_samples"]]}


def long_session(ws: Workspace, t0: float = T0, gate_runs: int = 200, statuses: int = 200,
                 hours: float = HOURS, telemetry: bool = True) -> SessionRef:
    ref = create_session(ws, Config(), "eight hours on the H200: tile, vectorize, fuse", "optimize", t0)
    end = t0 + hours * 3600
    writer = JournalWriter(ref.journal)
    runs = recorded_runs()
    if telemetry:
        frames = [*read_recording(FIX / "telemetry" / "idle-h200.jsonl").snapshots,
                  *read_recording(FIX / "telemetry" / "loaded-h200.jsonl").snapshots]
        track = TrackWriter(ref.path / "telemetry.jsonl")
        history = History()
        phase_ends = [t0 + hours * 3600 * (i + 1) / 6 for i in range(5)]
        for i in range(int(hours * 3600)):
            frame = frames[i % len(frames)]
            snap = shift_snapshot(frame, t0 + i - frame.t)
            track.offer(snap)
            history.append(snap)
            if phase_ends and snap.t >= phase_ends[0]:
                t = phase_ends.pop(0)
                state = fold(read_journal(ref.journal).events)
                for e in timer.advance(state, t):
                    writer.append(e)
                writer.append(ev.gpu_summary(t, state.current_run.phase,  # type: ignore[union-attr]
                                             history.phase_summary(t - 900, t)))
        track.close()
    (ref.path / "logs").mkdir(exist_ok=True)
    (ref.path / "results").mkdir(exist_ok=True)
    events = []
    for i in range(gate_runs):
        gate, status, summary, result, log, duration, probe = runs[i % len(runs)]
        start = t0 + (i + 0.5) * (hours * 3600 / gate_runs)
        run_id = f"{i + 1:03d}-{gate}"
        rel = f"sessions/{ref.id}/logs/{run_id}.log"
        (ref.path / "logs" / f"{run_id}.log").write_text(log)
        if probe is not None:
            (ref.path / "results" / f"{run_id}.json").write_text(json.dumps(shifted_probe(probe, start)))
        events += [ev.gate_started(start, run_id, gate, ("python3",), rel, 1),
                   ev.gate_finished(start + duration, run_id, gate, status, summary, duration, 0, rel,
                                    result)]
    state = fold(read_journal(ref.journal).events)
    for i in range(statuses):
        t = t0 + (i + 0.25) * (hours * 3600 / statuses)
        events.append(ev.status(t, compose_status(state, timer.timer_view(state, t, 0.8)), auto=True))
    for e in sorted(events, key=lambda e: e["t"]):
        writer.append(e)
    for e in timer.end_session(fold(read_journal(ref.journal).events), end):
        writer.append(e)
    writer.close()
    return ref


def timed(argv: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cockpit", *argv], check=True, cwd=REPO,
                       stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t)
    return best


def line(what: str, seconds: float, target: float) -> None:
    print(f"{what:38} {seconds:>10.2f} s {f'{target:g} s':>8}  {'PASS' if seconds <= target else 'FAIL'}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    os.environ["PYTHONPATH"] = str(REPO)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp) / "long")
        t = time.perf_counter()
        ref = long_session(ws)
        journal = ref.journal.stat().st_size
        rows = sum(1 for line in (ref.path / "telemetry.jsonl").read_text().splitlines() if '"gpu"' in line)
        print(f"# 8-hour session built in {time.perf_counter() - t:.1f} s: {rows} telemetry rows, 200 gate "
              f"runs, 200 status lines, journal {journal / 1e6:.1f} MB; {os.cpu_count()} CPUs")
        print(f"{'what':38} {'best of ' + str(args.repeat):>12} {'target':>8}  result")
        for fmt in ("md", "html", "json"):
            s = timed(["--workspace", str(ws.root), "export", ref.id, "--format", fmt], args.repeat)
            size = (ref.path / DEFAULT_NAMES[fmt]).stat().st_size
            line(f"export --format {fmt} ({size / 1e6:.1f} MB)", s, 2)
        line("export (all three, the default)", timed(["--workspace", str(ws.root), "export", ref.id],
                                                      args.repeat), 6)
        many = Workspace(Path(tmp) / "many")
        for i in range(100):
            long_session(many, T0 + i * 86400, gate_runs=12, statuses=20, hours=2, telemetry=False)
        line("history (100 sessions, 12 runs each)", timed(["--workspace", str(many.root), "history"],
                                                           args.repeat), 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
