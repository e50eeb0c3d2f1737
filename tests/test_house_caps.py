"""The house's caps hold in CI, not only in a closing note: no module of cockpit/ over 400 lines,
no function over complexity 20 and at most 120 blocks of complexity 11 or more (radon's count, the
one the caps were measured with; ruff's mccabe, which counts fewer branches, caps 20 in
pyproject.toml too), no import circle (import-linter's acyclic_siblings contract), and one name per
type: no class name declared in two modules."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from radon.complexity import cc_visit

PACKAGE = Path(__file__).resolve().parent.parent / "cockpit"
MAX_LINES = 400
MAX_COMPLEXITY = 20
MAX_BLOCKS_OVER_10 = 120


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def blocks() -> list[tuple[str, int]]:
    """Every function, method and class of cockpit/ as `path:line name` and its complexity."""
    found = []
    for path in modules():
        for block in cc_visit(path.read_text(encoding="utf-8")):
            found.append((f"{path.relative_to(PACKAGE.parent)}:{block.lineno} {block.name}", block.complexity))
    return found


def declared_classes(source: str) -> set[str]:
    """The names of the classes a module declares, at any depth."""
    return {node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)}


def test_no_class_name_is_declared_in_two_modules() -> None:
    """A name is one type: `Check` the workload author writes and `Check` the env probe returns
    would read as the same thing in a traceback, a grep or a review."""
    where: defaultdict[str, list[str]] = defaultdict(list)
    for path in modules():
        for name in declared_classes(path.read_text(encoding="utf-8")):
            where[name].append(str(path.relative_to(PACKAGE.parent)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert twice == {}, f"give each of these a name of its own, in a kernel engineer's words: {twice}"


def test_the_class_names_are_read_at_any_depth() -> None:
    """The reading itself: a class inside a function or an `if TYPE_CHECKING:` block is declared too."""
    source = "class A:\n    class B: ...\nif X:\n    class C: ...\ndef f():\n    class D: ...\n"
    assert declared_classes(source) == {"A", "B", "C", "D"}


def test_no_module_is_over_400_lines() -> None:
    long = {str(p.relative_to(PACKAGE.parent)): n for p in modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"split these into well-named modules of at most {MAX_LINES} lines: {long}"


def test_no_function_is_over_complexity_20_and_few_are_over_10() -> None:
    measured = blocks()
    over = {where: cc for where, cc in measured if cc > MAX_COMPLEXITY}
    assert over == {}, f"split these (radon complexity over {MAX_COMPLEXITY}): {over}"
    many = [where for where, cc in measured if cc > 10]
    assert len(many) <= MAX_BLOCKS_OVER_10, (
        f"{len(many)} blocks of complexity 11 or more (at most {MAX_BLOCKS_OVER_10}): simplify one before "
        f"adding one; the most complex: {sorted(measured, key=lambda b: -b[1])[:5]}")


def test_the_measure_reads_25_branches_over_the_cap_and_9_under_it() -> None:
    """The measure itself: a function of 25 branches reads over 20, one of 9 reads 10 or less."""
    def function(branches: int) -> str:
        body = "".join(f"    if x == {k}:\n        return {k}\n" for k in range(branches))
        return f"def f(x):\n{body}    return -1\n"

    assert cc_visit(function(25))[0].complexity > MAX_COMPLEXITY
    assert cc_visit(function(9))[0].complexity <= 10
