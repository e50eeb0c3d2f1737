"""Run the workload's candidates under compute-sanitizer, torch's caching allocator off.

    python sanitize_probe.py --workspace DIR --out RESULT.json --log SANITIZER.log --tool memcheck
        --print-limit 20 --launch-count 0 --timeout-s 900 [--torch-kernels] -- TARGET ARGS...

TARGET is `workload_probe.py sanitize ...`: each candidate called once on the workload's smallest
test shapes. The caching allocator hands a kernel slices of large pooled segments, so a write past
the end of a tensor lands inside the pool and memcheck sees nothing (0 errors on an H100, where
`PYTORCH_NO_CUDA_MEMORY_CACHING=1` showed 3): it is off for the target. The sanitizer's report goes
to its own file (read by the gate, in the cockpit's process); the target's lines pass through,
and a heartbeat says the run is alive through a call that takes minutes under the tool.

Run in a CHILD python by the sanitizer gate; standard library only. Exit 0 the sanitizer ran (its
report says what it found), 1 it was stopped at `--timeout-s`, 2 it could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

WIRE = 1
"""The version of this result file: cockpit/workload/result_wire.py's WIRE (this probe runs by its
path, with nothing of the cockpit; tests/test_result_wire.py holds the two equal)."""

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
CACHING_OFF = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
ERROR_EXIT = 86
"""compute-sanitizer's exit when it found errors (`--error-exitcode`): no exit of the target's own."""
TORCH_KERNELS = "kns=at6native"
"""torch's own kernels (at::native, in their mangled names), left unchecked unless asked for."""
CALLING = "cockpit-sanitize: calling "
"""The target's line before each call: `calling ours on N=1024 (2/3)`; names the call in progress."""
HEARTBEAT_S = 30.0
LOG_ECHO_LINES = 400
"""The sanitizer's report is copied into the gate's log up to this many lines (the file keeps all)."""


def say(text: str) -> None:
    print(f"cockpit-sanitize: {text}", flush=True)


def find_sanitizer(env: Mapping[str, str]) -> str | None:
    """compute-sanitizer on PATH, else in the CUDA toolkit's bin."""
    return shutil.which("compute-sanitizer", path=env.get("PATH")) or shutil.which(
        "compute-sanitizer", path=str(cuda_bin(env)))


def cuda_bin(env: Mapping[str, str]) -> Path:
    return Path(env.get("CUDA_HOME") or env.get("CUDA_PATH") or "/usr/local/cuda") / "bin"


def missing_line(env: Mapping[str, str]) -> str:
    """What to do when there is no compute-sanitizer."""
    return (f"compute-sanitizer not found on PATH or in {cuda_bin(env)}: it comes with the CUDA toolkit "
            "($CUDA_HOME/bin/compute-sanitizer) or the cuda-sanitizer apt package (e.g. apt-get install "
            "cuda-sanitizer-12-8, matching your CUDA); install it or put its folder on PATH")


def sanitizer_argv(sanitizer: str, tool: str, log: Path, print_limit: int, launch_count: int,
                   torch_kernels: bool, target: list[str]) -> list[str]:
    """compute-sanitizer's command line around the target."""
    argv = [sanitizer, "--tool", tool, "--log-file", str(log), "--print-limit", str(print_limit),
            "--error-exitcode", str(ERROR_EXIT)]
    if launch_count > 0:
        argv += ["--launch-count", str(launch_count)]
    if not torch_kernels:
        argv += ["--kernel-name-exclude", TORCH_KERNELS]
    return [*argv, *target]


def target_env(base: Mapping[str, str]) -> dict[str, str]:
    """The target's environment: the caller's, torch's caching allocator off."""
    return {**base, **CACHING_OFF}


