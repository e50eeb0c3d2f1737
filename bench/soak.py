"""The TUI through a whole working day, compressed: does it stay small, smooth and correct?

    python3 bench/soak.py [--hours 8] [--minutes 10] [--gates 200] [--lines 5000]

The cockpit runs headless (Pilot, 160x48, notifications on) on a clock that runs `--hours` of
session in `--minutes` of real time: statuses every 60 s of session time, the phase timer and
overruns as in a real day, the GPU panel fed from the loaded H200 recording at one frame per 5 s
of session time (so the telemetry track gets its 5 s rows for the whole day), and `--gates` gate
runs spread evenly over it, cycling the five gates, each a child printing `--lines` lines of
build-like output through the real runner into the log pane and its log file. Every 30 runs a
phase ends (its GPU summary journaled). A 10 ms timer measures how late the event loop runs it.

Targets: resident memory grows <= 4 MiB from the end of warm-up (the first 10 % of the runs) to
the end; the timer's lateness p99 <= 50 ms; afterwards the journal folds with no problem and every
run passed, and telemetry.jsonl reads with no problem.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import textual

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cockpit.config import Config, GateConfig  # noqa: E402
from cockpit.config.gates import GATE_NAMES  # noqa: E402
from cockpit.memory import limit_malloc_arenas  # noqa: E402
from cockpit.session.journal import read_journal  # noqa: E402
from cockpit.session.state import fold  # noqa: E402
from cockpit.session.workspace import SessionRef, Workspace, create_session  # noqa: E402
from cockpit.telemetry.recording import ReplaySampler  # noqa: E402
from cockpit.telemetry.track import TRACK_NAME, read_track  # noqa: E402
from cockpit.ui.app import CockpitApp  # noqa: E402

RECORDING = REPO / "tests" / "fixtures" / "telemetry" / "loaded-h200.jsonl"
GROWTH_MAX_MIB, LAG_P99_MAX_MS = 4.0, 50.0
BEAT_S = 0.010
STATUS_EVERY_S = 60.0  # of session time
GPU_FRAME_S = 5.0  # of session time per GPU frame: one telemetry row each
PHASE_EVERY = 30  # gate runs
FAKE_GATE = """
import sys
n = int(sys.argv[1])
w = sys.stdout.write
for i in range(1, n + 1):
    if i % 250 == 0:
        w(f"ptxas info    : Used {96 + i % 64} registers, 0 bytes smem, 400 bytes cmem[0]\\n")
    else:
        w(f"[{i}/{n}] /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -c csrc/attn_fwd_{i % 17}.cu "
          f"-o build/attn_fwd_{i % 17}.o\\n")
"""


class ScaledClock:
    """Session time running `factor` times faster than real time, from now."""

    def __init__(self, factor: float) -> None:
        self.factor = factor
        self._t0, self._real0 = time.time(), time.monotonic()

    def now(self) -> float:
        return self._t0 + (time.monotonic() - self._real0) * self.factor


class Lateness:
    """How late a repeating 10 ms loop timer fires, in a fixed histogram (1 ms buckets): the
    measurement must not grow the memory it watches."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.counts = [0] * 1001  # 0..999 ms, and 1 s or more
        self.worst_ms = 0.0
        self._due = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._due = time.perf_counter() + BEAT_S
        self._handle = self._loop.call_later(BEAT_S, self._fired)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()

    def _fired(self) -> None:
        late_ms = max(0.0, (time.perf_counter() - self._due) * 1000)
        self.counts[min(1000, int(late_ms))] += 1
        self.worst_ms = max(self.worst_ms, late_ms)
        self.start()

    def percentile(self, q: float) -> float:
        """The upper edge (ms) of the bucket holding the q-th quantile."""
        total, seen = sum(self.counts), 0
        for ms, n in enumerate(self.counts):
            seen += n
            if seen >= q * total:
                return float(ms + 1)
        return float(len(self.counts))


@dataclass(frozen=True)
class Soaked:
    factor: float
    curve: list[tuple[int, float]]
    """(gate runs done, resident MiB) along the way."""
    warm_up: int
    lateness: Lateness
    ref: SessionRef


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


