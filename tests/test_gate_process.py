"""The gate runner with real child processes: what the engineer sees of a long, noisy,
hung or hostile child, and that cancelling really stops it."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from cockpit.gates.log_follow import GateOutput
from cockpit.gates.output import MAX_LINE_CHARS, LineSplitter, terminal_line
from cockpit.gates.process import GateCommand, GateProcess, ProcessOutcome, pid_alive
from cockpit.ui.widgets.gate_panel import tail_of_file

from .waiting import wait_until


class Recorder:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.outputs: list[GateOutput] = []
        self.stalls: list[float] = []
        self.stalled_after: list[int] = []
        """How many lines had come at each stall warning."""
        self.outcome: ProcessOutcome | None = None
        self.exited = threading.Event()

    @property
    def lines(self) -> list[str]:
        return [line for batch in self.batches for line in batch]

    def on_output(self, output: GateOutput) -> None:
        self.outputs.append(output)
        self.batches.append(output.lines)

    def on_stall(self, silent_s: float) -> None:
        self.stalls.append(silent_s)
        self.stalled_after.append(len(self.lines))

    def on_exit(self, outcome: ProcessOutcome) -> None:
        self.outcome = outcome
        self.exited.set()


def python(code: str, **kwargs) -> GateCommand:  # type: ignore[no-untyped-def]
    return GateCommand((sys.executable, "-c", code), Path.cwd(), **kwargs)


def run(command: GateCommand, tmp_path: Path, **kwargs) -> tuple[Recorder, GateProcess]:  # type: ignore[no-untyped-def]
    rec = Recorder()
    proc = GateProcess(command, tmp_path / "run.log", rec, **kwargs)
    proc.start()
    return rec, proc


def test_output_streams_in_time_batches_and_lands_in_the_log(tmp_path: Path) -> None:
    # each line waits for the test to have seen the one before: a runner that kept the output
    # until the end would never show line 0, however fast or loaded the box
    code = ("import os, time\nfor i in range(5):\n    print(i, flush=True)\n"
            f"    while i < 4 and not os.path.exists(os.path.join({str(tmp_path)!r}, f'seen{{i}}')): "
            "time.sleep(0.01)")
    rec, proc = run(python(code), tmp_path)
    try:
        for i in range(4):
            wait_until(lambda i=i: str(i) in rec.lines, f"line {i} streamed while the child runs")
            (tmp_path / f"seen{i}").touch()
    except AssertionError:
        proc.cancel()  # no child left waiting
        raise
    assert proc.wait(20)
    assert rec.lines == ["0", "1", "2", "3", "4"]
    assert len(rec.batches) == 5  # arrived as it was printed, not all at the end
    assert rec.outcome == ProcessOutcome("exited", 0, rec.outcome.duration_s, 5)
    log = (tmp_path / "run.log").read_text().splitlines()
    assert log[2:7] == ["0", "1", "2", "3", "4"]
    assert log[-1].startswith("# exit 0 (exited)")


def test_a_long_line_arrives_in_64_kib_pieces(tmp_path: Path) -> None:
    rec, proc = run(python("import sys; sys.stdout.write('x' * 200_000 + '\\nend\\n')"), tmp_path)
    assert proc.wait(20)
    pieces = rec.lines[:-1]
    assert all(len(p) <= MAX_LINE_CHARS for p in pieces)
    assert sum(len(p) for p in pieces) == 200_000
    assert rec.lines[-1] == "end"


def test_a_one_mebibyte_line_stays_whole_in_the_log_and_the_pane_gets_what_follows(tmp_path: Path) -> None:
    rec, proc = run(python("import sys; sys.stdout.write('x' * (1 << 20) + '\\nend\\n')"), tmp_path)
    assert proc.wait(20)
    assert rec.lines[-1] == "end" and all(len(line) <= MAX_LINE_CHARS for line in rec.lines)
    assert rec.outputs[-1].total == len(rec.lines) + sum(o.skipped for o in rec.outputs)
    assert ("x" * (1 << 20) + "\n") in (tmp_path / "run.log").read_text()


def test_binary_garbage_is_shown_as_replacement_text(tmp_path: Path) -> None:
    rec, proc = run(python("import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe\\x00\\x01 bytes\\n')"),
                    tmp_path)
    assert proc.wait(20)
    assert rec.lines == ["ok \ufffd\ufffd bytes"]


def test_escape_sequences_never_reach_the_screen_but_the_log_keeps_the_bytes(tmp_path: Path) -> None:
    hostile = ("\\x1b]0;pwned title\\x07\\x1b]52;c;Y2xpcGJvYXJk\\x07\\x1b[?1049h\\x1b[2J\\x1b[H"
               "\\x1b[31mred\\x1b[0m [bold]not markup[/bold]\\x07\\x1bP+q\\x1b\\\\ done")
    rec, proc = run(python(f"print('{hostile}')"), tmp_path)
    assert proc.wait(20)
    assert rec.lines == ["red [bold]not markup[/bold] done"]
    # The child wrote its log itself (`less -R` shows its colours); a log read for a person, as
    # the pane does for a finished run, is cleaned the same way.
    assert "\x1b[31mred" in (tmp_path / "run.log").read_text()
    assert "red [bold]not markup[/bold] done" in tail_of_file(tmp_path / "run.log", 10)
    assert not any("\x1b" in line or "\x07" in line for line in tail_of_file(tmp_path / "run.log", 10))


def test_carriage_return_progress_keeps_the_last_state() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"[1/3] a\r\n 10%\r 50%\r 90%\rdone\n") == ["[1/3] a", "done"]
    assert splitter.feed(b"40%\r") == []
    assert splitter.feed(b"80%") == []
    assert splitter.finish() == ["80%"]
    assert terminal_line("tab\tkept\x08") == "tab\tkept"


def test_cancel_kills_the_child_and_its_grandchildren(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    code = (f"import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
            f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
            f"print('started', flush=True)\ntime.sleep(300)")
    rec, proc = run(python(code), tmp_path, grace_s=1.0)
    deadline = time.monotonic() + 20
    while not rec.lines and time.monotonic() < deadline:
        rec.exited.wait(0.05)
    grandchild = int(pidfile.read_text())
    assert pid_alive(grandchild)
    proc.cancel()
    assert proc.wait(10)
    assert rec.outcome is not None and rec.outcome.ending == "cancelled"
    deadline = time.monotonic() + 5
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)  # reaping by init is asynchronous
    assert not pid_alive(grandchild)


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    code = ("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "print('stubborn', flush=True)\ntime.sleep(300)")
    rec, proc = run(python(code), tmp_path, grace_s=0.5)
    while not rec.lines:
        rec.exited.wait(0.05)
    proc.cancel()
    assert proc.wait(10)
    assert rec.outcome is not None
    assert (rec.outcome.ending, rec.outcome.exit_code) == ("cancelled", -9)


def test_an_overall_timeout_stops_the_run(tmp_path: Path) -> None:
    rec, proc = run(python("import time; time.sleep(300)", timeout_s=0.5), tmp_path)
    assert proc.wait(10)
    assert rec.outcome is not None and rec.outcome.ending == "timeout"


def test_silence_raises_one_stall_warning_and_does_not_kill(tmp_path: Path) -> None:
    go = tmp_path / "go"  # silent after 'a' until the test has seen the warning
    code = (f"import os, time\nprint('a', flush=True)\nwhile not os.path.exists({str(go)!r}): "
            "time.sleep(0.01)\nprint('b', flush=True)")
    rec, proc = run(python(code, stall_after_s=0.4), tmp_path)
    try:
        wait_until(lambda: 1 in rec.stalled_after, "a stall warning after the child's 'a'")
        time.sleep(1.2)  # the silence goes on: still the one warning (a wait for none to come)
    finally:
        go.touch()
    assert proc.wait(20)
    # a busy box may take over 0.4 s to start the child's Python: a warning before 'a' then too
    assert rec.stalled_after in ([1], [0, 1]) and all(s >= 0.4 for s in rec.stalls)
    assert rec.lines == ["a", "b"]
    assert rec.outcome is not None and rec.outcome.exit_code == 0


@pytest.mark.parametrize("code", [0, 1, 3])
def test_exit_codes_are_reported(tmp_path: Path, code: int) -> None:
    rec, proc = run(python(f"raise SystemExit({code})"), tmp_path)
    assert proc.wait(20)
    assert rec.outcome is not None and rec.outcome.exit_code == code


def test_env_overrides_and_cwd_reach_the_child(tmp_path: Path) -> None:
    command = GateCommand((sys.executable, "-c", "import os; print(os.getcwd(), os.environ['MAX_JOBS'])"),
                          tmp_path, env={"MAX_JOBS": "7"})
    rec, proc = run(command, tmp_path)
    assert proc.wait(20)
    assert rec.lines == [f"{tmp_path} 7"]


def test_a_shell_command_runs_only_when_asked(tmp_path: Path) -> None:
    rec, proc = run(GateCommand(("echo one && echo two",), tmp_path, shell=True), tmp_path)
    assert proc.wait(20)
    assert rec.lines == ["one", "two"]


def test_a_missing_program_is_a_clear_error(tmp_path: Path) -> None:
    from cockpit.errors import CockpitError

    proc = GateProcess(GateCommand(("no-such-tool-xyz",), tmp_path), tmp_path / "run.log", Recorder())
    with pytest.raises(CockpitError, match=r"cannot start 'no-such-tool-xyz'.*cockpit\.toml"):
        proc.start()


def test_a_flood_shows_its_latest_lines_counts_them_all_and_the_log_has_every_one(tmp_path: Path) -> None:
    lines = 400_000
    rec, proc = run(python(f"import sys\nw = sys.stdout.write\nfor i in range({lines}): w(f'{{i}}\\n')"),
                    tmp_path)
    assert proc.wait(60)
    assert rec.lines[-1] == str(lines - 1)
    assert any(o.skipped for o in rec.outputs)  # more than a poll splits: the latest lines only
    assert len(rec.lines) < lines / 2
    last = rec.outputs[-1]
    assert (last.total, last.estimated) == (lines, False)  # counted within the budget: exact
    assert rec.outcome is not None and rec.outcome.lines == lines
    log = (tmp_path / "run.log").read_text().splitlines()
    assert log[2:-1] == [str(i) for i in range(lines)]


def test_a_grandchild_still_writing_the_log_is_stopped_a_second_after_the_child_exits(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    code = (f"import subprocess, sys\n"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time\\nwhile True: print(1, flush=True); "
            f"time.sleep(0.1)'])\nopen({str(pidfile)!r}, 'w').write(str(p.pid))")
    rec, proc = run(python(code), tmp_path)
    assert proc.wait(20)
    assert rec.outcome is not None and rec.outcome.exit_code == 0 and rec.outcome.duration_s < 10
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)  # reaping by init is asynchronous
    assert not pid_alive(grandchild)


def test_a_grandchild_that_let_go_of_the_log_is_left_running(tmp_path: Path) -> None:
    pidfile = tmp_path / "server.pid"
    code = (f"import subprocess, sys\n"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], "
            f"stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            f"open({str(pidfile)!r}, 'w').write(str(p.pid))\nprint('started a server')")
    rec, proc = run(python(code), tmp_path)
    try:
        assert proc.wait(20)
        assert rec.lines == ["started a server"] and rec.outcome is not None
        assert pid_alive(int(pidfile.read_text()))  # a compile server, say: not the gate's to stop
    finally:
        os.kill(int(pidfile.read_text()), signal.SIGKILL)
