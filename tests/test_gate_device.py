"""Pinning the gates to one GPU: `[gates] device` gives every gate's child CUDA_VISIBLE_DEVICES =
that GPU's UUID; what the GPU panel is told about the GPU a gate runs on; which GPUs a phase's
GPU summary covers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.config import Config, load_config
from cockpit.errors import CockpitError
from cockpit.gates.device import (
    command_device,
    gate_device,
    phase_gpu_uuids,
    pin_command,
    result_device,
)
from cockpit.gates.process import GateCommand
from cockpit.session.state import GateRunRecord
from cockpit.telemetry.sample import GpuStatic
from tests.trusted import trust

H200_0 = GpuStatic(0, "NVIDIA H200", "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20", "00000000:1B:00.0")
H200_1 = GpuStatic(1, "NVIDIA H200", "GPU-5f0e2c71-9a8b-4c3d-8e2f-1a2b3c4d5e6f", "00000000:43:00.0")
BOX = (H200_0, H200_1)


def config(tmp_path: Path, text: str) -> Config:
    (tmp_path / "cockpit.toml").write_text(text)
    return load_config(tmp_path)


def command(**env: str) -> GateCommand:
    return GateCommand(("python3", "probe.py"), Path("."), env)


@pytest.mark.parametrize("pin", ['"GPU-5f0e2c71-9a8b-4c3d-8e2f-1a2b3c4d5e6f"', '"0000:43:00.0"', "1"])
def test_a_pinned_gate_sees_that_gpu_by_uuid_however_it_was_named(tmp_path: Path, pin: str) -> None:
    pinned = pin_command(command(), config(tmp_path, f"[gates]\ndevice = {pin}\n"), BOX)
    assert pinned.env == {"CUDA_VISIBLE_DEVICES": H200_1.uuid}


def test_a_uuid_pin_needs_no_nvml_and_a_gates_own_env_wins(tmp_path: Path) -> None:
    c = config(tmp_path, '[gates]\ndevice = "GPU-5f0e2c71-9a8b-4c3d-8e2f-1a2b3c4d5e6f"\n')
    assert pin_command(command(), c, None).env["CUDA_VISIBLE_DEVICES"] == H200_1.uuid
    assert pin_command(command(CUDA_VISIBLE_DEVICES="0"), c, BOX).env == {"CUDA_VISIBLE_DEVICES": "0"}
    assert pin_command(command(), Config(), None) == command()  # no pin: nothing changes


def test_a_pin_that_names_no_gpu_says_where_it_is_set_and_what_there_is(tmp_path: Path) -> None:
    c = config(tmp_path, "gpu_cost_per_hour = 1\n\n[gates]\ndevice = 3\n")
    with pytest.raises(CockpitError) as err:
        pin_command(command(), c, BOX)
    assert str(err.value) == (f"{tmp_path}/cockpit.toml:4: gates.device = 3: no such GPU (NVML sees "
                              "0 GPU-bb9154e7 00000000:1B:00.0, 1 GPU-5f0e2c71 00000000:43:00.0); "
                              "`nvidia-smi -L` lists them")
    with pytest.raises(CockpitError, match="NVML cannot be read to find that GPU; pin it by UUID"):
        pin_command(command(), c, None)


def test_the_gate_device_follows_the_pin_then_the_gates_env_then_the_environment(tmp_path: Path) -> None:
    env = {"CUDA_VISIBLE_DEVICES": "1"}
    assert gate_device(Config(), "bench", env).choose(BOX).gpu is H200_1
    assert gate_device(Config(), "bench", {}).choose(BOX).gpu is H200_0
    pinned = config(tmp_path, '[gates]\ndevice = "00000000:1B:00.0"\n')
    choice = gate_device(pinned, "bench", env, running=True).choose(BOX)
    assert choice.gpu is H200_0 and choice.exact and choice.why == "[gates] device = 00000000:1B:00.0"
    own = config(tmp_path, '[gates]\ndevice = 0\n\n[gates.bench.env]\nCUDA_VISIBLE_DEVICES = "1"\n')
    assert gate_device(own, "bench", {}).choose(BOX).gpu is H200_1
    assert gate_device(own, "correctness", {}).choose(BOX).gpu is H200_0


def test_a_started_gate_and_a_finished_probe_name_their_gpu() -> None:
    started = command_device(command(CUDA_VISIBLE_DEVICES=H200_1.uuid or ""), {}, "bench")
    assert started.gate == "bench" and started.choose(BOX).gpu is H200_1
    reported = result_device({"gpu": {"uuid": H200_1.uuid, "nvml_index": 1}})
    assert reported is not None and reported.choose(BOX).gpu is H200_1
    assert result_device({"rows": []}) is None


def test_a_phase_summary_covers_the_gpus_the_gates_ran_on() -> None:
    runs = [GateRunRecord("001-bench", "bench", 100.0, 1, "log", 190.0, "pass",
                          result_inline={"gpu": {"uuid": H200_1.uuid}}),
            GateRunRecord("002-env", "env", 200.0, 2, "log", 205.0, "pass", result_inline={"checks": []})]
    assert phase_gpu_uuids(runs, 0.0, 300.0, None, BOX) == {H200_1.uuid}
    assert phase_gpu_uuids(runs, 0.0, 300.0, gate_device(Config(), "bench", {}), BOX) == {
        H200_0.uuid, H200_1.uuid}
    assert phase_gpu_uuids(runs, 195.0, 300.0, None, BOX) is None  # nothing known: every GPU


def cockpit(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), *args],
                          capture_output=True, text=True, timeout=120)


def test_cockpit_gate_gives_the_child_the_pinned_uuid_and_logs_it(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text(
        '[gates]\ndevice = "GPU-5f0e2c71-9a8b-4c3d-8e2f-1a2b3c4d5e6f"\n\n'
        '[gates.env]\ncommand = "echo on $CUDA_VISIBLE_DEVICES"\nshell = true\n')
    trust(tmp_path)
    cockpit(tmp_path, "new", "pinned")
    result = cockpit(tmp_path, "gate", "env", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["summary"] == "exit 0: on GPU-5f0e2c71-9a8b-4c3d-8e2f-1a2b3c4d5e6f"
    assert "# CUDA_VISIBLE_DEVICES=GPU-5f0e2c71-9a8b-4c3d-8e2f-1a2b3c4d5e6f" in Path(report["log"]).read_text()


def test_a_pin_to_a_gpu_this_box_does_not_have_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text('[gates]\ndevice = 7\n\n[gates.env]\ncommand = ["true"]\n')
    trust(tmp_path)
    cockpit(tmp_path, "new", "pinned")
    result = cockpit(tmp_path, "gate", "env", "--json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["status"] == "error"
    # here NVML cannot be read at all; on a GPU box NVML lists the GPUs it has instead
    assert report["summary"].startswith(f"{tmp_path}/cockpit.toml:2: gates.device = 7: ")
    assert "NVML cannot be read" in report["summary"] or "no such GPU" in report["summary"]