async def soak(args: argparse.Namespace, ws: Workspace) -> Soaked:
    factor = args.hours * 3600 / (args.minutes * 60)
    clock = ScaledClock(factor)
    command = (sys.executable, "-c", FAKE_GATE, str(args.lines))
    config = Config(status_every_s=STATUS_EVERY_S,
                    gates={name: GateConfig(command=command) for name in GATE_NAMES})
    ref = create_session(ws, config, "Soak: a day of gates, statuses and telemetry", "optimize",
                         clock.now())
    app = CockpitApp(ws, config, ref, clock=clock, tick_s=0.25, typing_gap_s=0,
                     telemetry=ReplaySampler.from_path(RECORDING, clock), gpu_every_s=GPU_FRAME_S / factor)
    warm_up = max(1, args.gates // 10)
    curve: list[tuple[int, float]] = []
    lateness = Lateness(asyncio.get_running_loop())
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await pilot.pause()
        lateness.start()
        real0, spacing = time.monotonic(), args.minutes * 60 / args.gates
        for i in range(args.gates):
            await asyncio.sleep(max(0.0, real0 + i * spacing - time.monotonic()))
            app.gates.request(GATE_NAMES[i % len(GATE_NAMES)])
            while app.gates.run is not None or app.gates.queue:
                await asyncio.sleep(0.05)
            done = i + 1
            if done % PHASE_EVERY == 0:
                await pilot.press("n")
                await pilot.press("y")
            if done == warm_up or done % max(1, args.gates // 8) == 0 or done == args.gates:
                curve.append((done, rss_mib()))
        await pilot.pause()
        lateness.stop()
    return Soaked(factor, curve, warm_up, lateness, ref)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--hours", type=float, default=8.0, help="session time to go through")
    p.add_argument("--minutes", type=float, default=10.0, help="real time to go through it in")
    p.add_argument("--gates", type=int, default=200)
    p.add_argument("--lines", type=int, default=5000, help="lines each gate run prints")
    args = p.parse_args()
    limit_malloc_arenas()  # as `cockpit` does before Textual's threads start
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        ws = Workspace(Path(tmp))
        r = asyncio.run(soak(args, ws))
        read = read_journal(r.ref.journal)
        state = fold(read.events, ws.root)
        track = read_track(r.ref.path / TRACK_NAME)
        journal_mb = r.ref.journal.stat().st_size / 1e6
        logs_mb = sum(f.stat().st_size for f in (r.ref.path / "logs").iterdir()) / 1e6
    wall = time.monotonic() - t0
    warm = next(mib for done, mib in r.curve if done == r.warm_up)
    growth = r.curve[-1][1] - warm
    p99 = r.lateness.percentile(0.99)
    passed = sum(1 for run in state.gate_runs if run.status == "pass")
    phases_ended = sum(1 for e in read.events if e["type"] == "phase_ended")
    summaries = sum(1 for e in read.events if e["type"] == "gpu_summary")
    journal_ok = not read.problems and passed == args.gates == len(state.gate_runs)
    track_ok = not track.problems and len(track.rows) > 0

    def row(what: str, measured: str, target: str = "", ok: bool | None = None) -> None:
        verdict = "" if ok is None else ("PASS" if ok else "FAIL")
        print(f"{what:<40} {measured:>26} {target:>10} {verdict:>6}")

    print(f"# soak: {args.hours:g} h of session in {args.minutes:g} min (x{r.factor:.0f}), "
          f"{args.gates} gate runs x {args.lines} lines, GPU frames at {r.factor / GPU_FRAME_S:.0f} Hz "
          f"(5 s of session each), statuses every {STATUS_EVERY_S:g} s; {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, textual {textual.__version__}; took {wall:.0f} s")
    print(f"{'what':<40} {'measured':>26} {'target':>10} {'result':>6}")
    for done, mib in r.curve:
        row(f"RSS after gate run {done}" + (" (warm)" if done == r.warm_up else ""), f"{mib:.1f} MiB")
    row("RSS growth after warm-up", f"{growth:+.1f} MiB", f"<= {GROWTH_MAX_MIB:g}", growth <= GROWTH_MAX_MIB)
    row(f"timer lateness p99 ({sum(r.lateness.counts)} beats)", f"{p99:.0f} ms",
        f"<= {LAG_P99_MAX_MS:g}", p99 <= LAG_P99_MAX_MS)
    row("timer lateness p50 / worst", f"{r.lateness.percentile(0.5):.0f} / {r.lateness.worst_ms:.0f} ms")
    row("gate runs journaled, passed", f"{len(state.gate_runs)}, {passed}")
    row("statuses, phases ended, GPU summaries", f"{len(state.statuses)}, {phases_ended}, {summaries}")
    row("journal: events, MB, problems", f"{len(read.events)}, {journal_mb:.1f}, {len(read.problems)}",
        "0 problems", journal_ok)
    row("telemetry.jsonl: rows, problems", f"{len(track.rows)}, {len(track.problems)}", "0 problems",
        track_ok)
    row("gate logs on disk", f"{logs_mb:.0f} MB")
    for problem in [*(p.describe(Path("journal.jsonl")) for p in read.problems[:3]), *track.problems[:3]]:
        print(f"  {problem}")


if __name__ == "__main__":
    main()
