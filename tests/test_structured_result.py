"""A replaced gate command is judged like the cockpit's own when it hands back a structured
result, and is shown as NOT JUDGED when it does not: never a green PASS with a speedup the cockpit
cannot stand behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trusted import trust

BENCH = {"cockpit_result": 1, "gate": "bench", "workload": "my-softmax", "device": "NVIDIA H100 80GB HBM3",
         "baseline": "torch.softmax",
         "rows": [{"config": f"M=4096 N={n} fp16", "ours_ms": 0.010, "ref_ms": {"torch.softmax": 0.013}}
                  for n in (1024, 4096, 16384)]}


def gate(ws: Path, name: str, command: str) -> dict[str, object]:
    (ws / "cockpit.toml").write_text(f"[gates.{name}]\ncommand = {json.dumps(command)}\nshell = true\n")
    trust(ws)
    subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), "new", "replaced"],
                   check=True, capture_output=True, timeout=60)
    out = subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), "gate", name, "--json"],
                         capture_output=True, text=True, timeout=120)
    return dict(json.loads(out.stdout), exit=out.returncode)


def printer(doc: dict[str, object]) -> str:
    script = f"print('cockpit-result: ' + {json.dumps(json.dumps(doc))!s})"
    return f"{sys.executable} -c {json.dumps(script)}"


def test_a_replaced_bench_that_hands_back_its_times_gets_the_speedup_class_against_its_baseline(
        tmp_path: Path) -> None:
    report = gate(tmp_path, "bench", printer(BENCH))
    assert str(report["summary"]).startswith("1.30x vs torch.softmax (ahead of the baseline) over 3 configs")
    result = report["result"]
    assert isinstance(result, dict)
    assert result["workload"] == "my-softmax" and result["baseline"] == "torch.softmax"
    # the cockpit did not watch the GPU while an outside harness timed it: never "valid"
    assert result["validity"]["valid"] is False and "not watched" in str(report["summary"])
    assert report["status"] == "warn" and result["keep"]["action"] == "baseline"


def test_a_replaced_bench_without_a_result_is_not_judged_whatever_its_exit_code(tmp_path: Path) -> None:
    report = gate(tmp_path, "bench", "echo 'speedup 3.0x (trust me)'")
    assert report["status"] == "warn"
    assert str(report["summary"]).startswith("not judged: the replaced command exited 0 without a cockpit result")
    assert report["result"] == {"judged": False, "exit_code": 0}


def test_a_replaced_correctness_writes_its_table_to_the_file_the_cockpit_names(tmp_path: Path) -> None:
    doc = {"cockpit_result": 1, "gate": "correctness",
           "rows": [{"config": "N=31", "ok": True, "rel_l2": 1e-4}, {"config": "N=4097", "ok": False,
                                                                   "rel_l2": 0.5, "tolerance": 0.01}]}
    script = f"import json, os; json.dump({doc!r}, open(os.environ['COCKPIT_RESULT'], 'w'))"
    report = gate(tmp_path, "correctness", f"{sys.executable} -c {json.dumps(script)}")
    assert report["status"] == "fail" and report["exit"] == 1
    assert str(report["summary"]).startswith("FAILS at N=4097: rel L2 5.00e-01 > 0.01")


@pytest.mark.parametrize(("line", "said"), [
    ("cockpit-result: {not json", "is not JSON"),
    ('cockpit-result: {"cockpit_result": 7, "rows": [1]}', "this cockpit reads version 1"),
])
def test_a_broken_result_is_an_error_that_says_what_is_wrong(tmp_path: Path, line: str, said: str) -> None:
    report = gate(tmp_path, "bench", f"echo {json.dumps(line)}")
    assert report["status"] == "error" and said in str(report["summary"])
