"""The command line's grammar: every `cockpit <verb>`, its flags and help, and the workspace they name."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from cockpit import __version__
from cockpit.errors import CockpitError
from cockpit.gate_lines import GATE_NAMES
from cockpit.session.workspace import Workspace, find_workspace


def _new(new: argparse.ArgumentParser) -> None:
    new.add_argument("objective", help='what this session is for, e.g. "vectorize K loads"')
    new.add_argument("--template", default=None, metavar="NAME",
                     help="session template: optimize (default), baseline, or one from cockpit.toml")
    new.add_argument("--json", action="store_true", help="print one JSON object")
    new.add_argument("--force", action="store_true", help="start it even though a session is open")


def _status(status: argparse.ArgumentParser) -> None:
    takes_session(status)
    status.add_argument("--json", action="store_true", help="print one JSON object")


def _gate(gate: argparse.ArgumentParser) -> None:
    gate.add_argument("name", choices=GATE_NAMES, help="the gate to run")
    takes_session(gate)
    gate.add_argument("--json", action="store_true",
                      help="print one JSON object on stdout (the live log still goes to stderr)")


def _phase(phase: argparse.ArgumentParser) -> None:
    phase.add_argument("move", metavar="next|skip|pause|PHASE")
    takes_session(phase)


def _end(end: argparse.ArgumentParser) -> None:
    end.add_argument("--reason", default="ended by the engineer", help="said in the journal and the report")
    takes_session(end)


def _decision(dec: argparse.ArgumentParser) -> None:
    answer = dec.add_mutually_exclusive_group()
    answer.add_argument("--yes", action="store_true", help="carry it out: KEEP commits the kernel's files, "
                        "REVERT restores them")
    answer.add_argument("--no", action="store_true", help="leave the kernel's files as they are")
    takes_session(dec)


def _gpu(gpu: argparse.ArgumentParser) -> None:
    gpu.add_argument("--json", action="store_true", help="print one JSON object")
    gpu.add_argument("--watch", type=float, metavar="SECONDS", help="repeat every SECONDS until ctrl-c")


def _telemetry(tel: argparse.ArgumentParser) -> None:
    tel_sub = tel.add_subparsers(dest="telemetry_command", metavar="record|track", required=True)
    trk = tel_sub.add_parser("track", help="keep the open session's telemetry track without the TUI, "
                             "until the session ends")
    takes_session(trk)
    rec = tel_sub.add_parser("record", help="record samples to a JSONL file")
    rec.add_argument("--seconds", type=float, required=True)
    rec.add_argument("-o", "--out", type=Path, required=True, metavar="FILE.jsonl")
    rec.add_argument("--interval", type=float, default=1.0, metavar="SECONDS")
    rec.add_argument("--pcie", action="store_true", help="also PCIe throughput (blocks ~21 ms a read)")


def _pattern(pat: argparse.ArgumentParser) -> None:
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
    takes_session(pn, "the session whose evidence it is (default: the latest open one, if any)")


def _analyze(ana: argparse.ArgumentParser) -> None:
    ana.add_argument("file", type=Path, metavar="FILE.csv|FILE.ncu-rep")
    ana.add_argument("--json", action="store_true", help="print one JSON object")
    ana.add_argument("--details", type=Path, metavar="FILE.details.csv",
                     help="ncu's details page with its rule results (`ncu --import R --csv --page details "
                          "--print-details all`); default: FILE.details.csv beside FILE when it exists")


def _decide(dec: argparse.ArgumentParser) -> None:
    dec.add_argument("speedup", type=float, help="baseline time / our time, e.g. 0.42")
    dec.add_argument("kernel_ms", type=float, nargs="?", help="our kernel's time per call in ms")
    dec.add_argument("--json", action="store_true", help="print one JSON object")


def _export(exp: argparse.ArgumentParser) -> None:
    exp.add_argument("named", nargs="?", metavar="ID", help="session id or number (default: the latest)")
    takes_session(exp, "the same as ID")
    exp.add_argument("--format", choices=("md", "html", "json", "pr"), default=None,
                     help="one format only (default: md, html and json, into the session's folder); "
                          "pr: PR.md, at most 40 lines for a pull request")
    exp.add_argument("-o", "--out", type=Path, metavar="FILE", help="write the one format here")


def _history(his: argparse.ArgumentParser) -> None:
    his.add_argument("--json", action="store_true", help="print one JSON object")
    his.add_argument("--wide", action="store_true",
                     help="every column whole, whatever the terminal's width (default: the table fits "
                          "the terminal, COLUMNS, or 100 columns where the output is no terminal)")


def _tune(tune: argparse.ArgumentParser) -> None:
    tune.add_argument("--dry-run", action="store_true",
                      help="print the space: total, rejected by which limit, left to search")
    tune.add_argument("--budget", type=float, metavar="MIN", help="wall time for the search (default [tune])")
    tune.add_argument("--trials", type=int, metavar="N", help="most configurations measured per group")
    tune.add_argument("--group", action="append", metavar="KEY=VALUE", default=None,
                      help="search only the groups with these keep_per values, e.g. D=128 (repeatable)")
    tune.add_argument("--resume", action="store_true", help="continue the session's stopped search")
    tune.add_argument("--gpus", metavar="LIST", help="nvidia-smi indices or UUIDs (default: all, or "
                      "CUDA_VISIBLE_DEVICES)")
    tune.add_argument("--arch", metavar="X", help="target GPU's arch, e.g. 8.9 for an L4 (default: "
                      "TORCH_CUDA_ARCH_LIST, else the GPU present)")
    takes_session(tune)
    tune.add_argument("--json", action="store_true", help="print one JSON object")


def _workload(wl: argparse.ArgumentParser) -> None:
    wl_sub = wl.add_subparsers(dest="workload_command", metavar="show", required=True)
    show = wl_sub.add_parser("show", help="build, candidates, references, grids, FLOP/byte model, knobs "
                             "(no GPU needed)")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.add_argument("--fresh", action="store_true", help="ask the workload again, not the cache")


def _trust(tr: argparse.ArgumentParser) -> None:
    tr.add_argument("trust_command", nargs="?", choices=("show", "allow", "revoke"), default="show",
                    help="show (default): the list and whether it is trusted; allow: trust it as it is now; "
                    "revoke: forget the answer")
    tr.add_argument("--json", action="store_true", help="print one JSON object")


def _init(init: argparse.ArgumentParser) -> None:
    init.add_argument("dir", nargs="?", type=Path, default=Path("."), metavar="DIR")
    init.add_argument("--workload", default="cuda",
                      metavar="cuda|triton|callable|gpumode=DIR|kernelbench=FILE",
                      help="the kind of kernel (default cuda: a torch C++/CUDA extension); a GPU MODE "
                      "problem folder or a KernelBench problem file is read as it is")
    init.add_argument("--name", metavar="NAME", help="the kernel's name: workloads/NAME.py and its extension "
                      "(default: the folder's name)")
    init.add_argument("--force", action="store_true", help="overwrite cockpit.toml if it exists")


def _screenshot(shot: argparse.ArgumentParser) -> None:
    shot.add_argument("--out", type=Path, default=Path("screenshots"), metavar="DIR")
    shot.add_argument("--size", default="160x48", metavar="COLSxROWS")
    shot.add_argument("--replay", type=Path, metavar="FILE.jsonl", default=argparse.SUPPRESS,
                      help="GPU panel from this recording (default: the committed loaded H200 one with "
                      "--demo, none for a session)")
    shown = shot.add_mutually_exclusive_group()
    shown.add_argument("--session", metavar="ID|latest", default=argparse.SUPPRESS,
                       help="the session to show (default: the workspace's latest, open or ended); "
                       "it is never written to")
    shot.set_defaults(takes_session=True)
    shown.add_argument("--demo", action="store_true",
                       help="the demo sessions (recorded on an H200, and scripted) instead: what "
                       "screenshots/ shows")


VERBS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "new": ("create a session; print its id and folder", _new),
    "status": ("one status line of the latest open session (for tmux status-right)", _status),
    "gate": ("run one gate headless and record it in the open session", _gate),
    "phase": ("move the phase timer without the TUI: next, skip, pause, or a phase name", _phase),
    "end": ("end the session and write its report (as E does)", _end),
    "decision": ("the last bench's keep/revert verdict: what it would do, or --yes / --no "
                 "(as the TUI's dialog asks)", _decision),
    "gpu": ("GPU snapshot(s) over NVML", _gpu),
    "telemetry": ("record real NVML samples for replay", _telemetry),
    "pattern": ("the pattern library (patterns/NN-slug.md)", _pattern),
    "analyze": ("ncu bottleneck verdict of a report", _analyze),
    "decide": ("speedup classification and the next step (the profiling decision tree)", _decide),
    "export": ("the end-of-session report: REPORT.md (+ report.svg), report.html, report.json", _export),
    "history": ("every session side by side, and the trend", _history),
    "tune": ("search the kernel's configurations within the GPU's limits ([tune])", _tune),
    "workload": ("what the workspace's workload declares", _workload),
    "trust": ("what this workspace's cockpit.toml would run "
             "(interpreter, commands, env, workload code), and your answer", _trust),
    "init": ("a workspace in your kernel's repository: cockpit.toml and a workload module to fill in",
             _init),
    "screenshot": ("SVG screenshots of the main screens", _screenshot),
}
"""Each verb's help line and the function that adds its flags (`cockpit <verb>`; no verb: the TUI)."""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Every verb, its flags and its help; given the command line, only the verb it names is built
    (`verb_asked`; none for the TUI): `cockpit status` runs from tmux's status line every few
    seconds, and the TUI keeps no grammar it will not read."""
    only = verb_asked(argv) if argv is not None else None
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
    p.add_argument("--session", dest="global_session", metavar="ID|latest", default=None,
                   help="the session a verb works on, as its own --session (the TUI, status, phase, end, "
                   "gate, tune, export, screenshot, telemetry track, pattern new); default: the latest "
                   "open one (export and screenshot: the latest); refused by the other verbs")
    p.add_argument("--replay", type=Path, metavar="FILE.jsonl",
                   help="drive the GPU panel from a telemetry recording instead of NVML")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_flags) in VERBS.items():
        if only is None or name == only:
            add_flags(sub.add_parser(name, parents=[common], help=help_text))
    return p


_GLOBAL_WITH_VALUE = ("--workspace", "--session", "--replay")


TUI = ""
"""What `verb_asked` says of a command line of global options only: the TUI, no verb's grammar."""


