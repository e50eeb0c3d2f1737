"""The measurement boundary: "is this configuration correct, and how fast is it", answered by a child
Python (the workload probe's `serve`, cockpit/probes/workload/tune_serve.py) that holds the CUDA
context.

The child lives for many trials (torch's import and the float32 references are paid once) and
answers one JSON line per request. A configuration that kills the CUDA context (an illegal
address) kills the child: the request raises `MeasureCrashed`, the trial is recorded as failed,
and `restart()` starts a fresh child for the next one. A request that hangs past its time limit
is treated the same way.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, overload

from cockpit.errors import CockpitError
from cockpit.workload.probe_wire import (
    BaselineRequest,
    CheckReply,
    CheckRequest,
    ConfirmReply,
    ConfirmRequest,
    DeviceReply,
    Reply,
    Request,
    TimeRequest,
    TimesReply,
)

REQUEST_TIMEOUT_S = 600.0


class MeasureCrashed(Exception):
    """The measuring child died or hung; its last words are the message."""


class MeasureFailed(Exception):
    """The child could not measure this library (a launch it refused, say) and lives on."""


class ProbeMeasurer:
    """The serving child (`argv`), its chatter into `log`."""

    def __init__(self, argv: Sequence[str], log: Path, env: Mapping[str, str] | None = None,
                 timeout_s: float = REQUEST_TIMEOUT_S, cwd: Path | None = None) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.log = log
        self.env = dict(env if env is not None else os.environ)
        self.timeout_s = timeout_s
        self._child: subprocess.Popen[str] | None = None
        self._replies: queue.Queue[str | None] = queue.Queue()
        self.device: DeviceReply | None = None

    def start(self) -> DeviceReply:
        """Start the child and wait for it to say which GPU it holds."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("a", encoding="utf-8") as log:
            self._child = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=log, text=True, env=self.env, cwd=self.cwd,
                                           start_new_session=True)
        self._replies = queue.Queue()
        assert self._child.stdout is not None
        threading.Thread(target=_pump, args=(self._child.stdout, self._replies), daemon=True).start()
        device: DeviceReply = self._request({"op": "hello"})
        self.device = device
        return device

    @overload
    def request(self, request: CheckRequest) -> CheckReply: ...
    @overload
    def request(self, request: TimeRequest | BaselineRequest) -> TimesReply: ...
    @overload
    def request(self, request: ConfirmRequest) -> ConfirmReply: ...
    def request(self, request: Request) -> Reply:
        """Any request the child serves; MeasureCrashed / MeasureFailed as above."""
        reply: Reply = self._request(request)
        return reply

    def restart(self) -> None:
        self.close()
        self.start()

    def close(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()

    def _request(self, request: Request) -> Any:
        """The child's reply, as JSON: which reply a request gets is the child's word (probe_wire)."""
        if self._child is None:
            self.start()
        assert self._child is not None and self._child.stdin is not None
        try:
            self._child.stdin.write(json.dumps(request) + "\n")
            self._child.stdin.flush()
        except OSError:
            pass  # it exited: its last reply (a fatal error, say) or its end is already on the way
        return self._reply(request)

    def _reply(self, request: Request) -> Any:
        try:
            line = self._replies.get(timeout=self.timeout_s)
        except queue.Empty:
            raise self._crashed(f"no answer to {request['op']} in {self.timeout_s:.0f} s") from None
        if line is None:
            raise self._crashed("the probe exited")
        reply = json.loads(line)
        if reply.get("fatal"):
            raise self._crashed(str(reply.get("error")))
        if reply.get("error"):
            raise MeasureFailed(str(reply["error"]))
        return reply

    def _crashed(self, why: str) -> MeasureCrashed:
        child, self._child = self._child, None
        if child is not None:
            child.kill()
            child.wait()
        return MeasureCrashed(f"{why}; last lines in {self.log}: {' | '.join(_tail(self.log))}")


def _pump(stream: IO[str], replies: queue.Queue[str | None]) -> None:
    for line in stream:
        if line.startswith("{"):
            replies.put(line)
    replies.put(None)


def _tail(path: Path, n: int = 2) -> list[str]:
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return []
    return [line for line in lines if line][-n:]


def start_measuring(measurer: ProbeMeasurer) -> DeviceReply:
    """A worker's measuring child, started on its GPU (what it reports), or one line saying why not."""
    try:
        return measurer.start()
    except MeasureCrashed as exc:
        raise CockpitError(f"cannot measure on this GPU: {exc}") from exc
