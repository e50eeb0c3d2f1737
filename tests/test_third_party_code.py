"""Third-party code as it is: a tutorial script's kernels taken without running its tests and
benchmark at import (from_script), and a `src/` layout repository importable from its root."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cockpit.probes.workload_load import WorkloadLoadError, load_workload
from cockpit.workload.script import from_script

TUTORIAL = '''"""A tutorial: its kernel, then its test and its benchmark at the top level."""
import math
import os

DEVICE = os.environ["NO_SUCH_GPU"]   # reads the driver at import: fails on a box without one
BLOCK = 1024
SCALES = {"fp16": 2.0, "fp32": 1.0}


def _kernel(x, scale):
    return [v * scale for v in x]


class Norm:
    @staticmethod
    def apply(x):
        return _kernel(x, 1 / math.sqrt(sum(v * v for v in x)))


def test_norm():
    raise AssertionError("the tutorial's own test ran")


test_norm()
for size in (1, 2):
    open("benchmark-ran", "w").write("yes")

if __name__ == "__main__":
    raise SystemExit("main ran")
'''


@pytest.fixture(autouse=True)
def own_imports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("COCKPIT_WORKSPACE", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    saved = dict(sys.modules)
    yield
    for name in [n for n in sys.modules if n not in saved]:
        del sys.modules[name]


def test_a_tutorials_kernels_are_taken_without_its_tests_or_benchmark(tmp_path: Path) -> None:
    (tmp_path / "third_party").mkdir()
    (tmp_path / "third_party" / "tutorial.py").write_text(TUTORIAL)
    tutorial = from_script("third_party/tutorial.py", "Norm", "_kernel")
    assert tutorial.Norm.apply([3.0, 4.0]) == [0.6000000000000001, 0.8]
    assert tutorial.BLOCK == 1024 and tutorial.SCALES["fp16"] == 2.0  # constants that call nothing kept
    assert not (tmp_path / "benchmark-ran").exists()
    assert [s.split(":")[0] for s in tutorial.skipped] == ["5", "24", "25", "28"]
    with pytest.raises(AttributeError, match=r"tutorial.py defines no 'DEVICE' outside its top-level code "
                                             r"\(left out: 5: DEVICE = os.environ\[\"NO_SUCH_GPU\"\]"):
        tutorial.DEVICE  # noqa: B018
    with pytest.raises(AttributeError,
                       match=re.escape("tutorial.py defines no 'layer_norm' outside its top-level code")):
        from_script("third_party/tutorial.py", "layer_norm")


def test_a_workload_module_using_from_script_loads_in_the_gates_child(tmp_path: Path) -> None:
    (tmp_path / "third_party").mkdir()
    (tmp_path / "third_party" / "tutorial.py").write_text(TUTORIAL)
    (tmp_path / "wl.py").write_text(
        "from cockpit.workload import Reference, Workload, axes\n"
        "from cockpit.workload.script import from_script\n"
        "t = from_script('third_party/tutorial.py', 'Norm')\n"
        "WORKLOAD = Workload(name='norm', candidates={'ours': t.Norm.apply},\n"
        "    references=(Reference('ref', lambda x: x, oracle=True),), make_inputs=lambda seed, n: ([1.0] * n,),\n"
        "    test_grid=axes(n=[2]), bench_grid=axes(n=[4]))\n")
    w = load_workload("wl.py", tmp_path)
    assert w.candidates["ours"]([3.0, 4.0]) == [0.6000000000000001, 0.8]


def test_a_src_layout_is_importable_from_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "src" / "mykernels").mkdir(parents=True)
    (tmp_path / "src" / "mykernels" / "__init__.py").write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "workloads").mkdir()
    (tmp_path / "workloads" / "wl.py").write_text(
        "from mykernels import double\n"
        "from cockpit.workload import Reference, Workload, axes\n"
        "WORKLOAD = Workload(name='double', candidates={'ours': double},\n"
        "    references=(Reference('ref', lambda x: 2 * x, oracle=True),), make_inputs=lambda seed, n: (n,),\n"
        "    test_grid=axes(n=[2]), bench_grid=axes(n=[4]))\n")
    assert load_workload("workloads/wl.py", tmp_path).candidates["ours"](21) == 42


def test_a_script_whose_top_level_fails_is_one_line_at_its_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "wl.py").write_text("import os\nDEVICE = os.environ['NO_SUCH_GPU']\nWORKLOAD = None\n")
    with pytest.raises(WorkloadLoadError, match=r"^wl.py:2: KeyError: 'NO_SUCH_GPU'$"):
        load_workload("wl.py", tmp_path)


def test_a_kernel_that_names_no_profile_is_profiled_whole_on_its_largest_bench_shape(tmp_path: Path) -> None:
    # a Liger-style Triton softmax as its authors wrote it: no Profile, no kernel regex
    (tmp_path / "wl.py").write_text(
        "from cockpit.workload import Reference, Workload, axes\n"
        "WORKLOAD = Workload(name='softmax', candidates={'ours': lambda x: x},\n"
        "    references=(Reference('ref', lambda x: x, oracle=True),), make_inputs=lambda seed, M, N: (M * N,),\n"
        "    test_grid=axes(M=[2], N=[3]), bench_grid=axes(M=[4096], N=[8192, 1024, 4096]))\n")
    w = load_workload("wl.py", tmp_path)
    assert w.profile is not None
    assert (w.profile.kernel, dict(w.profile.shape), w.profile.candidate) == ("", {"M": 4096, "N": 8192}, None)
    (tmp_path / "narrow.py").write_text(
        "from cockpit.workload import Profile, Reference, Workload, axes\n"
        "WORKLOAD = Workload(name='softmax', candidates={'ours': lambda x: x},\n"
        "    references=(Reference('ref', lambda x: x, oracle=True),), make_inputs=lambda seed, M: (M,),\n"
        "    test_grid=axes(M=[2]), bench_grid=axes(M=[4096]), profile=Profile(kernel='softmax', shape={'M': 64}))\n")
    declared = load_workload("narrow.py", tmp_path).profile
    assert declared is not None and (declared.kernel, dict(declared.shape)) == ("softmax", {"M": 64})