def run(argv: list[str], env: Mapping[str, str], timeout_s: float, tool: str,
        heartbeat_s: float = HEARTBEAT_S) -> tuple[int | None, str | None, str]:
    """Run in a process group of its own, passing its lines through; (exit code or None when
    stopped at `timeout_s`, the call in progress, the target's last line)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", bufsize=1, env=dict(env), start_new_session=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    started = last_said = time.monotonic()
    calling: str | None = None
    last = ""
    while True:
        now = time.monotonic()
        if now - started > timeout_s:
            _stop(proc)
            return None, calling, last
        try:
            line = lines.get(timeout=min(1.0, heartbeat_s))
        except queue.Empty:
            if time.monotonic() - last_said >= heartbeat_s:
                say(f"still under {tool}, {time.monotonic() - started:.0f} s in"
                    + (f" (calling {calling})" if calling else ""))
                last_said = time.monotonic()
            continue
        if line is None:
            return proc.wait(), calling, last
        print(line, flush=True)
        last_said = time.monotonic()
        if line.startswith(CALLING):
            calling = line[len(CALLING):]
        elif line.strip():
            last = line.strip()


def _stop(proc: subprocess.Popen[str]) -> None:
    """The sanitizer and the target it started, the whole group: TERM, then KILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def echo_log(log: Path) -> None:
    """The sanitizer's report into the gate's log (its first lines; the file keeps all)."""
    try:
        with log.open(encoding="utf-8", errors="replace") as f:
            shown = [line.rstrip("\n") for _, line in zip(range(LOG_ECHO_LINES + 1), f, strict=False)]
    except OSError:
        say(f"compute-sanitizer wrote no report ({log})")
        return
    say(f"the sanitizer's report ({log}):")
    for line in shown[:LOG_ECHO_LINES]:
        print(line)
    if len(shown) > LOG_ECHO_LINES:
        say(f"… the rest is in {log}")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workspace", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--log", type=Path, required=True)
    p.add_argument("--tool", choices=TOOLS, default="memcheck")
    p.add_argument("--print-limit", type=int, default=20)
    p.add_argument("--launch-count", type=int, default=0)
    p.add_argument("--timeout-s", type=float, default=900.0)
    p.add_argument("--torch-kernels", action="store_true", help="check torch's own kernels too")
    p.add_argument("target", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    target = [a for a in args.target if a != "--"]
    started = time.monotonic()
    result: dict[str, object] = {"tool": args.tool, "log": str(args.log), "timeout_s": args.timeout_s,
                                 "torch_kernels": args.torch_kernels, "env": CACHING_OFF}
    sanitizer = find_sanitizer(os.environ)
    if sanitizer is None:
        result.update(error="missing", said=missing_line(os.environ))
        say(missing_line(os.environ))
        write(args.out, result)
        return 2
    command = sanitizer_argv(sanitizer, args.tool, args.log, args.print_limit, args.launch_count,
                             args.torch_kernels, target)
    args.log.parent.mkdir(parents=True, exist_ok=True)
    args.log.unlink(missing_ok=True)  # a report from an earlier run is never read as this one's
    say(f"PYTORCH_NO_CUDA_MEMORY_CACHING=1 {' '.join(command)}")
    try:
        code, calling, last = run(command, target_env(os.environ), args.timeout_s, args.tool)
    except OSError as exc:
        said = f"compute-sanitizer ({sanitizer}) could not start: {exc.strerror or exc}"
        say(said)
        result.update(error="start", said=said, sanitizer=sanitizer)
        write(args.out, result)
        return 2
    echo_log(args.log)
    result.update(wire=WIRE, sanitizer=sanitizer, command=command, exit=code, timed_out=code is None,
                  calling=calling, last_line=last, duration_s=round(time.monotonic() - started, 2))
    if code is None:
        say(f"stopped after {args.timeout_s:g} s" + (f" while calling {calling}" if calling else ""))
    write(args.out, result)
    return 1 if code is None else 0


def write(out: Path, result: Mapping[str, object]) -> None:
    tmp = out.with_suffix(".tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(result))
    os.replace(tmp, out)


if __name__ == "__main__":
    sys.exit(main())
