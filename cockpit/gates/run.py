"""One run of one gate: journals `gate_started`, streams the child's output, journals
`gate_finished` with the verdict. Used the same way by the TUI and by `cockpit gate`.

The run reports on its own thread (the child's runner): the listener hands each report to the
owner's thread (the UI posts a Textual message; the headless CLI has no other thread and wraps its
listener in `RecordedHere`), which records it in the run (`follow`, `stalled`, `end`: the journal is
written there) before acting on it. The verdict is judged on the runner thread, not the owner's.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from cockpit.clock import Clock
from cockpit.config import GateConfig
from cockpit.errors import CockpitError
from cockpit.gates.device import GateDevice, command_device, needs_nvml, nvml_gpus, pin_command
from cockpit.gates.gate import Gate, GateContext, Verdict, exit_code_verdict, result_json
from cockpit.gates.log_follow import GateOutput
from cockpit.gates.mark import ENV as MARK_ENV
from cockpit.gates.mark import new_token, seal
from cockpit.gates.process import GateCommand, GateProcess, ProcessOutcome, process_start
from cockpit.gates.structured import ENV, judge_replaced
from cockpit.session import events as ev
from cockpit.session.inside import confine, confine_session_path
from cockpit.session.live import LiveSession
from cockpit.session.paths import stored_path
from cockpit.session.results import gate_finished_event
from cockpit.session.state import SessionState
from cockpit.session.status import Activity
from cockpit.telemetry.sample import GpuStatic

TRACKED_LINES = 200
"""Progress is read from the latest lines of each look at the log, never from every line."""


class RunListener(Protocol):
    """Told about a run on the run's own thread (its runner's; the caller's for a child that
    never started or a run abandoned). The owner records each report in the run on its own thread
    (`run.follow`, `run.stalled`, `run.end`) before it acts on it."""

    def gate_output(self, run: GateRun, output: GateOutput) -> None:
        """New lines (a few times a second; in a flood only the latest, `output.skipped` says
        how many were left out: the log has them all)."""
        ...

    def gate_stalled(self, run: GateRun, silent_s: float) -> None: ...

    def gate_finished(self, run: GateRun, verdict: Verdict) -> None: ...


class RecordedHere:
    """For an owner with no thread of its own (the headless CLI, a test): each report is recorded
    in the run at once, on the run's thread, then told to `listener`."""

    def __init__(self, listener: RunListener) -> None:
        self.listener = listener

    def gate_output(self, run: GateRun, output: GateOutput) -> None:
        run.follow(output)
        self.listener.gate_output(run, output)

    def gate_stalled(self, run: GateRun, silent_s: float) -> None:
        run.stalled(silent_s)
        self.listener.gate_stalled(run, silent_s)

    def gate_finished(self, run: GateRun, verdict: Verdict) -> None:
        if run.end(verdict):
            self.listener.gate_finished(run, verdict)


