"""Profile the workload kernel with Nsight Compute, then export the report as a raw CSV (every
metric) and as its details page with ncu's rule results (`--page details --print-details all`:
each rule's estimated speedup, which the profile's one fix is chosen from).

    python profile_probe.py --workspace DIR --out RESULT.json --report PATH_WITHOUT_EXT
        --kernel-regex attn_fwd --launch-skip 3 --clock-control base
        [--section SpeedOfLight ...] [--set-full] -- TARGET ARGS...

A workload that names no kernel (a GPU MODE folder: its profile's kernel regex is empty) has every
kernel of ONE call of its candidate profiled: ncu starts with profiling off (`--profile-from-start
off`) and the target opens the CUDA profiler's range (cudaProfilerStart/Stop) around its last call
only, so neither the inputs' kernels nor the warm-up calls are profiled; no kernel-name filter.

Run in a CHILD python by the Profile gate; standard library only (the target is the child of
ncu). Exit 0 profiled, 1 ncu ran but found nothing to profile or was refused, 2 it could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

WIRE = 1
"""The version of this result file: cockpit/workload/result_wire.py's WIRE (this probe runs by its
path, with nothing of the cockpit; tests/test_result_wire.py holds the two equal)."""

if TYPE_CHECKING or __package__:  # python -m, or imported (tests); mypy reads this
    from cockpit.probes.ask_workload import describe_in_child
else:  # run by path, as the gate does: this folder is sys.path[0]
    from ask_workload import describe_in_child

PERMISSION = "ERR_NVGPUCTRPERM"
CANNOT_RUN = "profile_target: cannot run: "  # the target's one line when torch or the GPU is missing
NO_KERNEL_IN_RANGE = ("it launched no CUDA kernel inside the profiler range its target opens around "
                      "one call (a CPU-only candidate, or a cockpit whose workload probe opens no range)")
PERMISSION_FIX = ("ncu may not read the GPU's performance counters for this user: run as root or "
                  "with CAP_SYS_ADMIN, or set the driver option NVreg_RestrictProfilingToAdminUsers=0 "
                  "(e.g. in /etc/modprobe.d) and reload the driver")


def say(text: str) -> None:
    print(f"cockpit-profile: {text}", flush=True)


def find_ncu() -> str | None:
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    return shutil.which("ncu") or shutil.which("ncu", path=str(Path(cuda_home) / "bin"))


def stream(argv: list[str]) -> tuple[int, list[str]]:
    """Run, passing every output line through (the gate's log) and keeping them."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", bufsize=1)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line.rstrip("\n"))
    return proc.wait(), lines


MAX_KERNELS = 64
"""Launches profiled in one call of a workload that names no kernel (each is replayed per section)."""


def ask_workload(target: list[str]) -> tuple[str, str | None, str | None]:
    """The workload's kernel regex ("" when it names none: every kernel of one call), profile
    shape and candidate, from the target's own `describe` (the target is `workload_probe.py
    profile ...`: the same command, asked to describe)."""
    mode = target.index("profile") if "profile" in target else -1
    if mode < 0:
        raise ValueError("no [profile] kernel_regex and the target is not a workload probe")
    profile = describe_in_child([*target[:mode], "describe", *target[mode + 1:]]).get("profile")
    if not profile:
        raise ValueError("the workload declares no profile=Profile(kernel=..., shape=...): add one, "
                         "or set [profile] kernel_regex")
    candidate = profile.get("candidate")
    return str(profile["kernel"]), str(profile["shape"]["name"]), str(candidate) if candidate else None


def ncu_filter(regex: str, launch_skip: int) -> list[str]:
    """Which launches ncu profiles: the `launch_skip + 1`th launch of a kernel matching `regex`;
    with no regex, every kernel inside the target's profiler range (its one ranged call)."""
    if not regex:
        return ["--profile-from-start", "off", "--launch-count", str(MAX_KERNELS)]
    return ["--kernel-name", f"regex:{regex}", "--launch-skip", str(launch_skip), "--launch-count", "1"]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    target = [a for a in args.target if a != "--"]
    started = time.monotonic()
    ncu = find_ncu()
    if ncu is None:
        say("ncu (Nsight Compute) not found on PATH or in $CUDA_HOME/bin; install it "
            "(e.g. apt-get install cuda-nsight-compute-13-0) or add its folder to PATH")
        return 2
    regex, shape_name, candidate = args.kernel_regex, None, None
    if not regex:
        try:
            regex, shape_name, candidate = ask_workload(target)
        except (ValueError, OSError, subprocess.TimeoutExpired) as exc:
            say(f"cannot tell what to profile: {exc}")
            return 2
    sections = _sections(args.set_full, args.section)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    if not regex:
        say(f"every kernel of one call of {candidate or 'the candidate'}"
            + (f" on {shape_name}" if shape_name else "") + " (the workload names no kernel)")
    profile = [ncu, *sections, *ncu_filter(regex, args.launch_skip),
               "--clock-control", args.clock_control, "-o", str(args.report), "-f", *target]
    say(" ".join(profile))
    code, lines = stream(profile)
    rep = args.report.with_suffix(".ncu-rep")
    result: dict[str, object] = {"wire": WIRE, "ncu": ncu, "command": profile,
                                 "clock_control": args.clock_control, "report": str(rep), "csv": None,
                                 "exit": code,
                                 "kernel_regex": regex, "shape": shape_name, "candidate": candidate,
                                 "every_kernel": not regex}
    status = _failed_run(lines, rep, regex, candidate, result)
    if status is None:
        status = _export_csv(ncu, rep, args.report, result)
    result["duration_s"] = round(time.monotonic() - started, 2)
    tmp = args.out.with_suffix(".tmp")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(result))
    os.replace(tmp, args.out)
    return status


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workspace", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--report", type=Path, required=True)
    p.add_argument("--kernel-regex", default="", help="default: the workload's profile kernel")
    p.add_argument("--launch-skip", type=int, default=3)
    p.add_argument("--clock-control", choices=("base", "none"), default="base")
    p.add_argument("--section", action="append", default=[])
    p.add_argument("--set-full", action="store_true")
    p.add_argument("target", nargs=argparse.REMAINDER)
    return p


