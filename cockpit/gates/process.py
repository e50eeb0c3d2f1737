"""One child process of a gate: its own process group, output streamed to a log file and to a
sink in time-batched chunks, stall warnings, an overall timeout, and a cancel that takes the
grandchildren down too.

The sink's methods are called from the runner's thread; a UI marshals them to its own thread.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from cockpit.errors import CockpitError
from cockpit.gates.output import LineSplitter

Ending = Literal["exited", "cancelled", "timeout"]
_READ_SIZE = 1 << 16


@dataclass(frozen=True)
class GateCommand:
    """What to run for a gate. `shell=True` runs `argv[0]` through /bin/sh (config opt-in)."""

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 3600.0
    stall_after_s: float = 60.0
    shell: bool = False
    log_max_bytes: int = 64 * 1024 * 1024
    """`[gates] log_max_mb`: past it the log keeps its head and its tail, and says what it cut."""


@dataclass(frozen=True)
class ProcessOutcome:
    ending: Ending
    exit_code: int | None
    duration_s: float
    lines: int


class OutputSink(Protocol):
    def on_output(self, lines: list[str]) -> None: ...

    def on_stall(self, silent_s: float) -> None: ...

    def on_exit(self, outcome: ProcessOutcome) -> None: ...


class GateProcess:
    """`start()` (or `spawn()` then `stream()`) runs it; `cancel()` works from any thread;
    `wait()` blocks until the sink has received `on_exit`."""

    def __init__(self, command: GateCommand, log_path: Path, sink: OutputSink,
                 batch_s: float = 0.05, grace_s: float = 3.0) -> None:
        self.command = command
        self.log_path = log_path
        self.pid: int | None = None
        self._sink = sink
        self._batch_s = batch_s
        self._grace_s = grace_s
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def spawn(self) -> int:
        """Open the log and start the child; returns its pid. Raises CockpitError if either
        fails. Nothing reaches the sink until `stream()`."""
        self._log = _open_log(self.log_path, self.command)
        self._started = time.monotonic()
        try:
            self._proc = _spawn(self.command)
        except OSError as exc:
            message = (f"cannot start {self.command.argv[0]!r}: {exc.strerror or exc}; "
                       "check the gate's command in cockpit.toml")
            self._log.write(f"# {message}\n")
            self._log.close()
            raise CockpitError(message) from exc
        self.pid = self._proc.pid
        return self._proc.pid

    def stream(self) -> None:
        """Start delivering output, stalls and the exit to the sink (from the runner thread)."""
        self._thread = threading.Thread(target=self._run, args=(self._proc, self._log, self._started),
                                        name=f"gate:{self.log_path.stem}", daemon=True)
        self._thread.start()

    def start(self) -> int:
        pid = self.spawn()
        self.stream()
        return pid

    def cancel(self) -> None:
        """Ask the runner thread to stop the child: SIGTERM, then SIGKILL after the grace."""
        self._cancel.set()

    def terminate_now(self) -> None:
        """SIGTERM the child's group at once, for when nobody will stay to finish the run."""
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGTERM)

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    # The runner thread ----------------------------------------------------------------------

    def _run(self, proc: subprocess.Popen[bytes], log: _Log, started: float) -> None:
        try:
            ending, lines = self._pump(proc, log, started)
            exit_code = proc.wait()
            duration = time.monotonic() - started
            log.write(f"# exit {exit_code} ({ending}) after {duration:.1f} s\n")
            log.close()
            self._sink.on_exit(ProcessOutcome(ending, exit_code, duration, lines))
        finally:
            self._done.set()

    def _pump(self, proc: subprocess.Popen[bytes], log: _Log, started: float) -> tuple[Ending, int]:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        splitter = LineSplitter()
        batch: list[str] = []
        total = 0
        last_flush = last_output = time.monotonic()
        stall_warned_at = 0.0
        deadline = started + self.command.timeout_s
        ending: Ending = "exited"
        kill_at: float | None = None
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if ending == "exited" and self._cancel.is_set():
                ending = "cancelled"
            elif ending == "exited" and now >= deadline:
                ending = "timeout"
            if ending != "exited" and kill_at is None:
                _signal_group(proc, signal.SIGTERM)
                kill_at = now + self._grace_s
            if kill_at is not None and now >= kill_at:
                _signal_group(proc, signal.SIGKILL)
                kill_at = float("inf")
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > 1.0:
                # The child is gone but something it started still holds the pipe open.
                _signal_group(proc, signal.SIGKILL)
                break
            wait = self._batch_s if batch else 0.25
            if ending == "exited":
                wait = min(wait, max(0.0, deadline - now))
            ready, _, _ = select.select([fd], [], [], wait)
            if ready:
                data = os.read(fd, _READ_SIZE)
                if not data:
                    break
                new = splitter.feed(data)
                if new:
                    last_output = time.monotonic()
                    stall_warned_at = 0.0
                    log.write_lines(new)
                    batch.extend(new)
                    total += len(new)
            now = time.monotonic()
            if batch and now - last_flush >= self._batch_s:
                self._sink.on_output(batch)
                batch = []
                last_flush = now
            silent = now - last_output
            if (silent >= self.command.stall_after_s and not stall_warned_at
                    and ending == "exited"):
                stall_warned_at = now
                self._sink.on_stall(silent)
        rest = splitter.finish()
        if rest:
            log.write_lines(rest)
            batch.extend(rest)
            total += len(rest)
        if batch:
            self._sink.on_output(batch)
        return ending, total

