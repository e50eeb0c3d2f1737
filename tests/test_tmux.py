"""The cockpit in a real terminal: tmux runs it on a pty, the test reads the screen and types.

Each test gets a private tmux server (`tmux -L <unique name>`, with its own one-line config
instead of ~/.tmux.conf), so it never touches a user's tmux; the server is killed and its
socket removed in the fixture's teardown. The screen is polled
with `capture-pane` (no blind sleeps). tmux is required: CI installs it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .waiting import DEADLINE_S

COLS, ROWS = 140, 40
SESSION = "cockpit"
OBJECTIVE = "vectorize K loads"
STATUS_TEXT = "reading ptxas output"


def _require_tmux() -> str:
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.fail(
            "tmux is not on PATH; these tests run the cockpit in a real terminal and need it: "
            "apt-get install tmux",
            pytrace=False,
        )
    return tmux


def _cockpit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cockpit", *args], cwd=cwd, capture_output=True, text=True,
        timeout=60, check=True,
    )


def _read_journal(path: Path) -> list[dict[str, Any]]:
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line:
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line being written right now
    return events


def _dump(events: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(e) for e in events)


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:  # a zombie nobody reaps (no init in a container) has exited all the same
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


class Tmux:
    """A private tmux server running one cockpit."""

    def __init__(self, tmux: str, workdir: Path) -> None:
        self.tmux = tmux
        self.socket = f"cockpit-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.env["TERM"] = "xterm-256color"
        # Keep the pane (and the server) after the cockpit exits, for the last screen.
        self.conf = workdir / "tmux.conf"
        self.conf.write_text("set -g remain-on-exit on\n")
        self.last_screen = ""
        self.socket_path = ""

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [self.tmux, "-L", self.socket, "-f", str(self.conf), *args],
            env=self.env, capture_output=True, text=True, timeout=10,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"tmux {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}"
            )
        return result

    def start(self, command: str) -> None:
        self.run("new-session", "-d", "-s", SESSION, "-x", str(COLS), "-y", str(ROWS), command)
        self.socket_path = self.run("display-message", "-p", "#{socket_path}").stdout.strip()

    def pane(self, fmt: str) -> str:
        return self.run("display-message", "-p", "-t", SESSION, fmt).stdout.strip()

    def capture(self) -> str:
        self.last_screen = self.run("capture-pane", "-p", "-t", SESSION).stdout
        return self.last_screen

    def send(self, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", SESSION, *(["-l"] if literal else []), *keys)

    def wait_until(
        self, ok: Callable[[str], bool], what: str, timeout: float = DEADLINE_S
    ) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture()
            if ok(screen):
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {timeout:g}s waiting for {what}; last screen:\n"
                            f"{screen}", pytrace=False)
            time.sleep(0.1)

    def wait_for(self, text: str, timeout: float = DEADLINE_S) -> str:
        return self.wait_until(lambda screen: text in screen, repr(text), timeout)

    def wait_header(self, ok: Callable[[str], bool], what: str, timeout: float = DEADLINE_S) -> str:
        screen = self.wait_until(lambda s: ok(_header(s)), f"header {what}", timeout)
        return _header(screen)

    def wait_exited(self, status_file: Path, timeout: float = DEADLINE_S) -> int:
        """Wait until the cockpit has exited (its shell wrote `status_file`); return its status.

        (tmux's own #{pane_dead_status} is not used: tmux 3.3 sometimes never fills it in.)
        """
        deadline = time.monotonic() + timeout
        while True:
            text = status_file.read_text().strip() if status_file.exists() else ""
            if text.isdigit():
                return int(text)
            if time.monotonic() > deadline:
                pytest.fail(f"the cockpit did not exit within {timeout:g}s; last screen:\n"
                            f"{self.capture()}", pytrace=False)
            time.sleep(0.1)

    def kill_server(self) -> None:
        self.run("kill-server", check=False)

    def remove_socket(self) -> None:
        if self.socket_path:  # tmux leaves its socket file behind after kill-server
            Path(self.socket_path).unlink(missing_ok=True)


def _header(screen: str) -> str:
    lines = screen.splitlines()
    return lines[0] if lines else ""


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, str, Path]:
    """A workspace with one new session: (workspace, session id, journal path)."""
    ws = tmp_path / "work space"  # a space, to prove the command line is quoted
    ws.mkdir()
    out = _cockpit("--workspace", str(ws), "new", OBJECTIVE, "--json", cwd=tmp_path)
    info = json.loads(out.stdout)
    return ws, info["id"], Path(info["journal"])


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    server = Tmux(_require_tmux(), tmp_path)
    try:
        yield server
    finally:
        server.kill_server()
        server.remove_socket()


def _cockpit_command(ws: Path, status_file: Path | None = None) -> str:
    """The pane's shell command; with `status_file`, the shell writes the exit status there."""
    argv = [sys.executable, "-m", "cockpit", "--workspace", str(ws)]
    command = " ".join(shlex.quote(a) for a in argv)
    if status_file is None:
        return "exec " + command  # the pane's pid is the cockpit's
    return f"{command}; echo $? > {shlex.quote(str(status_file))}"


def test_keys_drive_the_session_in_a_real_terminal(
    tmux: Tmux, workspace: tuple[Path, str, Path]
) -> None:
    ws, session_id, journal = workspace
    status_file = ws.parent / "exit-status"
    tmux.start(_cockpit_command(ws, status_file))

    header = tmux.wait_header(lambda h: session_id in h and "ENVIRONMENT" in h,
                              f"with {session_id!r} and 'ENVIRONMENT'")
    assert OBJECTIVE in header

    tmux.send("n")
    tmux.wait_for("start the next phase?")  # a phase change asks first
    tmux.send("y")
    tmux.wait_header(lambda h: "BASELINE" in h, "'BASELINE'")

    tmux.send("p")
    tmux.wait_header(lambda h: "PAUSED" in h, "'PAUSED'")
    tmux.send("p")
    tmux.wait_header(lambda h: "BASELINE" in h and "PAUSED" not in h, "resumed (no 'PAUSED')")

    tmux.send("s")
    tmux.wait_for("Post a status")  # typing before the dialog is up would hit the main keys
    tmux.send(STATUS_TEXT, literal=True)
    tmux.wait_for(STATUS_TEXT)
    tmux.send("Enter")
    # The status history column is narrow: the line may wrap after "now:".
    tmux.wait_until(lambda s: "now:" in s and STATUS_TEXT in s and "Post a status" not in s,
                    f"the posted status 'now: {STATUS_TEXT}' with the dialog closed")

    tmux.send("q")
    tmux.wait_for("Quit the cockpit?")
    tmux.send("y")
    status = tmux.wait_exited(status_file)
    assert status == 0, f"cockpit exited with {status}; last screen:\n{tmux.capture()}"

    events = _read_journal(journal)
    dump = _dump(events)
    types = [e["type"] for e in events]
    assert any(e["type"] == "phase_started" and e.get("phase") == "Baseline" for e in events), (
        f"no phase_started for Baseline in:\n{dump}"
    )
    assert "timer_paused" in types, f"no timer_paused in:\n{dump}"
    assert "timer_resumed" in types, f"no timer_resumed in:\n{dump}"
    assert types.index("timer_paused") < types.index("timer_resumed"), dump
    manual = [e for e in events
              if e["type"] == "status" and STATUS_TEXT in e.get("text", "") and e.get("auto") is False]
    assert manual, f"no manual status (auto false) containing {STATUS_TEXT!r} in:\n{dump}"
    assert events[-1]["type"] == "app_closed", f"last event is not app_closed:\n{dump}"
    assert events[-1].get("reason") == "quit", f"clean quit should close with reason quit:\n{dump}"
    opened = [e for e in events if e["type"] == "app_opened"]
    assert opened and opened[-1]["pid"] == events[-1]["pid"], dump


def test_sighup_closes_the_session_in_the_journal(
    tmux: Tmux, workspace: tuple[Path, str, Path]
) -> None:
    ws, session_id, journal = workspace
    tmux.start(_cockpit_command(ws))
    tmux.wait_header(lambda h: session_id in h and "ENVIRONMENT" in h,
                     f"with {session_id!r} and 'ENVIRONMENT'")
    pid = int(tmux.pane("#{pane_pid}"))

    tmux.kill_server()  # hangs up the pane's pty: the cockpit gets SIGHUP

    deadline = time.monotonic() + DEADLINE_S
    events = _read_journal(journal)
    while not (events and events[-1]["type"] == "app_closed"):
        if time.monotonic() > deadline:
            pytest.fail(f"no app_closed at the end of the journal {DEADLINE_S:g}s after SIGHUP "
                        f"(pid {pid} {'exited' if _process_gone(pid) else 'still running'}):\n"
                        f"{_dump(events)}", pytrace=False)
        time.sleep(0.1)
        events = _read_journal(journal)

    last = events[-1]
    assert last.get("reason") == "SIGHUP", f"app_closed should say SIGHUP:\n{_dump(events)}"
    assert last.get("pid") == pid, f"app_closed from pid {last.get('pid')}, pane pid {pid}"
    assert sum(e["type"] == "app_closed" for e in events) == 1, _dump(events)

    # An SSH drop must not leave a cockpit behind (it would still count as attached).
    deadline = time.monotonic() + DEADLINE_S
    while not _process_gone(pid):
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # leave no orphan behind in CI
            pytest.fail(f"cockpit pid {pid} still running {DEADLINE_S:g}s after SIGHUP (killed it now); "
                        f"journal:\n{_dump(_read_journal(journal))}", pytrace=False)
        time.sleep(0.1)


def test_a_burst_of_keys_is_text_even_its_last_letter(
    tmux: Tmux, workspace: tuple[Path, str, Path]
) -> None:
    """`tmux send-keys -l` writes a sentence to the pty at once, as a paste without bracketed paste
    or a laggy SSH link does: every letter is text, the last one too ("...timer" ends on r, run the
    gate; "...stages" on s, post a status). Outside the editor that text lands nowhere and a hint
    says where text goes; after Tab it lands in SESSION.md."""
    ws, session_id, journal = workspace
    status_file = ws.parent / "exit-status"
    tmux.start(_cockpit_command(ws, status_file))
    tmux.wait_header(lambda h: session_id in h and "ENVIRONMENT" in h, f"with {session_id!r}")
    left = "╭─ SESSION.md"  # the editor's border once it no longer has focus (┏━ while it has)
    tmux.wait_for(left)
    tmux.send("try stages", literal=True)
    screen = tmux.wait_until(lambda s: "Typing goes into SESSION.md" in s, "the hint for typing outside")
    assert "Post a status" not in screen and "try stages" not in screen
    tmux.send("Tab")
    tmux.wait_for("┏━ SESSION.md")
    tmux.send(" check the timer", literal=True)
    screen = tmux.wait_until(lambda s: "check the timer" in s and "┏━ SESSION.md" in s, "the burst in the editor")
    assert "Post a status" not in screen
    tmux.send("Escape")
    tmux.wait_for(left)
    tmux.send("q")
    tmux.wait_for("Quit the cockpit?")
    tmux.send("y")
    assert tmux.wait_exited(status_file) == 0
    types = [e["type"] for e in _read_journal(journal)]
    assert "gate_started" not in types and "status" not in types, types
    log = (journal.parent / "SESSION.md").read_text()
    assert "try stages" not in log and "check the timer" in log, log
