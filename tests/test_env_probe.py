"""The Env gate: real runs of the probe in a child python on this GPU-less machine (CPU torch,
nvcc 13.0, no NVML), plus the core that reads its result."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cockpit.errors import CockpitError
from cockpit.gates.env.gate import PROBE_SCRIPT, EnvCheck, env_argv, env_verdict, read_env_result
from cockpit.probes.env.extension import check_extension
from cockpit.probes.env.probe import MachineCheck, Probe, find_files, format_age
from cockpit.probes.env.profiler import profiling_admin_only
from cockpit.probes.env.run import CHECKS, run_check
from tests.no_gpu import no_gpu_env

STALE_AGE_S = 2 * 3600 + 13 * 60 + 30
CHECK_NAMES = [name for name, _ in CHECKS]


def require_torch() -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.fail("torch is not installed here: pip install torch==2.13.0  (the CPU build; never an unpinned torch)")


def run_probe(workspace: Path, out: Path, *extra: str, env: dict[str, str] | None = None,
              argv: list[str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    # this machine as CI's, without a GPU, whatever it has (tests/no_gpu.py)
    child_env = {**no_gpu_env(), "TORCH_EXTENSIONS_DIR": str(workspace / "torch_extensions"), **(env or {})}
    started = time.monotonic()
    proc = subprocess.run(
        (argv or env_argv(sys.executable, out, workspace)) + list(extra),
        capture_output=True, text=True, timeout=60, env=child_env, cwd=workspace,
    )
    return proc, time.monotonic() - started


def by_name(result: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {c["name"]: c for c in result["checks"]}


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real probe run over a workspace whose build dir holds a stale lock and a broken .so."""
    require_torch()
    workspace = tmp_path_factory.mktemp("env-ws")
    ext_dir = workspace / "build" / "cockpit_attn"
    ext_dir.mkdir(parents=True)
    lock = ext_dir / "lock"
    lock.write_text("")
    stale = time.time() - STALE_AGE_S
    os.utime(lock, (stale, stale))
    fake_so = ext_dir / "cockpit_attn.so"
    fake_so.write_bytes(b"this is not an ELF shared library\n")
    out = workspace / "results" / "env.json"
    proc, elapsed = run_probe(workspace, out)
    return {"proc": proc, "elapsed": elapsed, "out": out, "lock": lock, "so": fake_so,
            "result": json.loads(out.read_text(encoding="utf-8")) if out.exists() else None}


# ---------------------------------------------------------------- a real run here