def _spawn(command: GateCommand) -> subprocess.Popen[bytes]:
    env = {**os.environ, **command.env}
    argv: list[str] = ["/bin/sh", "-c", command.argv[0]] if command.shell else list(command.argv)
    return subprocess.Popen(
        argv, cwd=command.cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, bufsize=0,
    )


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)  # the child leads its own group: grandchildren get it too


class _Log:
    """The gate's log file, at most `max_bytes`: the first half as it came, then only the latest
    output is kept (in memory, up to the other half) and written after a line that says how much
    was cut, when the run ends. A runaway print fills neither the disk nor the journal's reader."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self._f = path.open("w", encoding="utf-8", errors="replace")
        self._head_left = max(1, max_bytes // 2)
        self._tail_limit = max(1, max_bytes - max_bytes // 2)
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self._cut = 0
        self._max_mb = max_bytes / (1024 * 1024)

    def write(self, text: str) -> None:
        if self._head_left >= len(text) and not self._tail:
            self._f.write(text)
            self._head_left -= len(text)
            return
        self._head_left = 0
        self._tail.append(text)
        self._tail_size += len(text)
        while self._tail_size > self._tail_limit and len(self._tail) > 1:
            dropped = self._tail.popleft()
            self._tail_size -= len(dropped)
            self._cut += len(dropped)

    def write_lines(self, lines: list[str]) -> None:
        self.write("\n".join(lines) + "\n")
        if not self._tail:
            self._f.flush()

    def close(self) -> None:
        if self._tail:
            if self._cut:
                self._f.write(f"# [cockpit: {self._cut / (1024 * 1024):.1f} MB of output cut here: the log "
                              f"keeps its first and last {self._max_mb / 2:g} MB ([gates] log_max_mb = "
                              f"{self._max_mb:g})]\n")
            self._f.writelines(self._tail)
            self._tail.clear()
        self._f.close()


def _open_log(path: Path, command: GateCommand) -> _Log:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        log = _Log(path, command.log_max_bytes)
    except OSError as exc:
        raise CockpitError(f"{path}: cannot write the gate log ({exc.strerror})") from exc
    shown = command.argv[0] if command.shell else shlex.join(command.argv)
    log.write(f"# {shown.replace(chr(10), ' ')}\n# cwd {command.cwd}\n")
    if "CUDA_VISIBLE_DEVICES" in command.env:  # which GPU it ran on, when cockpit.toml chose it
        log.write(f"# CUDA_VISIBLE_DEVICES={command.env['CUDA_VISIBLE_DEVICES']}\n")
    return log


def process_start(pid: int | None) -> int | None:
    """When process `pid` started, in clock ticks since boot (Linux's /proc/PID/stat, field 22);
    None where that cannot be read (no such process, a zombie, not Linux)."""
    if not pid:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()  # the command name may hold spaces
        return None if fields[0] == "Z" else int(fields[19])  # a zombie has stopped already
    except (OSError, ValueError, IndexError):
        return None


def pid_alive(pid: int | None) -> bool:
    """Whether a process with this pid exists (e.g. one a crashed cockpit left behind)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
