"""A KernelBench problem file is a workload as it is: `[workload] kernelbench = "PROBLEM.py"` and the
engineer's ModelNew beside it, zero lines of adapter. Weights are paired by seed as KernelBench pairs
them, Model is the baseline and (in float64, same weights) the oracle, the problem's own shape is
timed and correctness adds it scaled down. The chain runs here on CPU tensors with torch-written
ModelNew files (the shipped answers are Triton: the GPU visit's); the problems are the shipped ones
in workloads/kernelbench/."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cockpit.cli.init import init
from cockpit.config import load_config
from cockpit.errors import CockpitError
from cockpit.gates.correctness.gate import judge_correctness
from cockpit.gates.correctness.result import read_checked
from cockpit.probes.kernelbench import ProblemError, kernelbench_workload, scaled_down
from cockpit.probes.workload.check import correctness
from cockpit.probes.workload_load import WorkloadLoadError, load_workload, manifest_json
from cockpit.workload.describe import model_new_files

SHIPPED = Path(__file__).resolve().parent.parent / "workloads" / "kernelbench"

SOFTMAX_NEW = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        e = torch.exp(x - x.max(dim=1, keepdim=True).values)
        return e / e.sum(dim=1, keepdim=True)
'''

GEMM_NEW = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        h = torch.addmm(self.gemm.bias, x, self.gemm.weight.t()) * self.scale{drift}
        return 0.5 * h * (1 + torch.erf(h * 0.7071067811865476))
'''


@pytest.fixture(autouse=True)
def own_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sys, "path", list(sys.path))
    saved = dict(sys.modules)
    yield
    for name in [n for n in sys.modules if n.startswith("kernelbench_") and n not in saved]:
        del sys.modules[name]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    shutil.copytree(SHIPPED, tmp_path / "kb", ignore=shutil.ignore_patterns("*_new.py"))
    (tmp_path / "kb" / "row_softmax_new.py").write_text(SOFTMAX_NEW)
    (tmp_path / "kb" / "gemm_scale_gelu_new.py").write_text(GEMM_NEW.format(drift=""))
    return tmp_path


def checked(w, shapes):  # type: ignore[no-untyped-def]
    rows, ok = correctness(w, shapes, lambda s: {}, lambda line: None)
    return ok, judge_correctness(read_checked({"rows": rows, "planned": len(shapes) * len(w.candidates)})).summary


def test_a_level_1_problem_is_read_as_it_is_its_own_shape_timed_and_scaled_for_correctness(ws: Path) -> None:
    problem = ws / "kb" / "row_softmax.py"
    w = kernelbench_workload(problem, [problem.with_name("row_softmax_new.py")], device="cpu")
    assert list(w.candidates) == ["row_softmax_new"]
    assert [r.name for r in w.references] == ["fp64", "Model"] and w.baseline is not None
    assert w.bench_grid == ({"batch_size": 4096, "dim": 393216},)  # the problem's own shape
    assert w.test_grid == ({"batch_size": 128, "dim": 12288}, {"batch_size": 129, "dim": 12289})
    assert w.bytes is not None and w.bytes(batch_size=4096, dim=393216) == 2 * 4096 * 393216 * 4  # in + out
    assert w.profile is not None and (w.profile.kernel, dict(w.profile.shape)) == ("", w.bench_grid[0])
    ok, summary = checked(w, list(w.test_grid))
    assert ok, summary
    assert summary.startswith("all 2/2 checks correct on 3 rounds of fresh inputs")


def test_a_level_2_problems_weights_are_paired_by_seed_and_a_wrong_answer_fails(ws: Path) -> None:
    problem = ws / "kb" / "gemm_scale_gelu.py"
    honest = [{"batch_size": 8, "in_features": 64, "out_features": 32}]
    w = kernelbench_workload(problem, [problem.with_name("gemm_scale_gelu_new.py")], device="cpu",
                             test_sizes=honest)
    ok, summary = checked(w, list(w.test_grid))
    assert ok, summary  # the same weights: ModelNew made after the same seed as Model
    (ws / "kb" / "drifted.py").write_text(GEMM_NEW.format(drift=" * 1.05"))
    w = kernelbench_workload(problem, [ws / "kb" / "drifted.py"], device="cpu", test_sizes=honest)
    ok, summary = checked(w, list(w.test_grid))
    assert not ok and summary.startswith("FAILS at drifted batch_size=8 in_features=64 out_features=32: outside atol 0.01")


def test_the_scaled_shapes_scale_sizes_never_parameters() -> None:
    own = {"batch_size": 1024, "in_features": 8192, "out_features": 8192, "max_dim": 1, "kernel_size": 3}
    small, odd = scaled_down(own)
    assert small == {"batch_size": 32, "in_features": 256, "out_features": 256, "max_dim": 1, "kernel_size": 3}
    assert odd == {"batch_size": 33, "in_features": 257, "out_features": 257, "max_dim": 1, "kernel_size": 3}


def test_the_gates_child_loads_it_by_name_and_describes_it_without_a_gpu(ws: Path) -> None:
    task = {"model_new": ["kb/row_softmax_new.py"], "test_sizes": [], "bench_sizes": []}
    w = load_workload("kernelbench:kb/row_softmax.py", ws, task)
    manifest = manifest_json(w, "kernelbench:kb/row_softmax.py")
    assert manifest["bench_grid"][0]["name"] == "batch_size=4096 dim=393216"
    assert manifest["bench_grid"][0]["bytes"] == 2 * 4096 * 393216 * 4
    assert manifest["candidates"] == ["row_softmax_new"] and manifest["check"]["kind"] == "allclose"


def test_the_cockpit_finds_modelnew_beside_the_problem_or_says_what_to_write(ws: Path) -> None:
    (ws / "cockpit.toml").write_text('[workload]\nkernelbench = "kb/row_softmax.py"\n')
    assert model_new_files(ws, load_config(ws)) == ["kb/row_softmax_new.py"]
    (ws / "kb" / "row_softmax_new.py").unlink()
    (ws / "kb" / "gemm_scale_gelu_new.py").unlink()
    with pytest.raises(CockpitError, match=r"no file beside it defines class ModelNew; name yours with "
                                           r'model_new = "kb/row_softmax_new.py"'):
        model_new_files(ws, load_config(ws))
    (ws / "kb" / "mine.py").write_text(SOFTMAX_NEW)
    assert model_new_files(ws, load_config(ws)) == ["kb/mine.py"]
    (ws / "cockpit.toml").write_text('[workload]\nkernelbench = "kb/row_softmax.py"\nmodel_new = "kb/x.py"\n')
    with pytest.raises(CockpitError, match=r"model_new = 'kb/x\.py': no such file"):
        model_new_files(ws, load_config(ws))


@pytest.mark.parametrize("body,said", [
    ("import torch\ndef get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n",
     "bad.py: defines no Model; a KernelBench problem has class Model, get_inputs() and get_init_inputs()"),
    ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return x\n"
     "n = 64\ndef get_inputs():\n    raise ValueError('no data')\ndef get_init_inputs():\n    return []\n",
     "bad.py:8: ValueError: no data"),
    ("import torch\nx = 1 / 0\n", "bad.py:2: ZeroDivisionError: division by zero"),
])
def test_a_broken_problem_is_one_line_naming_its_file_and_line(ws: Path, body: str, said: str) -> None:
    (ws / "kb" / "bad.py").write_text(body)
    with pytest.raises((ProblemError, WorkloadLoadError)) as caught:
        w = load_workload("kernelbench:kb/bad.py", ws, {"model_new": ["kb/row_softmax_new.py"]})
        w.make_inputs(0, **w.test_grid[0]) if w.test_grid else w.make_inputs(0, **w.bench_grid[0])
    assert str(caught.value) == said


def test_cockpit_init_reads_the_problem_as_it_is(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(dir=ws, force=False, workload="kernelbench=kb/row_softmax.py", name=None)
    assert init(args) == 0
    config = load_config(ws)
    assert config.workload.kernelbench == "kb/row_softmax.py" and config.workload.source == "kernelbench:kb/row_softmax.py"
    out = capsys.readouterr().out
    assert "fill in" not in out and "cockpit workload show" in out
    with pytest.raises(CockpitError, match="kernelbench=FILE: FILE is a KernelBench problem inside the workspace"):
        init(argparse.Namespace(dir=ws, force=True, workload="kernelbench=../elsewhere.py", name=None))


# `cockpit init` on a problem with no answer beside it: PROBLEM_new.py, its Model as a ModelNew -------

NETWORK = '''
import torch
import torch.nn as nn
open(__file__ + ".ran", "w").close()  # run, not read: the cockpit must never do this

EPS = 1e-5
dim = 96


def scaled(x, by):
    return x * by


class Block(nn.Module):
    def __init__(self, dim):  # a parameter named like the global: no read of it
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.relu(scaled(self.proj(x), 0.5)) + EPS


class Model(nn.Module):
\tdef __init__(self, dim, depth):
\t\tsuper(Model, self).__init__()
\t\tself.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])

\tdef forward(self, x):
\t\t"""A stack of blocks."""
\t\treturn self.blocks(x)


batch_size = 64


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [dim, 3]
'''


def bare(ws: Path) -> Path:
    """The shipped problems without their answers."""
    for answer in (ws / "kb").glob("*_new.py"):
        answer.unlink()
    return ws


def test_init_without_an_answer_writes_a_model_new_that_runs_and_passes_at_once(
        ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cockpit.cli import main

    bare(ws)
    assert main(["init", str(ws), "--workload", "kernelbench=kb/gemm_scale_gelu.py"]) == 0
    out = capsys.readouterr().out
    answer = ws / "kb" / "gemm_scale_gelu_new.py"
    assert f"{answer}\n" in out and "(kb/gemm_scale_gelu_new.py: class ModelNew, a copy of Model" in out
    assert "your kernel goes in kb/gemm_scale_gelu_new.py" in out
    text = answer.read_text()
    assert "class ModelNew(nn.Module):" in text and "class Model(" not in text
    assert "def __init__(self, in_features, out_features, scale):" in text  # Model's constructor
    forward = text[text.index("    def forward(self, x):"):]
    assert forward.splitlines()[1] == "        # YOUR KERNEL GOES HERE. This forward is Model's: ModelNew passes correctness as it is."
    assert "load_inline(" in text and "triton.cdiv" in text  # where a kernel goes, sketched
    assert "get_inputs" not in text and "batch_size" not in text  # the problem's, not the answer's
    problem = ws / "kb" / "gemm_scale_gelu.py"
    honest = [{"batch_size": 8, "in_features": 64, "out_features": 32}]
    ok, summary = checked(kernelbench_workload(problem, [answer], device="cpu", test_sizes=honest), honest)
    assert ok, summary  # a copy of the reference: correct before the engineer changes a line
    assert main(["--workspace", str(ws), "workload", "show"]) == 0  # accepted as written
    assert "candidates gemm_scale_gelu_new" in capsys.readouterr().out
    answer.write_text(GEMM_NEW.format(drift=""))  # the engineer's kernel
    assert main(["init", str(ws), "--force", "--workload", "kernelbench=kb/gemm_scale_gelu.py"]) == 0
    assert answer.read_text() == GEMM_NEW.format(drift="")  # never overwritten


def test_the_starter_reads_the_problem_never_runs_it_and_copies_what_model_uses(ws: Path) -> None:
    from cockpit.workload.model_new import model_new_starter

    problem = ws / "kb" / "network.py"
    problem.write_text(NETWORK)
    answer = problem.with_name("network_new.py")
    answer.write_text(model_new_starter(problem.read_text(), problem.name))
    assert not problem.with_name("network.py.ran").exists()  # read with ast: nothing of it ran
    text = answer.read_text()
    assert "super(ModelNew, self).__init__()" in text  # every Model the class names, renamed
    assert "class Block(nn.Module):" in text and "def scaled(" in text and "EPS = 1e-5" in text
    assert "dim = 96" not in text and "batch_size" not in text  # read by get_inputs only
    assert '\t\t"""A stack of blocks."""\n\t\t# YOUR KERNEL GOES HERE.' in text  # its own tabs
    w = kernelbench_workload(problem, [answer], device="cpu", test_sizes=[{"batch_size": 5, "dim": 24}])
    ok, summary = checked(w, list(w.test_grid))
    assert ok, summary


@pytest.mark.parametrize("body,said", [
    ("import torch\ndef get_inputs():\n    return []\n",
     "kb/bad.py: defines no class Model; a KernelBench problem has class Model"),
    ("class Model(:\n    pass\n", "kb/bad.py:1: does not parse"),
])
def test_a_problem_with_no_model_to_start_from_stops_init_before_it_writes(
        ws: Path, capsys: pytest.CaptureFixture[str], body: str, said: str) -> None:
    from cockpit.cli import main

    (bare(ws) / "kb" / "bad.py").write_text(body)
    assert main(["init", str(ws), "--workload", "kernelbench=kb/bad.py"]) == 2
    assert capsys.readouterr().err.startswith(f"cockpit: {said}")
    assert not (ws / "cockpit.toml").exists() and not (ws / "kb" / "bad_new.py").exists()


def test_a_problem_new_file_without_model_new_is_left_as_it_is_and_said(
        ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare(ws)
    mine = ws / "kb" / "row_softmax_new.py"
    mine.write_text("# started on a plane, nothing yet\n")
    assert init(argparse.Namespace(dir=ws, force=False, workload="kernelbench=kb/row_softmax.py", name=None)) == 0
    assert mine.read_text() == "# started on a plane, nothing yet\n"
    assert ("(kb/row_softmax_new.py is there already and defines no class ModelNew: left as it is; your "
            "ModelNew goes in it)") in capsys.readouterr().out