def verb_asked(argv: Sequence[str]) -> str | None:
    """The verb the command line names, where that is plain without argparse: the first word that
    is neither an option nor the value of a global one (`TUI` where there is none). None where it
    is not plain (an option argparse must read, such as --help or an abbreviation): then every
    verb is built, and argparse says what is wrong as it always does."""
    words = iter(argv)
    for word in words:
        if word in _GLOBAL_WITH_VALUE:
            next(words, None)
        elif not (word.startswith("--") and word.partition("=")[0] in _GLOBAL_WITH_VALUE):
            return word if word in VERBS else None
    return TUI


def takes_session(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """A verb that works on one session: its own `--session`, and the global one is its too."""
    parser.add_argument("--session", metavar="ID|latest", default=argparse.SUPPRESS, help=help)
    parser.set_defaults(takes_session=True)


def verb_of(args: argparse.Namespace) -> str:
    """`status`, `pattern list`: the verb as typed, for a one-line refusal."""
    words = [args.command or "", getattr(args, f"{args.command}_command", None) or ""]
    return " ".join(w for w in words if w)


def session_named(args: argparse.Namespace) -> str | None:
    """The session the command line names (None: the verb's default, the latest): `--session`
    before the verb or after it, or the verb's own ID. Two that differ (even where they would
    come to the same session: "latest" and its id), or a session named to a verb that works on
    none, are refused in one line."""
    flags = (getattr(args, "global_session", None), getattr(args, "session", None))
    given = [("--session " + v, v) for v in flags if v is not None]
    if getattr(args, "named", None) is not None:
        given.append((args.named, args.named))
    if given and args.command is not None and not getattr(args, "takes_session", False):
        raise CockpitError(f"{verb_of(args)} works on no session: drop {given[0][0]}")
    if len({v for _, v in given}) > 1:
        raise CockpitError(f"{verb_of(args)}: {given[0][0]} and {given[-1][0]} each name a session: "
                           "name it once")
    return given[0][1] if given else None


def workspace_of(args: argparse.Namespace) -> Workspace:
    """`--workspace DIR`, else the nearest folder up holding cockpit.toml, else the current one."""
    return find_workspace(getattr(args, "workspace", None))
