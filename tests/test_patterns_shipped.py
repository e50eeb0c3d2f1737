"""A workspace starts complete: the pattern library ships with the cockpit, so a new folder gets
its hints and its "repeated mistakes" from the first session; the workspace's own patterns/ adds
to it and replaces a shipped pattern by id; the clone's example sessions are a workspace of their
own; the first session's objective is about the workspace's kernel, not the example's."""

from __future__ import annotations

from pathlib import Path

from cockpit.patterns.library import SHIPPED, load_patterns, new_pattern, next_id
from cockpit.patterns.pattern import library_size
from cockpit.ui.screens.dialogs import suggested_objective

REPO = Path(__file__).resolve().parent.parent


def test_a_new_folder_has_the_shipped_library(tmp_path: Path) -> None:
    patterns, problems = load_patterns(tmp_path / "patterns")  # no folder of its own yet
    assert problems == () and len(patterns) == 14 == library_size(tmp_path / "patterns")
    assert patterns[0].title == "Measure the PyTorch baseline before touching the kernel"
    assert all(p.path.parent == SHIPPED for p in patterns)


def test_the_workspace_adds_patterns_and_its_own_wording_replaces_a_shipped_one(tmp_path: Path) -> None:
    folder = tmp_path / "patterns"
    mine = new_pattern(folder, "Pin the arch", "builds took 4 min", "fresh box", "set TORCH_CUDA_ARCH_LIST", 20)
    assert mine.name == "15-pin-the-arch.md" and next_id(folder) == 16  # after the shipped ids
    shipped_10 = next(SHIPPED.glob("10-*.md"))
    (folder / shipped_10.name).write_text(shipped_10.read_text().replace("status: operational", "status: planned"))
    patterns, problems = load_patterns(folder)
    by_id = {p.id: p for p in patterns}
    assert problems == () and len(patterns) == 15 and library_size(folder) == 15
    assert by_id[10].status == "planned" and by_id[10].path.parent == folder
    assert by_id[15].title == "Pin the arch"


def test_the_clones_example_sessions_are_not_the_workspaces_own() -> None:
    assert not list((REPO / "sessions").glob("*/journal.jsonl"))
    assert len(list((REPO / "examples" / "sessions").glob("*/journal.jsonl"))) == 4


def test_the_first_objective_is_about_the_workspaces_kernel() -> None:
    assert suggested_objective("workloads/softmax/softmax.py") == (
        "Measure the softmax kernel against its baseline and find its bottleneck")
    assert suggested_objective("gpumode:problems/vectoradd_py") == (
        "Measure the vectoradd_py kernel against its baseline and find its bottleneck")
    assert suggested_objective("") == "Measure my kernel against its baseline and find its bottleneck"
