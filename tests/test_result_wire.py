"""The probe's result file has a wire version: a file from before the key reads as wire 1 (the
recorded GPU runs are), another version or rows the gate cannot judge from are one line saying
to run the gate again, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.errors import CockpitError
from cockpit.gates.bench.gate import BenchGate
from cockpit.gates.bench.measured import read_measured
from cockpit.gates.correctness.gate import CorrectnessGate
from cockpit.gates.gate import GateContext
from cockpit.workload.result_wire import WIRE, WIRE_KEY


def _ctx(tmp_path: Path, document: object) -> GateContext:
    ctx = GateContext(tmp_path, tmp_path / "sessions" / "s", "001-bench")
    ctx.result_path.parent.mkdir(parents=True)
    ctx.result_path.write_text(json.dumps(document), encoding="utf-8")
    return ctx


def test_a_file_of_another_wire_version_is_one_line_saying_to_run_the_gate_again(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, {WIRE_KEY: WIRE + 1, "rows": [{"config": "N=1", "ok": True}]})
    for gate in (BenchGate(), CorrectnessGate()):
        with pytest.raises(CockpitError, match=f"wire version {WIRE + 1}, this cockpit reads {WIRE}.*run the gate again"):
            gate.verdict(ctx, 0, [])


def test_an_unversioned_correctness_file_reads_as_wire_1(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, {"rows": [{"config": "N=1", "ok": True, "rel_l2": 1e-4, "tolerance": 1e-2}]})
    verdict = CorrectnessGate().verdict(ctx, 0, [])
    assert verdict.status == "pass" and verdict.summary.startswith("all 1/1 checks correct")


@pytest.mark.parametrize(("rows", "said"), [
    ([{"impl": {"ours": {"median_ms": 1.0}}}], "row 1 names no config"),
    ([{"config": "N=1", "blocks": [{"impl": "ours"}]}], "timed block at N=1 has no implementation or span"),
])
def test_rows_the_gate_cannot_judge_from_are_one_line(rows: list[object], said: str) -> None:
    with pytest.raises(CockpitError, match=f"{said}: not what the probe writes; run the gate again"):
        read_measured({"rows": rows})


def test_samples_without_their_time_are_one_line() -> None:
    with pytest.raises(CockpitError, match="gpu_samples hold a sample without its time"):
        read_measured({"rows": [], "gpu_samples": [{"util": 90}]})


def test_every_probe_writes_the_one_wire_version() -> None:
    """The probes run by their path write the version as a number of their own: each is the
    cockpit's, so a gate never reads one probe's file as another version's."""
    from cockpit.probes import build_probe, profile_probe, sanitize_probe
    from cockpit.probes.env import run as env_run

    assert {m.__name__: m.WIRE for m in (build_probe, profile_probe, sanitize_probe, env_run)} == {
        m.__name__: WIRE for m in (build_probe, profile_probe, sanitize_probe, env_run)}


def test_the_env_build_profile_and_sanitize_gates_refuse_another_wire_version_in_one_line(tmp_path: Path) -> None:
    from cockpit.gates.build.gate import BuildGate
    from cockpit.gates.env.gate import EnvGate
    from cockpit.gates.profile.gate import ProfileGate
    from cockpit.gates.sanitize.gate import SanitizeGate

    ctx = _ctx(tmp_path, {WIRE_KEY: WIRE + 1, "checks": [], "exit": 0, "kernels": []})
    ctx.log_path.parent.mkdir(parents=True)
    ctx.log_path.write_text("done\n", encoding="utf-8")  # the build gate reads its log too
    for gate in (EnvGate(), BuildGate(), ProfileGate(), SanitizeGate()):
        with pytest.raises(CockpitError, match=f"wire version {WIRE + 1}, this cockpit reads {WIRE}.*run the gate again"):
            gate.verdict(ctx, 0, ["done"])
