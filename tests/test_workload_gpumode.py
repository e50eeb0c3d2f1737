"""A GPU MODE problem folder is a workload without editing its files.

workloads/gpumode/vectoradd_py is GPU MODE's pmpp_v2 vectoradd_py copied unchanged (SOURCE.md).
Its generate_input makes CUDA tensors, so no test calls it: the chain runs on CPU data built the
way generate_input builds it (A, B and the output buffer C, float16)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from cockpit.errors import CockpitError
from cockpit.probes.gpumode import check_verdict, gpumode_workload
from cockpit.workload.gpumode_task import read_task
from cockpit.workload.spec import NoBuild

GPUMODE = Path(__file__).resolve().parent.parent / "workloads" / "gpumode"
VECTORADD = GPUMODE / "vectoradd_py"
EXTRA = ["solutions/correct/submission_triton.py", "solutions/correct/submission_cuda_inline.py"]


@pytest.fixture(autouse=True)
def own_imports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The problem's `reference`, `task` and `utils` come and go with each test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    # ref_kernel's DeterministicContext sets it on the way out
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", "")
    saved = dict(sys.modules)
    yield
    roots = (str(GPUMODE), str(tmp_path))
    for name, module in list(sys.modules.items()):
        if saved.get(name) is not module and str(getattr(module, "__file__", "") or "").startswith(roots):
            del sys.modules[name]
    sys.modules.update({name: module for name, module in saved.items() if name not in sys.modules})


def vectoradd_data(size: int = 9) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(size)
    a = torch.randn(size, size, dtype=torch.float16, generator=gen)
    b = torch.randn(size, size, dtype=torch.float16, generator=gen)
    return a, b, torch.zeros(size, size, dtype=torch.float16)


def vectoradd(submissions: list[str] | None = None) -> Any:
    task = read_task(VECTORADD)
    return gpumode_workload(VECTORADD, task["tests"], task["benchmarks"],
                            submissions or task["submissions"])


# --- task.yml, read in the cockpit ------------------------------------------------------------

def test_the_task_yml_gives_the_test_and_benchmark_shapes_seeds_included() -> None:
    task = read_task(VECTORADD)

    assert len(task["tests"]) == 5 and len(task["benchmarks"]) == 5
    assert task["tests"][0] == {"size": 127, "seed": 4242}
    assert task["benchmarks"][-1] == {"size": 16384, "seed": 54352}
    assert task["submissions"] == ["submission.py"]
    assert task["lang"] == "py"
    assert task["description"].startswith("Implement a float16 vector addition kernel.")


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(VECTORADD, tmp_path / "vectoradd_py"))


def read_error(folder: Path) -> str:
    with pytest.raises(CockpitError) as caught:
        read_task(folder)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_folder_without_task_yml_is_named(copy: Path) -> None:
    (copy / "task.yml").unlink()
    assert read_error(copy).startswith(f"{copy / 'task.yml'}: not found")


def test_a_yaml_error_names_its_line(copy: Path) -> None:
    task = copy / "task.yml"
    lines = task.read_text().splitlines()
    broken = lines.index('  - {"size": 128, "seed": 5236}')
    lines[broken] = '  - {"size": 128, "seed": 5236'
    task.write_text("\n".join(lines) + "\n")

    message = read_error(copy)

    assert message.startswith(f"{task}:{broken + 2}: not valid YAML: ")  # found on the next line


@pytest.mark.parametrize("key", ["tests", "benchmarks"])
def test_a_task_without_its_shape_list_is_named(copy: Path, key: str) -> None:
    task = copy / "task.yml"
    task.write_text(task.read_text().replace(f"{key}:", "old_" + key + ":"))

    assert read_error(copy) == f"{task}: no `{key}:` list (shapes such as {{size: 127, seed: 4242}})"


def test_a_shape_that_is_not_a_mapping_is_named(copy: Path) -> None:
    task = copy / "task.yml"
    task.write_text(task.read_text().replace('  - {"size": 129, "seed": 1001}', "  - 129"))

    assert "`tests:` item 3 is 129" in read_error(copy)


def test_a_folder_without_a_submission_is_named(copy: Path) -> None:
    (copy / "submission.py").unlink()
    assert read_error(copy) == f"{copy}: no submission*.py; GPU MODE's submission.py defines custom_kernel(data)"


# --- the workload, built in the child ---------------------------------------------------------

def test_each_submission_file_is_a_candidate_named_by_its_stem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "triton", None)  # a box without Triton, whether this one has it or not
    workload = vectoradd(["submission.py", *EXTRA])

    assert list(workload.candidates) == ["submission", "submission_triton", "submission_cuda_inline"]
    assert workload.name == "vectoradd_py"
    assert isinstance(workload.build, NoBuild)
    # imported at their first call: Triton (absent here) and load_inline are not needed to describe it
    assert "gpumode_vectoradd_py_submission_triton" not in sys.modules
    with pytest.raises(ModuleNotFoundError, match="triton"):
        workload.candidates["submission_triton"](vectoradd_data())


def test_ref_kernel_is_the_oracle_and_the_timed_baseline() -> None:
    workload = vectoradd()

    assert workload.oracle is not None and workload.oracle.name == "ref_kernel"
    assert workload.baseline is not None and workload.baseline.name == "reference"
    assert [r.name for r in workload.references] == ["ref_kernel", "reference"]


def test_the_grids_are_the_task_shapes_and_name_shapes_by_size_and_seed() -> None:
    task = read_task(VECTORADD)
    workload = vectoradd()

    assert list(workload.test_grid) == task["tests"]
    assert list(workload.bench_grid) == task["benchmarks"]
    assert workload.shape_name(workload.test_grid[0]) == "size=127 seed=4242"
    assert workload.dtype_key is None
    assert workload.check.kind == "custom"


def test_inputs_are_generate_input_s_data_whole_with_the_task_seed_winning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    workload = vectoradd()
    asked: list[dict[str, Any]] = []

    def generate_input(**shape: Any) -> tuple[torch.Tensor, ...]:
        asked.append(shape)
        return vectoradd_data(shape["size"])

    monkeypatch.setattr(sys.modules["reference"], "generate_input", generate_input)

    inputs = workload.make_inputs(7, size=127, seed=4242)
    workload.make_inputs(7, size=128)

    assert asked == [{"size": 127, "seed": 4242}, {"size": 128, "seed": 7}]
    assert len(inputs) == 1 and len(inputs[0]) == 3  # (data,): A, B and the output buffer, one object


def test_the_submission_passes_gpu_mode_s_own_check_on_cpu() -> None:
    workload = vectoradd()
    inputs = (vectoradd_data(),)
    shape = {"size": 9, "seed": 9}

    ref = workload.oracle.fn(*inputs)
    out = workload.candidates["submission"](*inputs)

    assert ref is not out and ref.data_ptr() != inputs[0][2].data_ptr()
    assert torch.equal(out, inputs[0][0] + inputs[0][1])
    assert workload.check.fn(out, ref, shape, inputs) == (True, "check_implementation: pass")
    assert torch.equal(workload.baseline.fn(*inputs), ref)


def test_a_candidate_that_never_writes_the_output_buffer_fails() -> None:
    # ref_kernel writes the data's output buffer: judged on the data itself, the check would fill
    # the untouched buffer with the answer and compare it with itself.
    workload = vectoradd()
    inputs = (vectoradd_data(),)
    untouched = inputs[0][2]

    ok, what = workload.check.fn(untouched, workload.oracle.fn(*inputs), {"size": 9}, inputs)

    assert not ok
    assert what.startswith("mismatch found! custom implementation doesn't match reference:")


def test_a_candidate_returning_nothing_fails_with_what_check_implementation_raised() -> None:
    workload = vectoradd()
    inputs = (vectoradd_data(),)

    ok, what = workload.check.fn(None, workload.oracle.fn(*inputs), {"size": 9}, inputs)

    assert not ok and what.startswith("check_implementation raised AttributeError:")


@pytest.mark.parametrize(("verdict", "expected"), [
    ((True, ""), (True, "check_implementation: pass")),
    ((False, "mismatch found!"), (False, "mismatch found!")),
    ("", (True, "check_implementation: pass")),  # the first pmpp problems: a message, empty if good
    ("mismatch found!", (False, "mismatch found!")),
])
def test_both_of_gpu_mode_s_check_conventions_read_the_same(verdict: Any, expected: tuple[bool, str]) -> None:
    assert check_verdict(verdict) == expected


def test_another_problem_s_task_and_utils_do_not_stand_in_for_this_one_s(tmp_path: Path) -> None:
    vectoradd()  # its `task` and `utils` are imported now
    other = tmp_path / "other_py"
    other.mkdir()
    (tmp_path / "utils.py").write_text('WHO = "other utils"\n')
    (other / "task.py").write_text('WHO = "other task"\n')
    (other / "submission.py").write_text("def custom_kernel(data):\n    return data\n")
    (other / "reference.py").write_text(
        "import task\nimport utils\n\n"
        "def generate_input(size, seed):\n    return (task.WHO, utils.WHO, size, seed)\n\n"
        "def ref_kernel(data):\n    return data\n\n"
        "def check_implementation(data, output):\n    return data == output, ''\n")

    workload = gpumode_workload(other, [{"size": 1, "seed": 2}], [{"size": 3, "seed": 4}], ["submission.py"])
    (data,) = workload.make_inputs(0, size=1, seed=2)

    assert data == ("other task", "other utils", 1, 2)
    assert workload.check.fn(workload.candidates["submission"](data), None, {}, (data,)) == (
        True, "check_implementation: pass")