def _failed_run(lines: list[str], rep: Path, regex: str, candidate: str | None,
                result: dict[str, object]) -> int | None:
    """The exit status when ncu's run gave no report to read (the target could not run, no
    permission for the counters, no kernel profiled), said and recorded; None when it gave one."""
    text = "\n".join(lines)
    cannot = next((line for line in lines if line.startswith(CANNOT_RUN)), None)
    if cannot is not None:
        say(cannot.removeprefix(CANNOT_RUN))
        result["error"] = "target"
        return 2
    if PERMISSION in text:
        say(f"error: {PERMISSION}: {PERMISSION_FIX}")
        result["error"] = "permission"
        return 1
    if "No kernels were profiled" in text or not rep.exists():
        names = [m.group(1) for m in re.finditer(r"^\s*\d+\.\s+(\S.*)$", text, re.M)]
        say(_no_kernel_line(regex, names, candidate))
        result.update(error="no match", kernels_seen=names)
        return 1
    return None


def _no_kernel_line(regex: str, names: list[str], candidate: str | None) -> str:
    """Why nothing was profiled: the regex matched none of the kernels that ran, or (with no
    regex) the profiled call launched no kernel."""
    if regex:
        return (f"no kernel matched regex:{regex}"
                + (f"; kernels that ran: {', '.join(names)}" if names else ""))
    return f"no kernel ran in the profiled call of {candidate or 'the candidate'}: " + NO_KERNEL_IN_RANGE


def _sections(set_full: bool, section: list[str]) -> list[str]:
    """ncu's section flags: the full set, or each section asked for."""
    if set_full:
        return ["--set", "full"]
    return [a for s in section for a in ("--section", s)]


def _export_csv(ncu: str, rep: Path, report: Path, result: dict[str, object]) -> int:
    """The report's raw page as CSV next to it and, where this ncu has one, its details page with
    the rule results; the exit status (1 when ncu cannot import its own report)."""
    csv_path = report.with_suffix(".csv")
    out = subprocess.run([ncu, "--import", str(rep), "--csv", "--page", "raw",
                          "--print-units", "base"], capture_output=True, text=True)
    if out.returncode != 0:
        say(f"error: ncu --import failed: {out.stderr.strip()[-300:]}")
        return 1
    csv_path.write_text(out.stdout, encoding="utf-8")
    result["csv"] = str(csv_path)
    say(f"report {rep}, csv {csv_path}")
    details = subprocess.run([ncu, "--import", str(rep), "--csv", "--page", "details",
                              "--print-details", "all"], capture_output=True, text=True)
    if details.returncode == 0 and details.stdout.strip():
        details_path = report.with_suffix(".details.csv")
        details_path.write_text(details.stdout, encoding="utf-8")
        result["details_csv"] = str(details_path)
    else:  # an older ncu without rule columns: the decision tree decides alone
        say(f"no details page with rule results ({details.stderr.strip()[-200:] or 'empty'})")
    return 0

if __name__ == "__main__":
    sys.exit(main())
