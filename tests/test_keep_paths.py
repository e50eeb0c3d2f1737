"""Keep and revert touch the kernel the workload names, not csrc/ and not the rest of the workspace:
a softmax in workloads/softmax/ is committed there; notes and other edits stay uncommitted."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cockpit.config.workload import WorkloadConfig
from cockpit.gates.kernel_git import commit_kernel, kernel_diff_stat, restore_kernel
from cockpit.workload.kernel_files import kernel_paths
from cockpit.workload.manifest import Manifest, manifest_from_json


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def manifest(sources: list[str]) -> Manifest:
    return manifest_from_json({"schema": 1, "name": "row-softmax", "build": {"kind": "extension", "name": "s",
                                                                "sources": sources},
                               "candidates": ["ours"], "references": [], "test_grid": [], "bench_grid": [],
                               "check": {"kind": "rel_l2"}})


def test_the_kernel_is_its_sources_folders_and_its_modules_folder() -> None:
    m = manifest(["csrc/attention.cu", "csrc/binding.cpp"])
    assert kernel_paths(WorkloadConfig(module="workloads/attention/attention.py"), m) == [
        "workloads/attention/", "csrc/"]
    top = manifest(["softmax.cu"])
    assert kernel_paths(WorkloadConfig(module="softmax_workload.py"), top) == [
        "softmax_workload.py", "softmax.cu"]  # files at the top level alone: never "./"
    assert kernel_paths(WorkloadConfig(gpumode="problems/vectoradd"), None) == ["problems/vectoradd/"]
    assert kernel_paths(WorkloadConfig(module="my_pkg.kernels"), None) == ["csrc/"]


def test_keep_commits_the_workload_folder_alone_and_revert_restores_it(tmp_path: Path) -> None:
    kernel = tmp_path / "workloads" / "softmax"
    kernel.mkdir(parents=True)
    (kernel / "softmax.cu").write_text("// v1\n")
    (tmp_path / "NOTES.md").write_text("mine\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.email=c@c", "-c", "user.name=c", "commit", "-qm", "base")
    paths = ["workloads/softmax/"]

    (kernel / "softmax.cu").write_text("// v2: faster\n")
    (kernel / "softmax.tuned.json").write_text("{}\n")
    (tmp_path / "NOTES.md").write_text("mine, edited\n")
    assert "softmax.cu" in kernel_diff_stat(tmp_path, paths)
    subprocess.run(["git", "-C", str(tmp_path), "config", "user.email", "c@c"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "config", "user.name", "c"], check=True)
    commit_kernel(tmp_path, paths, "row-softmax: faster")
    committed = git(tmp_path, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(committed) == ["workloads/softmax/softmax.cu", "workloads/softmax/softmax.tuned.json"]
    assert "NOTES.md" in git(tmp_path, "status", "--porcelain")  # the engineer's notes stay theirs

    (kernel / "softmax.cu").write_text("// v3: slower\n")
    restore_kernel(tmp_path, paths)
    assert (kernel / "softmax.cu").read_text() == "// v2: faster\n"
    assert (tmp_path / "NOTES.md").read_text() == "mine, edited\n"
