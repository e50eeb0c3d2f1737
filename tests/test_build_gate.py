"""The Build gate without a GPU: the kernel compiles for the L4 and the H100 with nvcc, what ptxas
says about it is read correctly and joined with the kernel's own launch table (threads, dynamic
shared memory) into occupancy on both GPUs; the probe refuses to build into a stale lock."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cockpit.gates.build.gate import judge_build
from cockpit.gates.build.log import KernelResources, parse_errors, parse_ptxas
from cockpit.gates.build.resources import ResourcePolicy, report_kernels
from cockpit.workload.tuned import read_winners

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "build"
PROBE = REPO / "cockpit" / "probes" / "build_probe.py"


def kept_block_n(arch: str) -> int:
    """The D=128 tile's BN a plain build for `arch` takes: the tuned file's winner for that arch
    (csrc/tuned_config.h carries it to nvcc), else the hand-picked (the L4's) BN32."""
    won = [w for w in read_winners(REPO / "workloads" / "attention" / "attention.tuned.json")
           if w.arch == arch and w.group == {"D": 128}]
    return int(won[0].knobs["block_n"]) if won else 32


def nvcc(source: Path, arch: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("nvcc") is None:
        pytest.fail("nvcc is not on PATH: the CI machine has CUDA's nvcc; install the CUDA toolkit")
    return subprocess.run(
        ["nvcc", "-std=c++17", "-O3", "-Xptxas=-v", "-lineinfo", "--use_fast_math",
         f"-arch={arch}", "-c", str(source), "-o", str(tmp_path / f"{arch}.o")],
        capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module", params=["sm_89", "sm_90"])
def kernel_build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> tuple[str, list[str], list[dict[str, Any]]]:
    """csrc/attention.cu built for one arch with its launch table printed by a small main()
    (no torch, no GPU): (arch, the build's output lines, the launch table)."""
    arch = str(request.param)
    if shutil.which("nvcc") is None:
        pytest.fail("nvcc is not on PATH: the CI machine has CUDA's nvcc; install the CUDA toolkit")
    exe = tmp_path_factory.mktemp(arch) / "launch_table"
    out = subprocess.run(
        ["nvcc", "-std=c++17", "-O3", "-Xptxas=-v", "-lineinfo", "--use_fast_math", f"-arch={arch}",
         f"-I{REPO / 'csrc'}", str(REPO / "csrc" / "attention.cu"), str(FIXTURES / "launch_table_main.cpp"),
         "-o", str(exe)], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    table = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True,
                           env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})  # no device: no runtime numbers
    return arch, (out.stdout + out.stderr).splitlines(), [json.loads(line) for line in table.stdout.splitlines()]


def test_the_attention_kernel_compiles_with_no_spills(kernel_build: tuple[str, list[str], Any]) -> None:
    arch, lines, table = kernel_build
    kernels = parse_ptxas(lines)
    assert kernels, "ptxas -v printed no kernel"
    assert {k.arch for k in kernels} == {arch}
    for k in kernels:
        assert 0 < k.registers <= 255
        assert k.spill_stores == k.spill_loads == 0, f"{k.name} spills on {arch}"
    assert report_kernels(kernels, {"kernels": table, "gpu": None}).findings == ()


def test_every_compiled_kernel_is_judged_as_launched_on_an_l4_and_an_h100(
        kernel_build: tuple[str, list[str], Any]) -> None:
    """ptxas names 8 kernels; the launch table names the same 8 (by template arguments), and
    their occupancy on both GPUs comes out of the limits table, with the limiter named."""
    arch, lines, table = kernel_build
    assert all(entry["device_error"].startswith("cudaError") for entry in table)  # no GPU here
    report = report_kernels(parse_ptxas(lines), {"kernels": table, "gpu": None})
    assert report.launch_known and report.findings == ()
    rows = {r["label"]: r for r in report.rows}
    assert len(rows) == 8 and {r["threads"] for r in rows.values()} == {128}
    bn = kept_block_n(arch)  # the L4's BN32; the H100's kept BN64 (attention.tuned.json, tuned_config.h)
    assert bn == (32 if arch == "sm_89" else 64)
    d64, d128 = rows["attn_fwd<half, D=64, BM=128, BN=128, causal>"], rows[f"attn_fwd<bf16, D=128, BM=128, BN={bn}>"]
    assert (d64["smem_per_block"], d64["smem_opt_in"]) == (48 * 1024, False)
    # The L4's tile: two blocks of 48 KB fit its 100 KB per SM (a 64 KB tile would leave one); the
    # H100's 64 KB tile needs the opt-in, and an L4 is judged by the L4 build's tile.
    assert (d128["smem_per_block"], d128["smem_opt_in"]) == ((128 + 2 * bn) * 128 * 2, bn > 32)
    seen = {(t["arch"], t["source"]): (t["blocks_per_sm"], t["warps_per_sm"], t["limiter"])
            for t in d128["occupancy"]}
    assert seen == {("sm_89", "limits table"): (2, 8, "registers + shared memory"),
                    ("sm_90", "limits table"): (2, 8, "registers")}
    l4 = next(t for t in d128["occupancy"] if t["arch"] == "sm_89")
    assert l4["note"].startswith("the sm_89 build's own tile, attn_fwd<bf16, D=128, BM=128, BN=32>") == (arch == "sm_90")
    assert [t["arch"] for t in d64["occupancy"]] == [arch, *({"sm_89", "sm_90"} - {arch})]
    assert {t["blocks_per_sm"] for t in d64["occupancy"]} == {2}  # __launch_bounds__(128, 2)
    other = next(t for t in d64["occupancy"] if t["arch"] != arch)
    assert other["note"] == f"with the {arch} build's {d64['registers']} registers"


def test_the_build_summary_names_registers_shared_memory_and_occupancy(
        kernel_build: tuple[str, list[str], Any]) -> None:
    arch, lines, table = kernel_build
    probe = {"arch": arch, "duration_s": 4.2, "import": {"ok": True, "detail": "exports: forward, launch_info"},
             "launch": {"kernels": table, "gpu": None}}
    verdict = judge_build(["[1/1] nvcc ...", *lines], 0, probe)
    assert verdict.status == "pass"
    l4, h100 = "8 on L4 (17%, registers + shared memory)", "8 on H100 (12%, registers)"
    smem = 48 if arch == "sm_89" else 64  # the H100's kept D=128 tile
    assert verdict.summary == (f"built in 4.2 s (1 steps); 8 kernels: ≤255 regs, no spills, ≤{smem} KB smem/block; "
                               f"fewest warps/SM: {l4 + ', ' + h100 if arch == 'sm_89' else h100 + ', ' + l4}")
    strict = judge_build(lines, 0, probe, ResourcePolicy(occupancy_floor=0.25))
    assert strict.status == "warn"
    assert strict.summary.startswith(f"attn_fwd<bf16, D=128, BM=128, BN={32 if smem == 48 else 64}, causal> keeps 8 warps/SM on "
                                     f"{'L4' if arch == 'sm_89' else 'H100'} ({arch}) ")
    assert "under the 25.0% floor (+15 more); built in 4.2 s" in strict.summary  # 8 kernels x 2 GPUs


def test_too_much_shared_memory_is_named_with_the_kernel(tmp_path: Path) -> None:
    out = nvcc(FIXTURES / "too_much_shared.cu", "sm_89", tmp_path)
    assert out.returncode != 0
    lines = out.stderr.splitlines()
    [error] = [e for e in parse_errors(lines) if e.kind == "ptxas"]
    assert "'_Z3bigPf' uses too much shared data (0xcb20 bytes, 0xc000 max)" in error.message
    smem = {k.name: k.smem for k in parse_ptxas(lines)}
    assert smem == {"_Z3bigPf": 52000, "_Z9attn_likeILi128EEvPKfPfi": 32768,
                    "_Z9attn_likeILi64EEvPKfPfi": 16384}


def test_spills_warn_and_a_block_that_cannot_launch_on_a_target_fails() -> None:
    kernels = [KernelResources("_Z1kv", "sm_89", 255, 0, 64, 64, 32),
               KernelResources("_Z1jv", "sm_90", 96, 0, 0, 0, 0)]
    launch = {"kernels": [
        {"kernel": "k", "template_args": "", "label": "k", "threads_per_block": 128,
         "dynamic_smem_bytes": 40 * 1024, "smem_opt_in": False},
        {"kernel": "j", "template_args": "", "label": "j<big tile>", "threads_per_block": 256,
         "dynamic_smem_bytes": 110 * 1024, "smem_opt_in": True}], "gpu": None}
    report = report_kernels(kernels, launch)
    assert [(f.severity, f.text) for f in report.findings] == [  # failures first
        ("fail", "j<big tile> cannot launch on L4 (sm_89): 110 KB of shared memory per block; "
                 "L4 (sm_89) allows 99 KB"),  # the H100 holds 227 KB per block
        ("warn", "k (sm_89) spills 96 bytes to local memory")]
    no_opt_in = dict(launch["kernels"][0], dynamic_smem_bytes=64 * 1024)
    [finding, _] = report_kernels(kernels[:1], {"kernels": [no_opt_in]}, ResourcePolicy(targets=())).findings
    assert finding.text == ("k cannot launch on L4 (sm_89): 64 KB of dynamic shared memory without the opt-in: "
                            "the default allows 48 KB")


def test_an_h100_build_with_the_h100s_tile_judges_the_l4_by_the_l4_builds_tile() -> None:
    """tuned_config.h keeps BN64 (64 KB) for sm_90 only: the H100 build launches it, an L4 build
    launches the L4's BN32 (48 KB, two blocks per SM). The L4's row describes the L4 build, so the
    kept H100 tile is no warning about L4 occupancy; an extension that cannot say it keeps the
    old judgement (this build's tile on every target)."""
    kernels = [KernelResources("_Z1kv", "sm_90", 255, 0, 0, 0, 0)]
    h100 = {"kernel": "k", "template_args": "", "label": "attn<D=128, BM=128, BN=64>", "threads_per_block": 128,
            "dynamic_smem_bytes": 64 * 1024, "smem_opt_in": True}
    l4 = {"template_args": "", "label": "attn<D=128, BM=128, BN=32>", "threads_per_block": 128,
          "dynamic_smem_bytes": 48 * 1024, "smem_opt_in": False}
    report = report_kernels(kernels, {"kernels": [dict(h100, builds={"sm_89": l4, "sm_90": h100})], "gpu": None})
    by_arch = {t["arch"]: t for t in report.rows[0]["occupancy"]}
    assert (by_arch["sm_89"]["blocks_per_sm"], by_arch["sm_89"]["warps_per_sm"]) == (2, 8)
    assert by_arch["sm_89"]["note"].startswith("the sm_89 build's own tile, attn<D=128, BM=128, BN=32>")
    assert (by_arch["sm_90"]["blocks_per_sm"], by_arch["sm_90"]["note"]) == (2, "")
    assert report.findings == ()
    old = report_kernels(kernels, {"kernels": [h100], "gpu": None})
    assert {t["arch"]: t["warps_per_sm"] for t in old.rows[0]["occupancy"]} == {"sm_90": 8, "sm_89": 4}
    assert [f.text for f in old.findings] == [
        "attn<D=128, BM=128, BN=64> keeps 4 warps/SM on L4 (sm_89) (8%, shared memory), "
        "under the 12.5% floor"]


def test_without_the_launch_table_the_summary_says_so_instead_of_guessing() -> None:
    kernels = [KernelResources("_Z1kv", "sm_90", 96, 0, 0, 0, 0)]
    probe = {"arch": "9.0", "duration_s": 1.0, "import": {"ok": True, "detail": "exports: forward"},
             "launch": {"error": "the extension exports no launch_info() (docs/workloads.md says what it returns)"}}
    verdict = judge_build(["[1/1] nvcc"], 0, probe | {"cuobjdump": None})
    assert verdict.status == "pass"
    assert verdict.summary == ("built in 1.0 s (1 steps); no kernel resource usage reported")
    lines = ["ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'",
             "ptxas info    : Used 96 registers, used 1 barriers"]
    verdict = judge_build(lines, 0, probe)
    assert verdict.summary.endswith("1 kernels: ≤96 regs, no spills; shared memory per block and occupancy "
                                    "unknown: the extension exports no launch_info() (docs/workloads.md says "
                                    "what it returns)")
    assert verdict.result.to_json()["kernels"][0]["occupancy"] == [] and kernels


def test_a_probe_that_could_not_run_is_an_error_not_a_failure() -> None:
    verdict = judge_build(["cockpit-build: no GPU found to build for; set TORCH_CUDA_ARCH_LIST"], 2, {})
    assert verdict.status == "error"
    assert "TORCH_CUDA_ARCH_LIST" in verdict.summary


def probe(ws: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PROBE), "--workspace", str(ws), "--out",
                           str(ws / "result.json")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_the_probe_reports_a_stale_lock_and_never_deletes_it(tmp_path: Path) -> None:
    shutil.copytree(REPO / "csrc", tmp_path / "csrc")
    lock = tmp_path / "build" / "cockpit_attn" / "lock"
    lock.parent.mkdir(parents=True)
    lock.touch()
    old = time.time() - 2 * 3600
    os.utime(lock, (old, old))
    out = probe(tmp_path, {"TORCH_CUDA_ARCH_LIST": "8.9"})
    assert out.returncode == 1
    assert f"{lock} (120 min old); if no build is running, delete it: rm {lock}" in out.stdout
    assert lock.exists()


def test_the_probe_needs_sources_and_a_target_arch(tmp_path: Path) -> None:
    out = probe(tmp_path)
    assert out.returncode == 2 and "no csrc/*.cu or csrc/*.cpp" in out.stdout
    shutil.copytree(REPO / "csrc", tmp_path / "csrc")
    if shutil.which("nvidia-smi") is None:
        out = probe(tmp_path, {"TORCH_CUDA_ARCH_LIST": ""})
        assert out.returncode == 2 and "set TORCH_CUDA_ARCH_LIST" in out.stdout


def failure(name: str) -> list[str]:
    return (REPO / "tests" / "fixtures" / "failures" / f"{name}.log").read_text().splitlines()


def test_a_link_step_that_fails_without_file_line_is_named_with_what_the_linker_said() -> None:
    """Before: `ld returned 1 exit status`, the one line that says nothing."""
    verdict = judge_build(failure("ninja-link-missing-library"), 1, {"arch": "8.9"})
    assert verdict.status == "fail"
    assert verdict.summary == ("FAILED: cockpit_attn.so — /usr/bin/ld: cannot find -lcockpit_missing: "
                               "No such file or directory")
    assert verdict.result.to_json()["failed_steps"] == [
        {"target": "cockpit_attn.so", "said": "/usr/bin/ld: cannot find -lcockpit_missing: No such file or "
                                              "directory", "exit_code": None}]


def test_a_compiler_that_is_not_there_is_named_instead_of_ninja_build_stopped() -> None:
    """Before: `built, but it does not import: ninja: build stopped: subcommand failed.`"""
    lines = failure("ninja-compiler-not-found")
    assert lines[-2] == "ninja: build stopped: subcommand failed."
    verdict = judge_build(lines, 1, {"arch": "8.9"})
    assert (verdict.status, verdict.summary) == (
        "fail", "FAILED: attention.cuda.o — /bin/sh: 1: /opt/cuda-missing/bin/nvcc: not found")


def test_a_diagnostic_that_names_the_problem_still_wins_over_the_failed_step() -> None:
    h200 = REPO / "tests" / "fixtures" / "gpu" / "build"
    link = (h200 / "link-error.log").read_text().splitlines()
    verdict = judge_build(link, 1, {"arch": "9.0a"})
    assert verdict.summary == "FAILED: cockpit_attn.so — binding.cpp: multiple definition of cockpit_twice()"
    assert verdict.result.to_json()["failed_steps"][0]["target"] == "cockpit_attn.so"  # newer ninja: [code=1]
    assert verdict.result.to_json()["failed_steps"][0]["exit_code"] == 1
    compile_error = judge_build((h200 / "compile-error.log").read_text().splitlines(), 1, {"arch": "9.0a"})
    assert compile_error.summary.endswith("attention.cu:503: identifier \"undefined_name\" is undefined")


def test_the_import_check_asks_the_library_for_its_launch_table(tmp_path: Path, no_gpu: None) -> None:
    """The probe's import check, with a stand-in module: what it exports, its launch table, and
    where it has none or it raises, one line saying so (no GPU here: no runtime numbers)."""
    from cockpit.probes.build_probe import describe_launch, import_check

    entry = {"kernel": "k", "template_args": "64", "label": "k<64>", "threads_per_block": 128,
             "dynamic_smem_bytes": 0, "smem_opt_in": False, "device_error": "cudaErrorNoDevice: no device"}
    (tmp_path / "ext.py").write_text(f"def forward(): pass\ndef launch_info(): return [{entry!r}]\n")
    ok, detail, launch = import_check("ext", tmp_path / "ext.py")
    assert (ok, detail, launch) == (True, "exports: forward, launch_info", {"kernels": [entry], "gpu": None})
    assert describe_launch(launch) == "launch_info: 1 kernels, no GPU: runtime occupancy not asked"
    (tmp_path / "old.py").write_text("def forward(): pass\n")
    assert import_check("old", tmp_path / "old.py")[2] == {
        "error": "the extension exports no launch_info() (docs/workloads.md says what it returns)"}
    (tmp_path / "bad.py").write_text("def launch_info(): raise RuntimeError('table overflow')\n")
    assert import_check("bad", tmp_path / "bad.py")[2] == {
        "error": "launch_info() raised RuntimeError: table overflow"}
    (tmp_path / "broken.py").write_text("raise ImportError('undefined symbol: _Z1fv')\n")
    assert import_check("broken", tmp_path / "broken.py") == (
        False, "ImportError: undefined symbol: _Z1fv", None)


def test_the_build_panel_shows_each_kernel_as_launched_on_both_gpus(
        kernel_build: tuple[str, list[str], Any]) -> None:
    from rich.console import Console

    from cockpit.ui.widgets.gate_results import render_result

    arch, lines, table = kernel_build
    probe = {"arch": arch, "duration_s": 4.2, "import": {"ok": True, "detail": "exports: forward"},
             "launch": {"kernels": table, "gpu": None}}
    rendered = render_result("build", judge_build(lines, 0, probe).result)
    console = Console(width=170, record=True, color_system=None)
    console.print(rendered)
    text = console.export_text()
    header = next(line for line in text.splitlines() if "kernel" in line)
    assert header.split() == ["kernel", "regs", arch, "spill/stack", "smem/blk",
                              *(["L4", "sm_89", "H100", "sm_90"] if arch == "sm_89" else ["H100", "sm_90", "L4", "sm_89"])]
    bn = 32 if arch == "sm_89" else 64  # the H100 build takes its kept tile (tuned_config.h)
    row = next(line for line in text.splitlines() if f"attn_fwd<half, D=128, BM=128, BN={bn}>" in line)
    assert "0/0" in row and f"{(128 + 2 * bn) // 4} KB" in row
    assert "2×4w 17% regs+smem" in row and "2×4w 12% regs" in row  # the L4 by the L4 build's tile
    for name, line in [("ninja-compiler-not-found", "✗ attention.cuda.o failed: /bin/sh: 1: /opt/cuda-missing/"
                                                   "bin/nvcc: not found"),
                       ("ninja-link-missing-library", "✗ cockpit_attn.so failed: /usr/bin/ld: cannot find "
                                                      "-lcockpit_missing: No such file or directory")]:
        console.print(render_result("build", judge_build(failure(name), 1, {"arch": "8.9"}).result))
        shown = console.export_text()
        assert shown.splitlines()[0].rstrip() == line and "ld returned 1" not in shown


def test_an_import_check_without_torch_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cockpit.probes.build_probe import import_check

    (tmp_path / "ext.py").write_text("def forward(): pass\n")
    no_torch = REPO / "tests" / "fixtures" / "no_torch"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(no_torch), os.environ.get("PYTHONPATH")])))
    assert import_check("ext", tmp_path / "ext.py") == (
        False, f"torch does not import in {sys.executable}: install torch's CUDA build in this python, or start "
               "the cockpit from the environment that has it", None)