def next_run_id(state: SessionState, gate: str, session_dir: Path | None = None) -> str:
    """`NNN-gate`, after the runs this cockpit has folded. With `session_dir`, the run's log file
    is created here exclusively, so two cockpits on one session (two SSH logins, the TUI and a
    headless `cockpit gate`) never share a run id or a log: the second takes the next number."""
    number = state.gate_run_count + 1
    if session_dir is None:
        return f"{number:03d}-{gate}"
    logs = confine(session_dir / "logs", session_dir.parent.parent)
    try:
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CockpitError(f"{logs}: cannot create ({exc.strerror})") from exc
    while True:
        run_id = f"{number:03d}-{gate}"
        try:
            os.close(os.open(logs / f"{run_id}.log", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return run_id
        except FileExistsError:
            number += 1
        except OSError as exc:
            raise CockpitError(f"{logs}: cannot create the run's log ({exc.strerror})") from exc


def python_env(ctx: GateContext) -> dict[str, str]:
    """What the env probe says of the interpreters: which one runs the gates and why, and the
    cockpit's own."""
    if not ctx.python_how:
        return {}
    return {"COCKPIT_GATES_PYTHON_HOW": ctx.python_how, "COCKPIT_OWN_PYTHON": sys.executable}


def gate_command(gate: Gate, ctx: GateContext, config: GateConfig) -> GateCommand:
    """The gate's own command, or the one cockpit.toml puts in its place, with its limits."""
    return GateCommand(
        argv=config.command or gate.argv(ctx),
        cwd=ctx.workspace,
        # a replaced command may hand back a structured result in this file (gates/structured.py)
        env={ENV: str(ctx.result_path), "COCKPIT_WORKSPACE": str(ctx.workspace), **config.env}
        if config.command else {**python_env(ctx), **config.env},
        timeout_s=config.timeout_s or gate.timeout_s,
        stall_after_s=config.stall_after_s,
        shell=config.shell,
        log_max_bytes=int(ctx.config.gates.log_max_mb * 1024 * 1024),
    )


def _spawnable(command: GateCommand, gate: str) -> GateCommand:
    """`command` if a process can take it: a NUL byte in an argument (from cockpit.toml, which
    refuses it when read, or a workload's path) is one line here, never Popen's ValueError."""
    held = [n for n, arg in enumerate(command.argv, 1) if "\0" in arg]
    if held:
        raise CockpitError(f"{gate}: argument {held[0]} of its command holds a NUL byte (\\u0000), which no "
                           "process can take; remove it from cockpit.toml")
    return command


@dataclass
class _Progress:
    lines: int = 0
    fraction: float | None = None
    eta_s: float | None = None
    eta_at: float = 0.0
    step: str = ""
    last_line: str = ""
    stalled_for: float | None = None


class GateRun:
    def __init__(self, gate: Gate, command: GateCommand, ctx: GateContext, session: LiveSession,
                 clock: Clock, listener: RunListener, custom_command: bool,
                 gpus: Callable[[], Sequence[GpuStatic] | None] = nvml_gpus) -> None:
        self.gate = gate
        self.command = command
        self.ctx = ctx
        self.session = session
        self.clock = clock
        self.listener = listener
        self.started_t = clock.now()
        self.progress = _Progress()
        self.verdict: Verdict | None = None
        """The run's end as recorded (journaled, or kept for a full disk), on the owner's thread."""
        self._told = False  # the owner acted on the end (`end` answered True once)
        self._recorded = threading.Event()
        self._reported = threading.Event()  # the runner thread told the listener of the end
        self._custom = custom_command
        self._tail: deque[str] = deque(maxlen=TRACKED_LINES)
        previous = session.state.last_run(gate.name, finished=True)
        self._expected_s = previous.duration_s if previous and previous.status in (
            "pass", "warn", "fail") else None
        self._tracker = gate.tracker(ctx)
        self._gpus = gpus
        self._process = GateProcess(command, ctx.log_path, self)
        self.unjournaled = False
        """The run's end is not in the journal yet (a full disk refused it)."""
        self.journal_error = ""
        self._duration_s = 0.0  # the child's, once the runner reported its end
        self._exit_code: int | None = None

    @property
    def _log(self) -> str:
        """The log's path as the journal keeps it: relative to the workspace."""
        return stored_path(self.ctx.log_path, self.ctx.workspace)

    @property
    def run_id(self) -> str:
        return self.ctx.run_id

    @property
    def running(self) -> bool:
        return self.verdict is None

    @property
    def device(self) -> GateDevice:
        """The GPU the child runs on (by UUID once `[gates] device` is applied at start)."""
        return command_device(self.command, os.environ, self.gate.name)

    def start(self) -> None:
        """Spawn the child and journal the start; a child that cannot start is a finished
        run with status `error` (the reason is its summary)."""
        try:
            # `[gates] device`: the child sees that GPU alone, named by UUID.
            gpus = self._gpus() if needs_nvml(self.ctx.config) else ()
            self.command = pin_command(self.command, self.ctx.config, gpus)
            # the mark the OS shows a later cockpit before it signals this child (gates/mark.py)
            token = new_token()
            self.command = replace(self.command, env={**self.command.env, MARK_ENV: token})
            confine_session_path(self.ctx.log_path)
            if self._custom:  # where a replaced command may write its structured result
                confine_session_path(self.ctx.result_path)
                try:
                    self.ctx.result_path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    folder = self.ctx.result_path.parent
                    raise CockpitError(f"{folder}: cannot create ({exc.strerror})") from exc
            self._process = GateProcess(_spawnable(self.command, self.gate.name), self.ctx.log_path, self)
            pid = self._process.spawn()
        except CockpitError as exc:
            self._never_started(str(exc))
            return
        started = ev.gate_started(self.started_t, self.run_id, self.gate.name, self.command.argv, self._log,
                                  pid, os.getpid(), process_start(pid), seal(token))
        try:
            self.session.append([started])
        except CockpitError:
            self._process.terminate_now()  # a run the journal cannot record must not go on
            self.session.withdraw(started)  # nor be journaled later, once space returns: it never ran
            raise
        self._process.stream()  # only now can callbacks (and gate_finished) follow

    def _never_started(self, why: str) -> None:
        """A child that could not start is a finished run with status `error`, `why` its summary.
        When the journal cannot take even its start (a full disk: often why the log could not be
        created), nothing is left to be written once space returns (a start with no end would be
        a run that never ran, shown as interrupted) and the journal's refusal is raised."""
        started = ev.gate_started(self.started_t, self.run_id, self.gate.name, self.command.argv,
                                  self._log, 0)
        try:
            self.session.append([started])
        except CockpitError as exc:
            self.session.withdraw(started)
            raise CockpitError(f"{exc} ({self.gate.name} did not start either: {why})") from exc
        self._end_here(Verdict("error", why), 0.0, None)

    def cancel(self) -> None:
        self._process.cancel()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the run's end is recorded (a child that never started is too), or once its
        thread stopped without telling one (a fault in it: the caller says so, never waits for
        ever). Call it off the owner's thread: the owner records the end."""
        if self._recorded.is_set():
            return True
        start = time.monotonic()
        if not self._process.wait(timeout):
            return False
        left = None if timeout is None else max(0.0, timeout - (time.monotonic() - start))
        return not self._reported.is_set() or self._recorded.wait(left)

    def abandon(self, reason: str) -> None:
        """The cockpit is going away without waiting: stop the child and journal why."""
        if self.running:
            self._process.terminate_now()
            self._end_here(Verdict("interrupted", reason), self.clock.now() - self.started_t, None)

    def activity(self) -> Activity:
        """What the status line says about this run: progress and time left."""
        now = self.clock.now()
        elapsed = now - self.started_t
        p = self.progress
        fraction, eta = p.fraction, None
        if p.eta_s is not None:
            eta = max(0.0, p.eta_s - (now - p.eta_at))
        elif self._expected_s:
            eta = max(0.0, self._expected_s - elapsed)
            if fraction is None:
                fraction = min(0.99, elapsed / self._expected_s)
        text = f"{self.gate.name} gate" + (f" {p.step}" if p.step else "")
        if self.progress.stalled_for is not None:
            text += " (silent)"
        return Activity(text, eta, fraction)

    # OutputSink: called on the runner thread -----------------------------------------------

    def on_output(self, output: GateOutput) -> None:
        self._tail.extend(output.lines[-TRACKED_LINES:])  # here: the verdict is judged on this thread
        self.listener.gate_output(self, output)

    def on_stall(self, silent_s: float) -> None:
        self.listener.gate_stalled(self, silent_s)

    def on_exit(self, outcome: ProcessOutcome) -> None:
        if not self.running:
            return  # abandoned: already journaled
        verdict = self._judged(outcome)
        self._duration_s, self._exit_code = outcome.duration_s, outcome.exit_code
        self._reported.set()
        self.listener.gate_finished(self, verdict)

    def _judged(self, outcome: ProcessOutcome) -> Verdict:
        if outcome.ending == "cancelled":
            return Verdict("cancelled", f"cancelled after {outcome.duration_s:.1f} s")
        if outcome.ending == "timeout":
            return Verdict("timeout", f"no result within {self.command.timeout_s:g} s; "
                           "raise timeout_s in cockpit.toml if it needs longer")
        try:
            if self._custom:
                tail = list(self._tail)
                return (judge_replaced(self.gate.name, self.ctx, outcome.exit_code or 0, tail)
                        or exit_code_verdict(outcome.exit_code or 0, tail))
            return self.gate.verdict(self.ctx, outcome.exit_code or 0, list(self._tail))
        except CockpitError as exc:
            return Verdict("error", str(exc))
        except OSError as exc:  # a full disk or a read-only folder while writing its results
            return Verdict("error", f"the verdict could not be written ({exc.strerror or exc}): "
                                    "free disk space or fix permissions and run the gate again")

    # Owner thread ---------------------------------------------------------------------------

    def follow(self, output: GateOutput) -> None:
        """New output: the progress the status line shows."""
        lines = output.lines[-TRACKED_LINES:]
        p = self.progress
        p.lines = output.total
        now = self.clock.now()
        progress = self._tracker.feed(lines, now - self.started_t)
        if progress is not None:
            p.fraction, p.step = progress.fraction, progress.step
            p.eta_s, p.eta_at = progress.eta_s, now
        p.last_line = next((line for line in reversed(lines) if line.strip()), p.last_line)
        p.stalled_for = None

    def stalled(self, silent_s: float) -> None:
        """No output for `silent_s`: journaled (CockpitError when the journal refuses it)."""
        self.progress.stalled_for = silent_s
        self.session.append([ev.gate_stalled(self.clock.now(), self.run_id, self.gate.name,
                                             silent_s)])

    def end(self, verdict: Verdict) -> bool:
        """The run's end, told by the listener: recorded once (the journal written, or kept for a
        full disk). True the first time for the end the run has; False for a verdict judged after
        the run was abandoned, or an end already acted on."""
        if self.verdict is None:
            self._record(verdict, self._duration_s, self._exit_code)
        if self._told or self.verdict is not verdict:
            return False
        self._told = True
        return True

    def _end_here(self, verdict: Verdict, duration_s: float, exit_code: int | None) -> None:
        """An end on the owner's thread (a child that never started, an abandoned run): recorded
        at once, then told to the listener like the runner's."""
        self._record(verdict, duration_s, exit_code)
        self.listener.gate_finished(self, verdict)

    def _record(self, verdict: Verdict, duration_s: float, exit_code: int | None) -> None:
        self.verdict = verdict
        try:  # the one place a result becomes JSON: the journal's record of the run
            self.session.append([gate_finished_event(
                self.ctx.session_dir, self.ctx.workspace, self.clock.now(), self.run_id, self.gate.name,
                verdict.status, verdict.summary, duration_s, exit_code, self._log, result_json(verdict))])
        except CockpitError as exc:  # the session keeps the event and writes it first next time
            self.unjournaled, self.journal_error = True, str(exc)
        finally:
            self._recorded.set()

    def retry_journal(self) -> bool:
        """Journal the finished run if the journal refused it (a full disk): the UI calls this
        every tick and the CLI for a while, so the run ends as recorded when space returns. True
        once the journal has it."""
        if not self.unjournaled:
            return True
        try:
            self.session.append([])  # writes what it kept
        except CockpitError as exc:
            self.journal_error = str(exc)
            return False
        self.unjournaled = False
        return True