def test_the_probe_fails_here_with_exit_1_and_a_readable_result(probed: dict[str, Any]) -> None:
    proc = probed["proc"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    checks = read_env_result(probed["out"])
    assert [c.name for c in checks] == CHECK_NAMES
    assert all(c.status in ("pass", "warn", "fail") for c in checks)
    assert env_verdict(checks)[0] == "fail"
    # The temp file of the atomic write is gone.
    assert sorted(p.name for p in probed["out"].parent.iterdir()) == ["env.json"]


def test_the_probe_finishes_in_under_10_s(probed: dict[str, Any]) -> None:
    assert probed["result"]["duration_s"] < 10
    assert probed["elapsed"] < 10, f"the whole child took {probed['elapsed']:.1f} s"


def test_it_prints_one_line_per_check_then_a_summary(probed: dict[str, Any]) -> None:
    lines = probed["proc"].stdout.splitlines()
    check_lines = [line for line in lines if re.match(r"^(PASS|WARN|FAIL)  ", line)]
    assert [line.split()[1] for line in check_lines] == CHECK_NAMES
    assert all("→ fix: " in line for line in check_lines if line.startswith("FAIL"))
    assert re.match(r"^env: 3 failed, \d+ warnings, \d+ passed in \d+\.\d s → ", lines[-1]), lines[-1]
    assert "Traceback" not in probed["proc"].stdout + probed["proc"].stderr


def test_a_cpu_only_torch_fails_with_the_cuda_install_line(probed: dict[str, Any]) -> None:
    torch_check = by_name(probed["result"])["torch"]
    assert torch_check["status"] == "fail"
    assert "CPU-only" in torch_check["value"]
    assert "pip install torch --index-url https://download.pytorch.org/whl/cu" in torch_check["fix"]


def test_no_gpu_fails_the_cuda_check_with_its_fix(probed: dict[str, Any]) -> None:
    cuda = by_name(probed["result"])["cuda_available"]
    assert cuda["status"] == "fail"
    assert cuda["value"].startswith("False")
    assert "nvidia-smi" in cuda["fix"]


def test_nvcc_is_found_with_its_release(probed: dict[str, Any]) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None and not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("no nvcc on this machine")
    direct = subprocess.run([nvcc or "/usr/local/cuda/bin/nvcc", "--version"],
                            capture_output=True, text=True, timeout=10).stdout
    release = re.search(r"release (\d+\.\d+)", direct).group(1)  # type: ignore[union-attr]
    check = by_name(probed["result"])["nvcc"]
    assert check["status"] == "pass"  # a CPU torch has no CUDA version to disagree with
    assert check["value"].startswith(f"release {release} (")
    assert release == "13.0"  # what this machine has (DESIGN: the lent GPU boxes run CUDA 13)


def test_a_stale_lock_is_reported_with_path_and_age_and_left_alone(probed: dict[str, Any]) -> None:
    check = by_name(probed["result"])["stale_lock"]
    assert check["status"] == "warn"
    # the journal and the exported report keep it relative to the workspace; the fix pastes anywhere
    assert "build/cockpit_attn/lock, 2 h 13 min old" in check["value"]
    assert str(probed["lock"]) not in check["value"]
    assert check["fix"] == f"if no build is running, delete it: rm {probed['lock']}"
    assert probed["lock"].exists()


def test_a_broken_extension_library_fails_with_a_clear_message(probed: dict[str, Any]) -> None:
    check = by_name(probed["result"])["extension"]
    assert check["status"] == "fail"
    assert check["value"].startswith("build/cockpit_attn/cockpit_attn.so does not load: ")
    assert "header" in check["value"] or "too short" in check["value"]  # the loader's own words
    assert "rm -rf" in check["fix"] and "cockpit gate build" in check["fix"]


def test_missing_nvml_and_driver_are_warnings_not_failures(probed: dict[str, Any]) -> None:
    checks = by_name(probed["result"])
    if Path("/proc/driver/nvidia/params").exists():
        pytest.skip("this machine has an NVIDIA driver")
    assert checks["persistence_mode"]["status"] == "warn"
    assert checks["persistence_mode"]["value"].startswith("no NVML (no driver?)")
    assert checks["ncu_counters"]["value"] == "unknown (no NVIDIA driver params)"


def test_an_extension_built_for_another_torch_is_named_an_abi_mismatch(tmp_path: Path) -> None:
    require_torch()
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler to build the fake extension")
    build = tmp_path / "build"
    build.mkdir()
    source = tmp_path / "fake.cpp"
    # Like a real extension built against another libtorch: a symbol this torch does not export.
    source.write_text('void* c10_gone_in_this_torch(int);\n'
                      'extern "C" void* PyInit_cockpit_attn() { return c10_gone_in_this_torch(1); }\n')
    library = build / "cockpit_attn.cpython-311-x86_64-linux-gnu.so"
    subprocess.run([cxx, "-shared", "-fPIC", "-o", str(library), str(source)], check=True, timeout=60)
    proc, _ = run_probe(tmp_path, tmp_path / "env.json")
    check = by_name(json.loads((tmp_path / "env.json").read_text()))["extension"]
    assert proc.returncode == 1
    assert check["status"] == "fail"
    assert "ABI/version mismatch" in check["value"]
    assert "c10_gone_in_this_torch(int)" in check["value"]  # demangled
    assert "built for another torch/CUDA" in check["fix"]


def test_the_deadline_writes_what_is_known_and_exits_1(tmp_path: Path) -> None:
    out = tmp_path / "env.json"
    proc, elapsed = run_probe(tmp_path, out, "--deadline-s", "0.2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    checks = read_env_result(out)
    assert [c.name for c in checks] == CHECK_NAMES
    stuck = [c for c in checks if c.status == "fail"]
    assert len(stuck) == 1 and "did not finish within the probe's 0.2 s" in stuck[0].value
    assert all(c.value.startswith("not run") for c in checks[CHECK_NAMES.index(stuck[0].name) + 1:])
    assert elapsed < 10


def test_it_also_runs_as_a_module(tmp_path: Path) -> None:
    out = tmp_path / "env.json"
    argv = [sys.executable, "-m", "cockpit.probes.env_probe", "--out", str(out), "--workspace", str(tmp_path),
            "--deadline-s", "0.2"]
    proc, _ = run_probe(tmp_path, out, argv=argv, env={"PYTHONPATH": str(PROBE_SCRIPT.parents[2])})
    assert proc.returncode == 1, proc.stderr
    assert read_env_result(out)


@pytest.mark.parametrize("args, message", [
    ([], "--out"),
    (["--out", "{tmp}/r.json", "--extension", "not-a-module"], "not a module name"),
    (["--out", "{tmp}/afile/r.json"], "pass a writable --out"),
    (["--out", "{tmp}/r.json", "--workspace", "{tmp}/nowhere"], "is not a folder"),
])
def test_the_probe_itself_not_running_exits_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "afile").write_text("")
    argv = [sys.executable, str(PROBE_SCRIPT)] + [a.format(tmp=tmp_path) for a in args]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "r.json").exists()


