"""`cockpit decide`: the seeds' classification boundaries and next steps."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cockpit.analysis.decide import decide


@pytest.mark.parametrize(("speedup", "level"), [
    (0.09, "CRITICAL"), (0.4999, "CRITICAL"), (0.5, "HIGH"), (0.99, "HIGH"), (1.0, "MEDIUM"),
    (1.4999, "MEDIUM"), (1.5, "SUCCESS"), (3.0, "SUCCESS")])
def test_classification_boundaries(speedup: float, level: str) -> None:
    assert decide(speedup).level == level


def test_below_half_the_speed_says_profile_first() -> None:
    d = decide(0.1)
    assert d.profile_first and d.tool == "ncu" and "profile with ncu first" in d.next_step


def test_a_kernel_under_ten_microseconds_is_launch_bound() -> None:
    d = decide(0.8, kernel_ms=0.005)
    assert d.launch_bound and d.tool == "nsys" and "5.0 µs" in d.next_step
    assert not decide(0.8, kernel_ms=0.05).launch_bound


def test_the_cli_prints_the_decision(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(tmp_path), "decide",
                          "0.12", "0.5", "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["level"], data["profile_first"], data["kernel_ms"]) == ("CRITICAL", True, 0.5)
    plain = subprocess.run([sys.executable, "-m", "cockpit", "decide", "1.7"], capture_output=True,
                           text=True, timeout=60)
    assert plain.stdout.startswith("SUCCESS  1.70x")
    bad = subprocess.run([sys.executable, "-m", "cockpit", "decide", "-1"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "positive" in bad.stderr
