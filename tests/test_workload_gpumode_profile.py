"""A GPU MODE folder gets a profile, a byte/FLOP model from cockpit.toml and submissions picked by
path, and `workload show` says what such a folder can take.

The profile is the first candidate's `custom_kernel` on the largest benchmark shape, every kernel
of ONE call: ncu starts with profiling off and the target opens the CUDA profiler's range around
its last call only. The recordings under tests/fixtures/gpu/ncu-gpumode/ were made on an H200
(tests/fixtures/gpu/capture_gpumode.sh): vectoradd's submission.py (torch's add, one kernel) and
its solutions/correct/submission_triton.py (Triton's add_kernel)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cockpit.cli.workload import check_text, describe_lines
from cockpit.errors import CockpitError
from cockpit.gates.gate import GateContext
from cockpit.gates.profile.gate import CLOCK_NOTE, ProfileGate, judge_profile
from cockpit.gates.profile.result import ProfileResult
from cockpit.probes import profile_probe
from cockpit.probes.gpumode import gpumode_workload
from cockpit.probes.workload_load import load_workload, manifest_json
from cockpit.workload.gpumode_task import read_task
from cockpit.workload.manifest import Manifest, manifest_from_json
from cockpit.workload.spec import allclose, rel_l2

ROOT = Path(__file__).resolve().parent.parent
GPUMODE = ROOT / "workloads" / "gpumode"
VECTORADD = GPUMODE / "vectoradd_py"
RECORDED = Path(__file__).parent / "fixtures" / "gpu" / "ncu-gpumode"
LARGEST = "size=16384 seed=54352"


@pytest.fixture(autouse=True)
def own_imports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The problem's `reference`, `task` and `utils` come and go with each test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    saved = dict(sys.modules)
    yield
    roots = (str(GPUMODE), str(tmp_path))
    for name, module in list(sys.modules.items()):
        if saved.get(name) is not module and str(getattr(module, "__file__", "") or "").startswith(roots):
            del sys.modules[name]
    sys.modules.update({name: module for name, module in saved.items() if name not in sys.modules})


def workload_from(folder: Path, **config: Any) -> Any:
    """The folder as the child loads it, from the task the cockpit reads (cockpit.toml's keys)."""
    task = read_task(folder, **config)
    return gpumode_workload(folder, task["tests"], task["benchmarks"], task["submissions"],
                            bytes=task["bytes"], flops=task["flops"])


def manifest_of(workload: Any, source: str = "gpumode:gpumode/vectoradd_py") -> Manifest:
    return manifest_from_json(manifest_json(workload, source))


# --- the profile ------------------------------------------------------------------------------

def test_the_folder_profiles_its_first_candidate_on_the_largest_benchmark_shape_every_kernel() -> None:
    manifest = manifest_of(workload_from(VECTORADD))

    assert manifest.profile is not None
    assert manifest.profile.kernel == ""  # no regex: every kernel of the call
    assert manifest.profile.shape.name == LARGEST
    assert manifest.profile.candidate == "submission"


def test_the_largest_shape_is_the_workload_s_own_size_order_the_byte_model_s_when_given() -> None:
    # a (made up) model that counts fewer bytes for a larger size: the size order follows it
    manifest = manifest_of(workload_from(VECTORADD, bytes="1e12 / size"))

    assert manifest.profile is not None and manifest.profile.shape.name == "size=1024 seed=31232"


def test_the_profile_follows_the_selected_candidate(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(GPUMODE, ws / "gpumode")
    task = read_task(ws / "gpumode" / "vectoradd_py", ["solutions/correct/submission_triton.py", "submission"])

    workload = load_workload("gpumode:gpumode/vectoradd_py", ws, task, task["selected"])
    manifest = manifest_of(workload)

    assert manifest.candidates == ("submission_triton", "submission")
    assert manifest.profile is not None and manifest.profile.candidate == "submission_triton"


def test_with_no_kernel_named_ncu_profiles_the_ranged_call_and_not_by_name() -> None:
    assert profile_probe.ncu_filter("", 3) == ["--profile-from-start", "off", "--launch-count",
                                               str(profile_probe.MAX_KERNELS)]
    # a workload that names its kernel keeps the name filter and the launches it skips
    assert profile_probe.ncu_filter("attn", 3) == ["--kernel-name", "regex:attn", "--launch-skip", "3",
                                                   "--launch-count", "1"]


def fake_ncu(tmp_path: Path) -> Path:
    """Stands in for Nsight Compute: notes its arguments, runs the application, profiles nothing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ncu = bin_dir / "ncu"
    ncu.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "ncu-args"}\n'
                   'echo "==WARNING== No kernels were profiled."\n')
    ncu.chmod(0o755)
    return bin_dir


def test_the_probe_asks_the_folder_what_to_profile_and_says_when_no_kernel_ran(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(GPUMODE, ws / "gpumode")
    (ws / "task.json").write_text(json.dumps(read_task(ws / "gpumode" / "vectoradd_py")))
    monkeypatch.setenv("PATH", f"{fake_ncu(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    target = [sys.executable, str(ROOT / "cockpit" / "probes" / "workload_probe.py"), "profile",
              "--workspace", str(ws), "--workload", "gpumode:gpumode/vectoradd_py", "--task", "task.json"]
    out = tmp_path / "result.json"

    code = profile_probe.main(["--workspace", str(ws), "--out", str(out), "--report", str(tmp_path / "r"),
                               "--", *target])

    args = (tmp_path / "ncu-args").read_text().split()
    assert "--kernel-name" not in args and "--launch-skip" not in args
    assert args[args.index("--profile-from-start") + 1] == "off"
    result = json.loads(out.read_text())
    assert code == 1 and result["error"] == "no match" and result["every_kernel"] is True
    assert result["shape"] == LARGEST and result["candidate"] == "submission"
    said = capsys.readouterr().out
    assert f"every kernel of one call of submission on {LARGEST}" in said
    last = [line for line in said.splitlines() if line.startswith("cockpit-profile: ")][-1]
    assert last.startswith("cockpit-profile: no kernel ran in the profiled call of submission: ")

    ctx = GateContext(ws, ws, "001-profile")
    ctx.result_path.parent.mkdir(parents=True)
    shutil.copy(out, ctx.result_path)
    verdict = ProfileGate().verdict(ctx, code, [last])
    assert verdict.status == "fail" and verdict.summary == last.removeprefix("cockpit-profile: ")


def test_the_recorded_profile_of_torch_s_add_is_memory_bound() -> None:
    verdict = judge_profile((RECORDED / "vectoradd-submission.csv").read_text(),
                            ProfileResult(clock_note=CLOCK_NOTE["base"], shape=LARGEST), 0.6255)
    assert verdict.status == "pass"
    assert verdict.summary.startswith("memory-bound: memory 91.1 % vs compute 21.4 % of peak")
    [kernel] = verdict.result.to_json()["kernels"]
    assert "vectorized_elementwise_kernel" in kernel["name"]
    # the inputs' randn kernels and the warm-up calls were outside ncu's range: one launch, the call's
    log = (RECORDED / "vectoradd-submission.log").read_text()
    assert "--profile-from-start off" in log and "the last in the profiler range" in log


def two_launches() -> str:
    """The two recordings as one report of two launches (a call that launches two kernels)."""
    first = list(csv.reader(io.StringIO((RECORDED / "vectoradd-submission.csv").read_text())))
    second = list(csv.DictReader(io.StringIO((RECORDED / "vectoradd-triton.csv").read_text())))
    header = first[0]
    row = [second[1].get(column, "") for column in header]  # [0] is the units row
    row[header.index("ID")] = "1"
    text = io.StringIO()
    csv.writer(text, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([*first[:3], row])
    return text.getvalue()


def test_several_kernels_in_the_call_the_summary_names_the_longest_and_its_share() -> None:
    verdict = judge_profile(two_launches(), ProfileResult(clock_note=CLOCK_NOTE["base"]), None)

    assert verdict.status == "pass"
    assert verdict.summary.startswith("2 kernels; the longest, add_kernel (#2, 61 % of their time): latency: ")
    assert [k["name"] for k in verdict.result.to_json()["kernels"]][1] == "add_kernel"


# --- [workload] bytes and flops: the model --------------------------------------------------

def test_the_byte_and_flop_formulas_count_every_shape() -> None:
    manifest = manifest_of(workload_from(VECTORADD, bytes="3 * size * size * 2", flops="size ** 2"))

    assert [s.bytes for s in manifest.bench_grid] == [6.0 * n * n for n in (1024, 2048, 4096, 8192, 16384)]
    assert manifest.bench_grid[0].flops == 1024.0 ** 2
    assert manifest.test_grid[0].bytes == 6.0 * 127 * 127
    assert "model      FLOPs and bytes per shape" in "\n".join(describe_lines(manifest))


def test_the_task_carries_the_formulas_to_the_child_and_none_by_default() -> None:
    assert read_task(VECTORADD)["bytes"] is None and read_task(VECTORADD)["flops"] is None
    task = read_task(VECTORADD, bytes="3 * size * size * 2")
    assert task["bytes"] == "3 * size * size * 2" and json.loads(json.dumps(task)) == task


@pytest.mark.parametrize(("formula", "said"), [
    ("3 * size * N", "'3 * size * N' reads N, which the shape {size: 127, seed: 4242} does not have"),
    ("__import__('os').system('true')", "__import__('os').system('true'): only min(a, b, ...) and max"),
    ("size.bit_length()", "only min(a, b, ...) and max(a, b, ...) may be called"),
    ("size / (seed - seed)", "divides by zero on {size: 127, seed: 4242}"),
    ("10 ** 10 ** size", "overflows on {size: 127, seed: 4242}"),
    ("size - 1000", "is -873.0 on {size: 127, seed: 4242}, not a count"),
    ("size *", "does not parse (invalid syntax"),
])
def test_a_formula_that_does_not_count_is_refused_in_one_line_naming_the_key(formula: str, said: str) -> None:
    with pytest.raises(CockpitError) as err:
        read_task(VECTORADD, bytes=formula)

    message = str(err.value)
    assert message.startswith("cockpit.toml [workload] bytes: ") and said in message
    assert "task.yml's shape keys: size, seed" in message and "\n" not in message


def test_a_formula_is_arithmetic_over_the_shape_and_nothing_else() -> None:
    from cockpit.workload.formula import MAX_CHARS, FormulaError, parse_formula

    f = parse_formula(" max(M, N) * K // 2 + M % 3 - 2 ** 3 + (-1) * -1 ")
    assert f.names == {"M", "N", "K"} and f(M=4, N=8, K=3, dtype="fp16") == 8 * 3 // 2 + 1 - 8 + 1
    for text in ("size.real", "sizes[0]", "lambda: 1", "'fp16'", "True", "[size]", "size if size else 1",
                 "size < 2", "min", "min(*sizes)", "max(key=size)", "f(size)", "x" * (MAX_CHARS + 1), ""):
        with pytest.raises(FormulaError):
            parse_formula(text)
    with pytest.raises(FormulaError) as err:
        parse_formula("2 * dtype")(dtype="fp16")
    assert str(err.value) == "dtype is 'fp16' on {dtype: 'fp16'}, not a number"


# --- submissions selected by path -----------------------------------------------------------

def test_a_solution_is_selected_by_its_path_and_named_by_its_stem() -> None:
    task = read_task(VECTORADD, ["solutions/correct/submission_triton.py"])

    assert task["submissions"] == ["solutions/correct/submission_triton.py"]
    assert task["selected"] == ["submission_triton"]
    assert list(workload_from(VECTORADD, candidates=["solutions/correct/submission_triton.py"]).candidates) == [
        "submission_triton"]


def test_a_submission_beside_task_yml_is_selected_by_its_stem_and_order_is_kept() -> None:
    task = read_task(VECTORADD, ["solutions/correct/submission_cuda_inline.py", "submission"])

    assert task["submissions"] == ["solutions/correct/submission_cuda_inline.py", "submission.py"]
    assert task["selected"] == ["submission_cuda_inline", "submission"]
    assert read_task(VECTORADD)["submissions"] == ["submission.py"] and read_task(VECTORADD)["selected"] == []


def test_two_selected_files_with_one_stem_are_refused_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "vectoradd_py"
    shutil.copytree(VECTORADD, folder)
    (folder / "solutions" / "wrong").mkdir()
    (folder / "solutions" / "wrong" / "submission.py").write_text("def custom_kernel(data):\n    return data\n")

    with pytest.raises(CockpitError) as err:
        read_task(folder, ["submission", "solutions/wrong/submission.py"])

    assert str(err.value) == ("[workload] candidates: submission.py and solutions/wrong/submission.py are both "
                              "named 'submission' (a candidate is named by its file stem); select one of them")


@pytest.mark.parametrize(("name", "said"), [
    ("../eval.py", "[workload] candidates: ../eval.py: outside the problem folder"),
    ("/etc/passwd", "[workload] candidates: /etc/passwd: outside the problem folder"),
    ("solutions/correct/nope.py", "[workload] candidates: solutions/correct/nope.py: no such .py file in"),
    ("nope", "[workload] candidates: no submission 'nope' in"),
    ("solutions/correct/submission_triton.py ",  # a stray space is a name no file has
     "[workload] candidates: solutions/correct/submission_triton.py : no such .py file"),
])
def test_a_selection_that_names_no_submission_of_the_folder_is_one_line(name: str, said: str) -> None:
    with pytest.raises(CockpitError) as err:
        read_task(VECTORADD, [name])

    assert str(err.value).startswith(said) and "\n" not in str(err.value)
    if "outside" not in said:  # what could be meant is listed
        assert "by path: solutions/correct/submission_cuda_inline.py, solutions/correct/submission_triton.py" in str(
            err.value)


# --- workload show ----------------------------------------------------------------------------

def test_show_never_suggests_a_profile_or_module_code_to_a_folder() -> None:
    manifest = manifest_of(workload_from(VECTORADD))
    text = "\n".join(describe_lines(manifest))

    assert "Profile(" not in text and "add profile" not in text
    assert f"profile    every kernel of one call of submission on {LARGEST} (ncu over that call only)" in text
    assert "check      check_implementation (the folder's own reference.py)" in text
    assert ('model      no FLOP or byte count: times only (for GB/s and TFLOP/s, set [workload] bytes and '
            "flops in cockpit.toml: formulas over the shape's size, seed") in text

    from dataclasses import replace
    text = "\n".join(describe_lines(replace(manifest, profile=None)))
    assert "Profile(" not in text and "profile    none" in text


def test_show_still_suggests_a_profile_to_a_module_that_declares_none() -> None:
    from dataclasses import replace
    manifest = replace(manifest_of(workload_from(VECTORADD), source="workloads/softmax.py"), profile=None)

    assert ("profile    none declared (add profile=Profile(kernel=..., shape=...) to the module's Workload)"
            in describe_lines(manifest))


@pytest.mark.parametrize(("check", "said"), [
    (allclose(atol=1e-5, rtol=0), "allclose (atol 1e-05, rtol 0)"),
    (allclose(atol={"fp16": 1e-3, "fp32": 1e-5}, rtol={"fp16": 1e-3, "fp32": 1e-6}),
     "allclose (fp16: atol 0.001, rtol 0.001; fp32: atol 1e-05, rtol 1e-06)"),
    (allclose(atol={"*": 1e-4}, rtol={"bf16": 1e-2}), "allclose (atol 0.0001, rtol 0.01; bf16: atol 0.0001, rtol 0.01)"),
    (rel_l2(), "rel_l2 (0.01)"),
    (rel_l2({"fp16": 1e-2, "fp32": 1e-4}), "rel_l2 (fp16 0.01, fp32 0.0001)"),
])
def test_a_check_shows_its_tolerances_atol_and_rtol_both(check: Any, said: str) -> None:
    assert check_text({"kind": check.kind, "tolerance": dict(check.tolerance), "atol": dict(check.atol)}) == said
