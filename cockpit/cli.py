"""The `cockpit` command line. Exit codes: 0 ok, 1 a check failed, 2 usage or environment error.

Kept light on purpose: `cockpit status` runs from tmux's status line every few seconds, so
nothing here imports Textual; the TUI is imported only when it is about to run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from cockpit import __version__
from cockpit.config import GATE_NAMES
from cockpit.errors import CockpitError


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--workspace", type=Path, default=argparse.SUPPRESS, metavar="DIR",
        help="folder holding cockpit.toml, sessions/ and patterns/ (default: nearest with a "
        "cockpit.toml, else the current folder)",
    )
    p = argparse.ArgumentParser(
        prog="cockpit", parents=[common],
        description="Session cockpit for CUDA kernel work: phase timer, status updates, gates.",
    )
    p.add_argument("--version", action="version", version=f"cockpit {__version__}")
    p.add_argument("--session", metavar="ID|latest", default=None,
                   help="session to open (default: the latest open one, or offer a new one)")
    p.add_argument("--replay", type=Path, metavar="FILE.jsonl",
                   help="drive the GPU panel from a telemetry recording instead of NVML")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    new = sub.add_parser("new", parents=[common], help="create a session; print its id and folder")
    new.add_argument("objective", help='what this session is for, e.g. "vectorize K loads"')
    new.add_argument("--template", default=None, metavar="NAME",
                     help="session template: optimize (default), baseline, or one from cockpit.toml")
    new.add_argument("--json", action="store_true", help="print one JSON object")

    status = sub.add_parser("status", parents=[common],
                            help="one status line of the latest open session (for tmux status-right)")
    status.add_argument("--session", metavar="ID|latest", default=argparse.SUPPRESS)
    status.add_argument("--json", action="store_true", help="print one JSON object")

    gate = sub.add_parser("gate", parents=[common],
                          help="run one gate headless and record it in the open session")
    gate.add_argument("name", choices=GATE_NAMES, help="the gate to run")
    gate.add_argument("--session", metavar="ID|latest", default=argparse.SUPPRESS)
    gate.add_argument("--json", action="store_true",
                      help="print one JSON object on stdout (the live log still goes to stderr)")

    phase = sub.add_parser("phase", parents=[common],
                           help="move the phase timer without the TUI: next, skip, pause, or a phase name")
    phase.add_argument("move", metavar="next|skip|pause|PHASE")
    phase.add_argument("--session", metavar="ID|latest", default=argparse.SUPPRESS)

    end = sub.add_parser("end", parents=[common], help="end the session and write its report (as E does)")
    end.add_argument("--reason", default="ended by the engineer", help="said in the journal and the report")
    end.add_argument("--session", metavar="ID|latest", default=argparse.SUPPRESS)

    gpu = sub.add_parser("gpu", parents=[common], help="GPU snapshot(s) over NVML")
    gpu.add_argument("--json", action="store_true", help="print one JSON object")
    gpu.add_argument("--watch", type=float, metavar="SECONDS", help="repeat every SECONDS until ctrl-c")

    tel = sub.add_parser("telemetry", parents=[common], help="record real NVML samples for replay")
    tel_sub = tel.add_subparsers(dest="telemetry_command", metavar="record|track", required=True)
    trk = tel_sub.add_parser("track", help="keep the open session's telemetry track without the TUI, "
                             "until the session ends")
    trk.add_argument("--session", metavar="ID|latest", default=argparse.SUPPRESS)
    rec = tel_sub.add_parser("record", help="record samples to a JSONL file")
    rec.add_argument("--seconds", type=float, required=True)
    rec.add_argument("-o", "--out", type=Path, required=True, metavar="FILE.jsonl")
    rec.add_argument("--interval", type=float, default=1.0, metavar="SECONDS")
    rec.add_argument("--pcie", action="store_true", help="also PCIe throughput (blocks ~21 ms a read)")

    pat = sub.add_parser("pattern", parents=[common], help="the pattern library (patterns/NN-slug.md)")
    pat_sub = pat.add_subparsers(dest="pattern_command", metavar="list|show|new", required=True)
    pl = pat_sub.add_parser("list", help="every pattern: id, status, time saved, title")
    pl.add_argument("--json", action="store_true")
    ps = pat_sub.add_parser("show", help="one pattern, by id or (fuzzy) title")
    ps.add_argument("ident", metavar="ID")
    ps.add_argument("--json", action="store_true")
    pn = pat_sub.add_parser("new", help="write a new pattern file with the next id")
    pn.add_argument("title")
    pn.add_argument("--problem", required=True)
    pn.add_argument("--when", required=True, help="when to apply it")
    pn.add_argument("--solution", required=True)
    pn.add_argument("--time-saved", type=int, default=0, metavar="MIN")

    ana = sub.add_parser("analyze", parents=[common], help="ncu bottleneck verdict of a report")
    ana.add_argument("file", type=Path, metavar="FILE.csv|FILE.ncu-rep")
    ana.add_argument("--json", action="store_true", help="print one JSON object")

    dec = sub.add_parser("decide", parents=[common],
                         help="speedup classification and the next step (the profiling decision tree)")
    dec.add_argument("speedup", type=float, help="baseline time / our time, e.g. 0.42")
    dec.add_argument("kernel_ms", type=float, nargs="?", help="our kernel's time per call in ms")
    dec.add_argument("--json", action="store_true", help="print one JSON object")

    exp = sub.add_parser("export", parents=[common],
                         help="the end-of-session report: REPORT.md (+ report.svg), report.html, report.json")
    exp.add_argument("session", nargs="?", metavar="ID", help="session id or number (default: the latest)")
    exp.add_argument("--format", choices=("md", "html", "json"), default=None,
                     help="one format only (default: all three, into the session's folder)")
    exp.add_argument("-o", "--out", type=Path, metavar="FILE", help="write the one format here")

    his = sub.add_parser("history", parents=[common], help="every session side by side, and the trend")
    his.add_argument("--json", action="store_true", help="print one JSON object")
    tune = sub.add_parser("tune", parents=[common],
                          help="search the kernel's configurations within the GPU's limits ([tune])")
    tune.add_argument("--dry-run", action="store_true",
                      help="print the space: total, rejected by which limit, left to search")
    tune.add_argument("--budget", type=float, metavar="MIN", help="wall time for the search (default [tune])")
    tune.add_argument("--trials", type=int, metavar="N", help="most configurations measured per head dim")
    tune.add_argument("--resume", action="store_true", help="continue the session's stopped search")
    tune.add_argument("--gpus", metavar="LIST", help="nvidia-smi indices or UUIDs (default: all, or "
                      "CUDA_VISIBLE_DEVICES)")
    tune.add_argument("--arch", metavar="X", help="target GPU's arch, e.g. 8.9 for an L4 (default: "
                      "TORCH_CUDA_ARCH_LIST, else the GPU present)")
    tune.add_argument("--session", metavar="ID|latest", default=argparse.SUPPRESS)
    tune.add_argument("--json", action="store_true", help="print one JSON object")

    shot = sub.add_parser("screenshot", parents=[common], help="SVG screenshots of the main screens")
    shot.add_argument("--out", type=Path, default=Path("screenshots"), metavar="DIR")
    shot.add_argument("--size", default="160x48", metavar="COLSxROWS")
    shot.add_argument("--replay", type=Path, metavar="FILE.jsonl", default=argparse.SUPPRESS,
                      help="GPU panel from this recording (default: the committed loaded H200 one)")
    shot.add_argument("--session", metavar="ID|latest", default=argparse.SUPPRESS,
                      help="screenshot this session (a copy of it) instead of the demo session")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        handler = _COMMANDS[args.command or "tui"]
        return handler(args)
    except CockpitError as exc:
        print(f"cockpit: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `cockpit ... | head`: the reader left; no traceback, as cat does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail too
        return 141


def _workspace(args: argparse.Namespace) -> Any:
    from cockpit.workspace import find_workspace

    return find_workspace(getattr(args, "workspace", None))


def cmd_new(args: argparse.Namespace) -> int:
    from cockpit.config import load_config
    from cockpit.workspace import create_session

    ws = _workspace(args)
    config = load_config(ws.root)
    ref = create_session(ws, config, args.objective, args.template, time.time())
    if args.json:
        print(json.dumps({"id": ref.id, "path": str(ref.path), "journal": str(ref.journal),
                          "session_md": str(ref.log_md)}))
    else:
        print(f"{ref.id} {ref.path}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from cockpit.config import load_config
    from cockpit.session.status import compose_status
    from cockpit.session.timer import cost_so_far, timer_view
    from cockpit.workspace import load_state, resolve_session

    ws = _workspace(args)
    config = load_config(ws.root)
    ref = resolve_session(ws, args.session)
    if ref is None:
        if args.json:
            print(json.dumps({"open": False, "session": None, "line": None}))
        else:
            print("no open cockpit session")
        return 0
    state = load_state(ref)
    now = time.time()
    view = timer_view(state, now, config.phase_warn_fraction)
    line = compose_status(state, view)
    if not args.json:
        print(line)
        return 0
    current = view.current
    last = state.statuses[-1] if state.statuses else None
    print(json.dumps({
        "open": state.is_open,
        "session": state.id,
        "objective": state.objective,
        "line": line,
        "phase": current.name if current else None,
        "phase_elapsed_s": round(current.elapsed_s, 1) if current else None,
        "phase_budget_s": current.budget_s if current else None,
        "budget": current.budget if current else None,
        "paused": view.paused,
        "elapsed_s": round(view.total_elapsed_s, 1),
        "cost": round(cost_so_far(state, now), 2),
        "last_status": {"t": last.t, "text": last.text, "auto": last.auto} if last else None,
    }))
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
    from cockpit.memory import limit_malloc_arenas

    limit_malloc_arenas()  # before Textual's threads start
    app = tui_app(args)
    app.run()
    return app.return_code or 0


def tui_app(args: argparse.Namespace) -> Any:
    """The cockpit app for these arguments; `--replay FILE.jsonl` drives its GPU panel from a
    recording instead of NVML (a bad recording is a one-line error before the screen opens)."""
    from cockpit.clock import SystemClock
    from cockpit.config import load_config
    from cockpit.workspace import resolve_session

    ws = _workspace(args)
    config = load_config(ws.root)
    ref = resolve_session(ws, args.session)
    clock = SystemClock()
    telemetry = None
    if getattr(args, "replay", None) is not None:
        from cockpit.telemetry.recording import ReplaySampler

        telemetry = ReplaySampler.from_path(args.replay, clock)
        for problem in telemetry.recording.problems[:3]:
            print(f"cockpit: {problem}", file=sys.stderr)

    from cockpit.ui.app import CockpitApp

    return CockpitApp(ws, config, ref, clock=clock, telemetry=telemetry)


def cmd_gate(args: argparse.Namespace) -> int:
    from cockpit.clock import SystemClock
    from cockpit.config import load_config
    from cockpit.gates.catalog import GATES
    from cockpit.gates.gate import GateContext, Verdict
    from cockpit.gates.run import GateRun, gate_command, next_run_id
    from cockpit.session.live import LiveSession
    from cockpit.workspace import resolve_session

    ws = _workspace(args)
    config = load_config(ws.root)
    ref = resolve_session(ws, getattr(args, "session", None))
    if ref is None:
        raise CockpitError('no open session to record the gate in; start one with: cockpit new "OBJECTIVE"')
    live = LiveSession(ref)
    gate = GATES[args.name]
    ctx = GateContext(ws.root, ref.path, next_run_id(live.state, gate.name), config=config,
                      objective=live.state.objective)
    gate_config = config.gate(gate.name)

    class Printer:
        def gate_output(self, run: GateRun, lines: list[str]) -> None:
            sys.stderr.write("\n".join(lines) + "\n")

        def gate_stalled(self, run: GateRun, silent_s: float) -> None:
            print(f"cockpit: {gate.name}: no output for {silent_s:.0f} s (stuck? ctrl+c cancels)",
                  file=sys.stderr)

        def gate_finished(self, run: GateRun, verdict: Verdict) -> None:
            pass

    run = GateRun(gate, gate_command(gate, ctx, gate_config), ctx, live, SystemClock(), Printer(),
                  lambda fn: fn(), custom_command=gate_config.command is not None)
    run.start()
    try:
        while not run.wait(0.2):
            pass
    except KeyboardInterrupt:
        run.cancel()
        run.wait()
    live.close()
    verdict = run.verdict
    assert verdict is not None
    record = live.state.last_run(gate.name)
    if args.json:
        print(json.dumps({
            "gate": gate.name, "run_id": ctx.run_id, "session": ref.id, "status": verdict.status,
            "summary": verdict.summary, "duration_s": record.duration_s if record else None,
            "exit_code": record.exit_code if record else None, "log": str(ctx.log_path),
            "result": verdict.result,
        }))
    else:
        print(f"{gate.name}: {verdict.status.upper()} — {verdict.summary}\nlog: {ctx.log_path}")
    return {"pass": 0, "warn": 0, "error": 2}.get(verdict.status, 1)


def cmd_phase(args: argparse.Namespace) -> int:
    from cockpit.session.commands import phase_command

    return phase_command(_workspace(args), getattr(args, "session", None), args.move)


def cmd_end(args: argparse.Namespace) -> int:
    from cockpit.session.commands import end_command

    return end_command(_workspace(args), getattr(args, "session", None), args.reason)


def cmd_gpu(args: argparse.Namespace) -> int:
    from cockpit.telemetry.commands import gpu_command

    return gpu_command(args.json, args.watch)


def cmd_telemetry(args: argparse.Namespace) -> int:
    if args.telemetry_command == "track":
        from cockpit.telemetry.session_track import track_command

        return track_command(_workspace(args), getattr(args, "session", None))
    from cockpit.telemetry.commands import record_command

    return record_command(args.seconds, args.out, args.interval, args.pcie)


def cmd_pattern(args: argparse.Namespace) -> int:
    from cockpit.patterns import commands

    root = _workspace(args).root
    if args.pattern_command == "list":
        return commands.list_command(root, args.json)
    if args.pattern_command == "show":
        return commands.show_command(root, args.ident, args.json)
    return commands.new_command(root, args.title, args.problem, args.when, args.solution,
                                args.time_saved)


def cmd_analyze(args: argparse.Namespace) -> int:
    from cockpit.analysis.analyze_command import analyze_command

    return analyze_command(args.file, args.json)


def cmd_decide(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from cockpit.analysis.decide import SpeedupThresholds, decide
    from cockpit.config import load_config

    t = load_config(_workspace(args).root).thresholds
    try:
        d = decide(args.speedup, args.kernel_ms,
                   SpeedupThresholds(t.speedup_critical, t.speedup_high, t.speedup_medium))
    except ValueError as exc:
        raise CockpitError(f"{exc}; pass the speedup as baseline time / your time, e.g. 0.42") from exc
    if args.json:
        print(json.dumps(asdict(d)))
    else:
        print(f"{d.level}  {d.speedup:.2f}x  next: {d.next_step}  (tool: {d.tool})")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from cockpit.report.commands import export_command

    return export_command(_workspace(args), args.session, args.format, args.out, time.time())


def cmd_history(args: argparse.Namespace) -> int:
    from cockpit.report.commands import history_command

    return history_command(_workspace(args), args.json, time.time())


def cmd_tune(args: argparse.Namespace) -> int:
    from cockpit.tune.command import tune_command

    return tune_command(args)


def cmd_screenshot(args: argparse.Namespace) -> int:
    from cockpit.ui.screenshot import parse_size, take_screenshots

    size = parse_size(args.size)
    session = getattr(args, "session", None)
    for path in take_screenshots(args.out, size, _workspace(args), session):
        print(path)
    return 0


_COMMANDS = {
    "tui": cmd_tui,
    "new": cmd_new,
    "status": cmd_status,
    "gate": cmd_gate,
    "phase": cmd_phase,
    "end": cmd_end,
    "decide": cmd_decide,
    "analyze": cmd_analyze,
    "pattern": cmd_pattern,
    "gpu": cmd_gpu,
    "telemetry": cmd_telemetry,
    "screenshot": cmd_screenshot,
    "export": cmd_export,
    "history": cmd_history,
    "tune": cmd_tune,
}