# ---------------------------------------------------------------- probe pieces, in process


def test_format_age() -> None:
    assert format_age(45) == "45 s"
    assert format_age(600) == "10 min"
    assert format_age(STALE_AGE_S) == "2 h 13 min"
    assert format_age(3 * 86400 + 5 * 3600) == "3 d 5 h"
    assert format_age(-5) == "0 s"


def test_the_lock_walk_stops_three_levels_down(tmp_path: Path) -> None:
    (tmp_path / "a" / "b" / "c" / "d").mkdir(parents=True)
    for folder in ("", "a/b/c", "a/b/c/d"):
        (tmp_path / folder / "lock").write_text("")
    found = find_files(tmp_path, lambda name: name == "lock")
    assert found == [tmp_path / "a" / "b" / "c" / "lock", tmp_path / "lock"]


def test_profiling_counters_are_read_from_the_driver_params(tmp_path: Path) -> None:
    params = tmp_path / "params"
    params.write_text("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nEnableMSI: 1\n")
    assert profiling_admin_only(params) is True
    params.write_text("RmProfilingAdminOnly: 0\n")
    assert profiling_admin_only(params) is False
    assert profiling_admin_only(tmp_path / "missing") is None


def test_an_unbuilt_extension_is_a_warning(tmp_path: Path) -> None:
    probe = Probe(tmp_path, tmp_path / "build", "cockpit_attn")
    try:
        check = check_extension(probe)
        (tmp_path / "build").mkdir()
        empty = check_extension(probe)
    finally:
        probe.close()
    assert (check.status, empty.status) == ("warn", "warn")
    assert check.value == "not built yet (build does not exist)"
    assert empty.value == "not built yet (no cockpit_attn*.so in build)"
    assert "cockpit gate build" in empty.fix


def test_a_check_that_raises_becomes_a_failure() -> None:
    def broken(_: Probe) -> MachineCheck:
        raise RuntimeError("boom\nsecond line")

    check = run_check("broken", broken, None)  # type: ignore[arg-type]
    assert (check.status, check.value) == ("fail", "check raised RuntimeError: boom second line")


def test_the_probe_module_does_not_import_torch_at_import_time() -> None:
    code = "import sys, cockpit.probes.env_probe; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "False", out.stderr


# ---------------------------------------------------------------- core: result and verdict


def _check(name: str, status: str) -> EnvCheck:
    return EnvCheck(name, status, "v", "e", "")  # type: ignore[arg-type]


def test_env_verdict() -> None:
    assert env_verdict([_check(f"c{i}", "pass") for i in range(14)]) == ("pass", "all 14 checks passed")
    mixed = ([_check("cuda_available", "fail"), _check("nvcc", "fail")]
             + [_check(f"w{i}", "warn") for i in range(3)] + [_check(f"p{i}", "pass") for i in range(9)])
    assert env_verdict(mixed) == ("fail", "2 failed (cuda_available, nvcc), 3 warnings, 9 passed")
    assert env_verdict([_check("ncu", "warn"), _check("python", "pass")]) == ("warn", "1 warning, 1 passed")
    assert env_verdict([]) == ("fail", "the env probe reported no checks")


def test_env_argv_runs_the_probe_script_by_path(tmp_path: Path) -> None:
    argv = env_argv("/venv/bin/python", tmp_path / "r.json", tmp_path)
    assert argv == ["/venv/bin/python", str(PROBE_SCRIPT), "--out", str(tmp_path / "r.json"),
                    "--workspace", str(tmp_path)]
    assert PROBE_SCRIPT.is_file()


