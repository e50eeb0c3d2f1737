"""bench/startup.py's first-frame marker is drawn by the first frame at 120x40 (the session id no
longer is, whole: "never appeared within 15s", issue 36)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "startup.py"


def test_the_first_frame_draws_the_marker(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("startup_bench", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    made = subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(tmp_path), "new", "startup bench",
                           "--json"], capture_output=True, text=True, check=True, timeout=60)
    marker = bench.first_phase_name(Path(json.loads(made.stdout)["journal"]))
    assert marker == "Environment"
    assert 0 < bench.first_frame_s(tmp_path, marker.encode(), timeout_s=30.0) < 30.0
