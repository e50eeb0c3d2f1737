"""One child process of a gate: its own process group, its output written by itself into the
log file (stdout and stderr both), stall warnings, an overall timeout, and a cancel that takes
the grandchildren down too.

The runner thread looks at the log a few times a second (`log_follow.py`) and hands the sink
what is new, and in a flood only its latest lines: the cockpit's CPU does not grow with how fast
the child prints. Silence is the log not growing. `[gates] log_max_mb` is `log_cap.py`.

The sink's methods are called from the runner's thread; a UI marshals them to its own thread.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import select
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from cockpit.errors import CockpitError
from cockpit.gates.log_cap import LogCap
from cockpit.gates.log_follow import GateOutput, LogFollower
from cockpit.gates.pids import pid_alive as pid_alive
from cockpit.gates.pids import process_start as process_start
from cockpit.session.inside import confine_session_path

Ending = Literal["exited", "cancelled", "timeout"]
POLL_S = 0.2
"""How often the log is looked at: the rate at which the sink hears of new output."""
HELD_AFTER_EXIT_S = 1.0
"""How long what the child started may keep writing its log once the child has exited."""


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
    """Lines the child wrote (an estimate past a flood's counting budget: `log_follow.py`)."""


class OutputSink(Protocol):
    def on_output(self, output: GateOutput) -> None: ...

    def on_stall(self, silent_s: float) -> None: ...

    def on_exit(self, outcome: ProcessOutcome) -> None: ...


class GateProcess:
    """`start()` (or `spawn()` then `stream()`) runs it; `cancel()` works from any thread;
    `wait()` blocks until the sink has received `on_exit`."""

    def __init__(self, command: GateCommand, log_path: Path, sink: OutputSink,
                 poll_s: float = POLL_S, grace_s: float = 3.0) -> None:
        self.command = command
        self.log_path = log_path
        self.pid: int | None = None
        self._sink = sink
        self._poll_s = poll_s
        self._grace_s = grace_s
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def spawn(self) -> int:
        """Open the log and start the child on it; returns its pid. Raises CockpitError if either
        fails. Nothing reaches the sink until `stream()`."""
        header = _log_header(self.command)
        confine_session_path(self.log_path)
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC,
                         0o644)
        except OSError as exc:
            raise CockpitError(f"{self.log_path}: cannot write the gate log ({exc.strerror})") from exc
        try:
            try:
                os.write(fd, header)
            except OSError as exc:
                raise CockpitError(f"{self.log_path}: cannot write the gate log ({exc.strerror})") from exc
            self._started = time.monotonic()
            self._proc = _spawn(self.command, fd)
        except OSError as exc:
            message = (f"cannot start {self.command.argv[0]!r}: {exc.strerror or exc}; "
                       "check the gate's command in cockpit.toml")
            with contextlib.suppress(OSError):
                os.write(fd, f"# {message}\n".encode())
            raise CockpitError(message) from exc
        finally:
            os.close(fd)  # the child holds its own: once it and its children are gone, nobody writes
        self._header_size = len(header)
        self.pid = self._proc.pid
        return self._proc.pid

    def stream(self) -> None:
        """Start delivering output, stalls and the exit to the sink (from the runner thread)."""
        self._thread = threading.Thread(target=self._run, args=(self._proc, self._started),
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

    def _run(self, proc: subprocess.Popen[bytes], started: float) -> None:
        try:
            follower = LogFollower(self.log_path, self._header_size)
            try:
                ending = self._follow(proc, follower, started)
            finally:
                follower.close()
            exit_code = proc.wait()
            duration = time.monotonic() - started
            with contextlib.suppress(OSError):  # a full disk: the run still ends, and is journaled
                LogCap(self.log_path, self.command.log_max_bytes).close_up()
            with contextlib.suppress(OSError), self.log_path.open("a", encoding="utf-8") as log:
                log.write(f"# exit {exit_code} ({ending}) after {duration:.1f} s\n")
            self._sink.on_exit(ProcessOutcome(ending, exit_code, duration, follower.total))
        finally:
            self._done.set()

    def _follow(self, proc: subprocess.Popen[bytes], follower: LogFollower, started: float) -> Ending:
        cap = LogCap(self.log_path, self.command.log_max_bytes)
        exit_fd = _exit_fd(proc.pid)
        size = follower.offset
        last_output = time.monotonic()
        stall_warned = False
        deadline = started + self.command.timeout_s
        ending: Ending = "exited"
        kill_at: float | None = None
        exited_at: float | None = None
        try:
            while True:
                now = time.monotonic()
                ending = self._ending(ending, now, deadline)
                kill_at = self._escalate(proc, ending, kill_at, now)
                if exited_at is None and proc.poll() is not None:
                    exited_at = now
                self._pass_output(follower)
                if follower.offset > size:
                    size, last_output, stall_warned = follower.offset, now, False
                cap.trim(size, follower.offset)
                if exited_at is not None and _log_released(follower, proc, now - exited_at):
                    break
                stall_warned = self._warn_stall(now - last_output, stall_warned, ending)
                self._pause(exit_fd, exited_at is not None, ending, deadline - now)
        finally:
            if exit_fd is not None:
                os.close(exit_fd)
        self._pass_output(follower, final=True)
        return ending

    def _ending(self, ending: Ending, now: float, deadline: float) -> Ending:
        """How the run is ending: once cancelled or timed out it stays so, whatever happens next."""
        if ending != "exited":
            return ending
        if self._cancel.is_set():
            return "cancelled"
        return "timeout" if now >= deadline else ending

    def _escalate(self, proc: subprocess.Popen[bytes], ending: Ending, kill_at: float | None,
                  now: float) -> float | None:
        """A run being stopped gets SIGTERM, then SIGKILL after the grace period; the new kill time
        (infinity once killed)."""
        if ending != "exited" and kill_at is None:
            _signal_group(proc, signal.SIGTERM)
            kill_at = now + self._grace_s
        if kill_at is not None and now >= kill_at:
            _signal_group(proc, signal.SIGKILL)
            kill_at = float("inf")
        return kill_at

    def _warn_stall(self, silent: float, warned: bool, ending: Ending) -> bool:
        """A running command silent for `stall_after_s` is said to stall, once per silence;
        whether it has been warned of this silence."""
        if silent >= self.command.stall_after_s and not warned and ending == "exited":
            self._sink.on_stall(silent)
            return True
        return warned

    def _pass_output(self, follower: LogFollower, final: bool = False) -> None:
        """Whatever the log gained since the last look, passed on to the sink."""
        output = follower.poll(final=final)
        if output is not None:
            self._sink.on_output(output)

    def _pause(self, exit_fd: int | None, exited: bool, ending: Ending, to_deadline: float) -> None:
        """Wait before looking again: briefly once the child exited (what it started may still be
        writing), else until it exits or the next poll (never past the deadline while running)."""
        if exited:
            time.sleep(0.05)
        else:
            _wait_exit(exit_fd, min(self._poll_s, max(0.0, to_deadline))
                       if ending == "exited" else self._poll_s)


def _log_released(follower: LogFollower, proc: subprocess.Popen[bytes], since_exit: float) -> bool:
    """Whether the log is done with, the child having exited: nothing holds it open any more, or
    something the child started still writes it long after (that is killed)."""
    if not _log_held(follower.fd, proc.pid):
        return True
    if since_exit > HELD_AFTER_EXIT_S:
        # The child is gone but something it started still writes its log.
        _signal_group(proc, signal.SIGKILL)
        return True
    return False


def _log_header(command: GateCommand) -> bytes:
    shown = command.argv[0] if command.shell else shlex.join(command.argv)
    header = f"# {shown.replace(chr(10), ' ')}\n# cwd {command.cwd}\n"
    if "CUDA_VISIBLE_DEVICES" in command.env:  # which GPU it ran on, when cockpit.toml chose it
        header += f"# CUDA_VISIBLE_DEVICES={command.env['CUDA_VISIBLE_DEVICES']}\n"
    return header.encode("utf-8", errors="replace")


def _spawn(command: GateCommand, log_fd: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, **command.env}
    argv: list[str] = ["/bin/sh", "-c", command.argv[0]] if command.shell else list(command.argv)
    return subprocess.Popen(
        argv, cwd=command.cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=log_fd, stderr=log_fd, start_new_session=True, bufsize=0,
    )


def _exit_fd(pid: int) -> int | None:
    """A pidfd that turns readable when `pid` exits (Linux 5.3+); None where there is none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _wait_exit(exit_fd: int | None, wait_s: float) -> None:
    """Until the next look at the log, or the child's exit if sooner (its pidfd turns readable):
    a short gate ends as soon as it is done."""
    if exit_fd is not None:
        select.select([exit_fd], [], [], wait_s)
    else:
        time.sleep(wait_s)


def _log_held(fd: int, group: int) -> bool:
    """Whether anyone still has the log open for writing. A read lease is refused (EAGAIN) while
    a writer has the file open; where leases are not to be had, whether the child's process group
    still has members."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except (AttributeError, OSError) as exc:
        if getattr(exc, "errno", None) == errno.EAGAIN:
            return True
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    return False


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)  # the child leads its own group: grandchildren get it too