def test_read_env_result_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"checks": [{"name": "nvcc", "status": "warn", "value": "release 12.8",
                                            "expected": "release 13.0", "fix": "export CUDA_HOME=..."}],
                                "duration_s": 1.5}))
    assert read_env_result(path) == (EnvCheck("nvcc", "warn", "release 12.8", "release 13.0", "export CUDA_HOME=..."),)


@pytest.mark.parametrize("content, message", [
    (None, "no env probe result"),
    ('{"checks": [{"name": "torch", "st', "corrupt env probe result"),
    ('["not", "an", "object"]', "no 'checks' list"),
    ('{"checks": [{"name": "torch", "status": "maybe"}]}', "checks[0] is not a check"),
])
def test_read_env_result_errors_are_one_line(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CockpitError) as info:
        read_env_result(path)
    text = str(info.value)
    assert message in text and str(path) in text
    assert "\n" not in text
    assert "run the env gate again" in text


# ---------------------------------------------------------------- CUDA ordinals and NVML's GPUs

H200S = [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20",
          "pci_bus_id": "00000000:1B:00.0"},
         {"index": 1, "name": "NVIDIA H200", "uuid": "GPU-5f0e2c71-9a8b-4c3d-8e2f-1a2b3c4d5e6f",
          "pci_bus_id": "00000000:43:00.0"}]


def cuda_device(ordinal: int, nvml: dict[str, Any], uuid: bool = True) -> dict[str, Any]:
    """What torch says of a CUDA device that is this NVML GPU (without the UUID: an older torch)."""
    return {"ordinal": ordinal, "name": nvml["name"], "uuid": nvml["uuid"] if uuid else None,
            "pci_bus_id": nvml["pci_bus_id"]}


def test_the_gpu_mapping_passes_when_each_cuda_ordinal_is_its_nvml_index() -> None:
    from cockpit.probes.env.gpus import mapping_check

    check = mapping_check([cuda_device(0, H200S[0]), cuda_device(1, H200S[1])], H200S, None)
    assert check.status == "pass"
    assert check.value == ("cuda:0 → NVML 0 GPU-bb9154e7 (NVIDIA H200); cuda:1 → NVML 1 GPU-5f0e2c71 "
                           "(NVIDIA H200); NVML sees 2 GPUs (CUDA_VISIBLE_DEVICES unset)")


def test_with_cuda_visible_devices_1_the_mapping_is_a_warning_that_names_both_numbers() -> None:
    from cockpit.probes.env.gpus import mapping_check

    check = mapping_check([cuda_device(0, H200S[1])], H200S, "1")
    assert check.status == "warn"
    assert check.value == ("CUDA ordinals are not NVML indices here: cuda:0 → NVML 1 GPU-5f0e2c71 "
                           "(NVIDIA H200); NVML sees 2 GPUs (CUDA_VISIBLE_DEVICES='1')")
    assert '[gates] device = "GPU-…"' in check.fix
    # a torch without UUIDs: the PCI bus id finds it all the same
    assert mapping_check([cuda_device(0, H200S[1], uuid=False)], H200S, "1").value.startswith(
        "CUDA ordinals are not NVML indices here: cuda:0 → NVML 1 GPU-5f0e2c71 (NVIDIA H200)")


def test_a_cuda_device_nvml_does_not_list_is_named() -> None:
    from cockpit.probes.env.gpus import mapping_check

    mig = {"ordinal": 0, "name": "NVIDIA H200 MIG 1g.18gb", "uuid": "MIG-5c8a2f1e-6b7d-5e0f-9a1b-2c3d4e5f6a7b",
           "pci_bus_id": None}
    check = mapping_check([mig], H200S, "MIG-5c8a2f1e-6b7d-5e0f-9a1b-2c3d4e5f6a7b")
    assert check.status == "warn" and check.value.startswith("cuda:0 → not in NVML (MIG-5c8a2f1e")
    assert "MIG slice" in check.fix


def test_without_a_cuda_device_the_mapping_is_unknown_here(probed: dict[str, Any]) -> None:
    mapping = by_name(probed["result"])["gpu_mapping"]
    assert (mapping["status"], mapping["value"]) == ("warn", "unknown: no CUDA device")
    assert mapping["fix"] == "fix the cuda_available check first"
