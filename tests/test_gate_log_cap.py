"""A gate that prints without end (a runaway print in a test, a verbose build) fills neither the
disk nor the reader of its log: `[gates] log_max_mb` keeps the log's head and tail and says how
much was cut between them; the verdict still sees the last lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.config import ConfigError, load_config


def test_a_flood_keeps_the_head_and_the_tail_and_says_what_it_cut(tmp_path: Path) -> None:
    code = "import sys; [print(f'line {i} ' + 'x' * 60) for i in range(100000)]; print('the end')"
    (tmp_path / "cockpit.toml").write_text(
        f'[gates]\nlog_max_mb = 1\n[gates.env]\ncommand = ["{sys.executable}", "-c", "{code}"]\n')
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