def test_on_a_gpu_the_runtimes_count_is_shown_with_the_limiter_when_the_table_agrees(
        kernel_build: tuple[str, list[str], Any]) -> None:
    """The GPU-present path with the CUDA runtime's answers recorded on an H100
    (tests/fixtures/gpu/capture_launch.sh): an sm_89 build on an H100 runs from PTX, so the
    runtime's numbers stand for sm_90 next to the L4's table."""
    arch, lines, _table = kernel_build
    if arch != "sm_89":
        pytest.skip("the recording is of the sm_89 build's kernels; an sm_90 build has the H100's kept D=128 tile")
    gpu = {"name": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "sms": 132, "max_warps_per_sm": 64}
    recorded = Path(__file__).parent / "fixtures" / "gpu" / "launch" / "launch-table-h100.jsonl"
    answered = [json.loads(line) for line in recorded.read_text().splitlines()]
    report = report_kernels(parse_ptxas(lines), {"kernels": answered, "gpu": gpu})
    row = next(r for r in report.rows if r["label"] == "attn_fwd<half, D=128, BM=128, BN=32>")
    here = [t for t in row["occupancy"] if t["source"] == "CUDA runtime"]
    assert [(t["gpu"], t["arch"], t["blocks_per_sm"], t["warps_per_sm"], t["fraction"], t["limiter"])
            for t in here] == [("H100 80GB HBM3", "sm_90", 2, 8, 0.125, "registers")]
    assert {t["arch"] for t in row["occupancy"]} == {"sm_89", "sm_90"} and report.notes == ()
    wrong = [dict(e, device=dict(e["device"], blocks_per_sm=3)) for e in answered]
    [note] = report_kernels(parse_ptxas(lines), {"kernels": wrong, "gpu": gpu}).notes[:1]
    assert note.startswith("the limits table gives ") and "where the CUDA runtime gives 3" in note


