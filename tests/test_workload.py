"""Any kernel through every gate: a workload module is read by the gates' child Python, never by
the cockpit itself; what it declares comes back as a typed manifest; a broken module is one line
naming its file and line; `cockpit init` starts a workspace in the engineer's own repository."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import load_config
from cockpit.errors import CockpitError
from cockpit.workload.describe import cached, workload_manifest
from cockpit.workload.manifest import ManifestError, manifest_from_json, manifest_to_json
from cockpit.workload.spec import axes, shape_name
from tests.trusted import trust

SCALE = '''
import torch
from cockpit.workload import Knob, Profile, Reference, Workload, axes, rel_l2

def make_inputs(seed, /, M, N, dtype):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(M, N, generator=g),)

def ours(x, out, SCALE=2):
    return torch.mul(x, 2.0, out=out)

WORKLOAD = Workload(
    name="scale", candidates={"ours": ours},
    references=(Reference("fp64", lambda x: x.double() * 2, oracle=True),
                Reference("torch.mul", lambda x: x * 2, baseline=True),
                Reference("torch.compile", lambda x: x * 2, optional=True)),
    make_inputs=make_inputs, make_output=lambda x, **shape: torch.empty_like(x),
    test_grid=axes(M=[1, 3], N=[7, 1000], dtype=["fp32"]),
    bench_grid=axes(M=[4096], N=[1024, 4096], dtype=["fp32"]),
    check=rel_l2({"fp32": 1e-5}),
    flops=lambda M, N, **_: M * N, bytes=lambda M, N, **_: 8 * M * N,
    profile=Profile(kernel="mul", shape={"M": 4096, "N": 4096, "dtype": "fp32"}),
    knobs=(Knob("SCALE", (1, 2, 4), via="kwarg", default=2), Knob("VEC", (1, 2, 4, 8))),
    rule=lambda k, limits: "VEC 8 with SCALE 4" if k["VEC"] == 8 and k["SCALE"] == 4 else None,
    keep_per=("N",))
'''


def workspace(tmp_path: Path, module: str = SCALE, name: str = "scale.py") -> Path:
    (tmp_path / "workloads").mkdir(exist_ok=True)
    (tmp_path / "workloads" / name).write_text(module)
    (tmp_path / "cockpit.toml").write_text(f'[workload]\nmodule = "workloads/{name}"\n')
    return trust(tmp_path)


def test_axes_are_the_product_of_named_values_first_axis_slowest() -> None:
    grid = axes(M=[1, 4096], dtype=["fp16", "bf16"])
    assert [shape_name(s) for s in grid] == ["M=1 fp16", "M=1 bf16", "M=4096 fp16", "M=4096 bf16"]
    with pytest.raises(ValueError, match="axis 'M' needs a non-empty list"):
        axes(M=[])


def test_a_workload_module_is_described_by_the_child_and_read_back_typed(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    m = workload_manifest(ws, load_config(ws), sys.executable)
    assert (m.name, m.build.kind, m.candidates, m.ours) == ("scale", "callable", ("ours",), "ours")
    assert m.baseline is not None and m.baseline.name == "torch.mul"
    assert m.oracle is not None and m.oracle.name == "fp64"
    assert [r.name for r in m.timed_references] == ["torch.mul", "torch.compile"]
    assert len(m.test_grid) == 4 and len(m.bench_grid) == 2
    assert m.bench_grid[1].name == "M=4096 N=4096 fp32" and m.bench_grid[1].flops == 4096 * 4096
    # the timed shapes are validated too: the bench grid's smallest and largest join the test grid
    assert [s.name for s in m.correctness_grid()][-2:] == ["M=4096 N=1024 fp32", "M=4096 N=4096 fp32"]
    assert (m.knob_combinations, m.knob_allowed, m.keep_per) == (12, 11, ("N",))
    assert m.profile is not None and m.profile.kernel == "mul"
    assert manifest_from_json(manifest_to_json(m)) == m
    assert cached(ws, load_config(ws), sys.executable) == m  # no child the second time


def test_an_edited_module_is_described_again(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    workload_manifest(ws, load_config(ws), sys.executable)
    (ws / "workloads" / "scale.py").write_text(SCALE.replace('name="scale"', 'name="scale-v2"') + "\n")
    assert cached(ws, load_config(ws), sys.executable) is None
    assert workload_manifest(ws, load_config(ws), sys.executable).name == "scale-v2"


@pytest.mark.parametrize(("source", "said"), [
    ("import torch\nx = = 1\n", "workloads/bad.py:2: SyntaxError"),
    ("import torch\ndef f():\n    return undefined_name\nWORKLOAD = f()\n",
     "workloads/bad.py:3: NameError: name 'undefined_name' is not defined"),
    ("WORKLOAD = 42\n", "workloads/bad.py: defines no WORKLOAD = Workload(...) (found int)"),
])
def test_a_broken_workload_module_is_one_line_naming_its_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, said: str) -> None:
    ws = workspace(tmp_path, source, "bad.py")
    assert main(["--workspace", str(ws), "workload", "show"]) == 2
    waited = ("cockpit: finding the gates' Python", "cockpit: describing the workload in", "cockpit: still ")
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith(waited)]
    assert len(err) == 1 and said in err[0]  # what it waited on, then the error: one line, no traceback


def test_no_workload_named_says_how_to_name_one(tmp_path: Path) -> None:
    with pytest.raises(CockpitError, match=r"no workload named: add \[workload\] module"):
        workload_manifest(tmp_path, load_config(tmp_path), sys.executable)


def test_a_manifest_from_another_schema_is_refused_by_name() -> None:
    with pytest.raises(ManifestError, match="manifest schema 9"):
        manifest_from_json({"schema": 9})


def test_workload_show_prints_the_declaration_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    assert main(["--workspace", str(ws), "workload", "show"]) == 0
    out = capsys.readouterr().out
    assert "references torch.mul (baseline), torch.compile (optional); oracle fp64 (never timed)" in out
    assert "bench grid 2 shapes: M=4096 N=1024 fp32 … M=4096 N=4096 fp32" in out
    assert "knobs      12 combinations, 11 left after the rule; kept per N" in out
    assert main(["--workspace", str(ws), "workload", "show", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "scale"


@pytest.mark.parametrize("kind", ["callable", "cuda", "triton"])
def test_init_writes_a_workspace_to_fill_in_and_nothing_of_the_attention_example(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    repo = tmp_path / "my-kernels"
    repo.mkdir()
    assert main(["init", str(repo), "--workload", kind]) == 0
    assert (repo / "cockpit.toml").is_file() and (repo / "workloads" / "my_kernels.py").is_file()
    assert "attention" not in (repo / "cockpit.toml").read_text()
    assert not (repo / "sessions").exists()
    # the CUDA starter's module builds sources: they are written beside it, never named and missing
    starters = sorted(p.name for p in (repo / "csrc").iterdir()) if kind == "cuda" else []
    assert starters == (["my_kernels.cu", "my_kernels_binding.cpp"] if kind == "cuda" else [])
    assert not (repo / "csrc").exists() or kind == "cuda"
    out = capsys.readouterr().out
    assert "(the kernel is named after the folder: my_kernels; `--name NAME` names it)" in out
    assert main(["--workspace", str(repo), "workload", "show"]) == 0  # the starter describes as written
    assert "workload   my_kernels" in capsys.readouterr().out
    assert main(["init", str(repo), "--workload", kind]) == 2  # never over an existing cockpit.toml
    named = tmp_path / "named"
    named.mkdir()
    assert main(["init", str(named), "--workload", kind, "--name", "row-softmax"]) == 0
    assert (named / "workloads" / "row_softmax.py").is_file()
    assert kind != "cuda" or (named / "csrc" / "row_softmax.cu").is_file()


def test_init_on_a_gpumode_folder_names_it_and_refuses_one_that_is_not(tmp_path: Path) -> None:
    (tmp_path / "notaproblem").mkdir()
    assert main(["init", str(tmp_path), "--workload", "gpumode=notaproblem"]) == 2
    assert not (tmp_path / "cockpit.toml").exists()


def test_an_earlier_version_of_the_kernel_builds_from_its_commit_under_a_name_of_its_own(tmp_path: Path) -> None:
    import subprocess

    from cockpit.probes.build_probe import sources_at
    from cockpit.workload.spec import Extension

    kernel = Extension("my_softmax", sources=("csrc/softmax.cu", "csrc/binding.cpp"), include_dirs=("include",))
    earlier = kernel.at("HEAD~1")
    assert earlier.module_name == "my_softmax_at_HEAD_1" and earlier.build_dir(tmp_path).name == earlier.module_name
    with pytest.raises(ValueError, match="not a git revision name"):
        kernel.at("HEAD; rm -rf /")
    repo = tmp_path / "repo"
    (repo / "csrc").mkdir(parents=True)
    (repo / "include").mkdir()
    (repo / "csrc" / "softmax.cu").write_text("// v1\n")
    (repo / "include" / "softmax.h").write_text("// h1\n")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.email=e@x", "-c", "user.name=e", *args],
                       check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "v1")
    (repo / "csrc" / "softmax.cu").write_text("// v2, in the working tree only\n")
    root = sources_at(repo, "HEAD", list(kernel.sources), list(kernel.include_dirs), tmp_path / "src")
    assert (root / "csrc" / "softmax.cu").read_text() == "// v1\n"  # as committed, not as edited
    assert (root / "include" / "softmax.h").read_text() == "// h1\n"
    with pytest.raises(ValueError):
        sources_at(repo, "no-such-tag", list(kernel.sources), [], tmp_path / "src2")


def test_tune_searches_the_workloads_own_knobs_never_the_attention_kernels(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    # VEC is a define, and a plain callable has no build to put it in: one line, not a search
    assert main(["--workspace", str(ws), "tune", "--dry-run", "--arch", "8.9"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "define knobs are compiled into an Extension build; scale is built as callable" in err
    (ws / "workloads" / "scale.py").write_text(SCALE.replace('Knob("VEC", (1, 2, 4, 8))',
                                                             'Knob("VEC", (1, 2, 4, 8), via="kwarg")'))
    assert main(["--workspace", str(ws), "tune", "--dry-run", "--arch", "8.9"]) == 0
    out = capsys.readouterr().out
    assert "scale: target sm_89;" in out and "SCALE (kwarg) [1, 2, 4]; VEC (kwarg) [1, 2, 4, 8]" in out
    assert "12 combinations" in out and "1 rejected by the workload's rule" in out
    assert "winners are kept in workloads/scale.tuned.json (per sm_89 and N)" in out
    assert "block_m" not in out and "D=64" not in out
