"""A gate that prints without end (a runaway print in a test, a verbose build) fills neither the
disk nor the reader of its log: `[gates] log_max_mb` keeps the log's head and tail and says how
much was cut between them; the verdict still sees the last lines."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cockpit.config import ConfigError, load_config
from cockpit.gates.log_follow import GateOutput
from cockpit.gates.process import GateCommand, GateProcess, ProcessOutcome
from tests.trusted import trust


def test_a_flood_keeps_the_head_and_the_tail_and_says_what_it_cut(tmp_path: Path) -> None:
    code = "import sys; [print(f'line {i} ' + 'x' * 60) for i in range(100000)]; print('the end')"
    (tmp_path / "cockpit.toml").write_text(
        f'[gates]\nlog_max_mb = 1\n[gates.env]\ncommand = ["{sys.executable}", "-c", "{code}"]\n')
    trust(tmp_path)
    cli = [sys.executable, "-m", "cockpit", "--workspace", str(tmp_path)]
    subprocess.run([*cli, "new", "flood"], check=True, capture_output=True, timeout=60)
    out = subprocess.run([*cli, "gate", "env", "--json"], capture_output=True, text=True, timeout=300)
    report = json.loads(out.stdout)
    log = Path(report["log"])
    size = log.stat().st_size
    assert 0.9 * 1024 * 1024 <= size <= 1024 * 1024 + 4096  # printed: ~7 MB
    lines = log.read_text().splitlines()
    assert lines[2] == "line 0 " + "x" * 60  # after the command and cwd lines
    assert lines[-2] == "the end" and lines[-1].startswith("# exit 0")
    [cut] = [line for line in lines if "cut here" in line]
    assert cut.startswith("# [cockpit: ") and "MB of output cut here" in cut and "keeps its first and last 0.5 MB ([gates] log_max_mb = 1)" in cut


def test_a_log_cap_out_of_range_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text("[gates]\nlog_max_mb = 0\n")
    with pytest.raises(ConfigError, match=r"cockpit.toml:2: gates.log_max_mb: 0 is not allowed"):
        load_config(tmp_path)


def test_while_a_flood_runs_its_log_holds_no_more_disk_than_the_cap(tmp_path: Path) -> None:
    # The child writes its log itself; the runner hands back the blocks of the middle as it grows.
    go = tmp_path / "go"
    code = ("import os, sys, time\nw = sys.stdout.write\n"
            "for i in range(400_000): w(f'line {i} ' + 'x' * 60 + '\\n')\nsys.stdout.flush()\n"
            f"while not os.path.exists({str(go)!r}): time.sleep(0.02)\nprint('the end')")
    seen = threading.Event()

    class Sink:
        def on_output(self, output: GateOutput) -> None:
            if output.total >= 400_000:
                seen.set()

        def on_stall(self, silent_s: float) -> None: ...

        def on_exit(self, outcome: ProcessOutcome) -> None: ...

    log = tmp_path / "run.log"
    proc = GateProcess(GateCommand((sys.executable, "-c", code), tmp_path, log_max_bytes=2 << 20), log, Sink())
    proc.start()
    try:
        assert seen.wait(60)
        deadline = time.monotonic() + 10
        while log.stat().st_blocks * 512 > 4 << 20 and time.monotonic() < deadline:
            time.sleep(0.05)  # the look that saw the last line punches right after it
        assert log.stat().st_size > 25 << 20 and log.stat().st_blocks * 512 <= 4 << 20
    finally:
        go.touch()
    assert proc.wait(30)
    lines = log.read_text().splitlines()
    assert log.stat().st_size <= (2 << 20) + 4096
    assert lines[2].startswith("line 0 ") and lines[-2] == "the end" and lines[-1].startswith("# exit 0")
    assert sum("MB of output cut here" in line for line in lines) == 1