def test_a_kernel_missing_from_the_launch_table_is_a_warning_not_a_silence(
        kernel_build: tuple[str, list[str], Any]) -> None:
    arch, lines, table = kernel_build
    report = report_kernels(parse_ptxas(lines), {"kernels": table[1:], "gpu": None})
    assert [f.text for f in report.findings] == [
        f"attn_fwd_kernel<half, 64, 128, 128, 4, 2, false> ({arch}) is not in launch_info(): its shared "
        "memory per block and occupancy are unknown (csrc/README.md)"]


def test_the_h100_build_gate_recording_shows_each_kernel_as_launched() -> None:
    """`cockpit gate build --json` on a lent H100 (capture_launch.sh): dynamic shared memory as
    launched, the runtime's occupancy on the H100 and the L4's from its limits table."""
    gate = json.loads((Path(__file__).parent / "fixtures" / "gpu" / "launch" / "gate-build-h100.json").read_text())
    assert gate["status"] == "pass"
    rows = {k["label"]: k for k in gate["result"]["kernels"]}
    d128 = rows["attn_fwd<bf16, D=128, BM=128, BN=32, causal>"]
    assert (d128["dynamic_smem"], d128["smem_opt_in"], d128["registers"], d128["spill_stores"]) == (49152, False, 238, 0)
    by_gpu = {o["gpu"]: (o["blocks_per_sm"], o["warps_per_sm"], o["limiter"]) for o in d128["occupancy"]}
    assert by_gpu == {"H100 80GB HBM3": (2, 8, "registers"), "L4": (2, 8, "registers + shared memory")}
    assert "8 on this H100 80GB HBM3 (12%, registers)" in gate["summary"]


def test_a_cockpit_build_takes_its_own_archs_tile_from_the_tuned_file_alone(tmp_path: Path) -> None:
    """The build gate says its knobs come from the tuned file (COCKPIT_TUNED_FLAGS): with no winner
    passed for sm_90 the kernel runs the hand-picked tile there (deleting attention.tuned.json goes
    back to the declared values, whatever tuned_config.h still says), and the header still tells how
    an L4 build launches."""
    exe = tmp_path / "launch_table"
    out = subprocess.run(
        ["nvcc", "-std=c++17", "-O1", "-arch=sm_90", "-DCOCKPIT_TUNED_FLAGS=1", f"-I{REPO / 'csrc'}",
         str(REPO / "csrc" / "attention.cu"), str(FIXTURES / "launch_table_main.cpp"), "-o", str(exe)],
        capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    table = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True,
                           env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    d128 = next(e for e in map(json.loads, table.stdout.splitlines())
                if e["label"] == "attn_fwd<bf16, D=128, BM=128, BN=32>")
    assert d128["builds"]["sm_89"]["label"] == "attn_fwd<bf16, D=128, BM=128, BN=32>"
    assert d128["builds"]["sm_90"]["label"] == "attn_fwd<bf16, D=128, BM=128, BN=32>"
