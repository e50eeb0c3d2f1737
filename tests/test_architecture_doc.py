"""docs/architecture.md is the newcomer's map: every `path.py:name` it points at is there, in
that module, as a function, a class or a module-level name (a map naming a function that does not
exist sends a reader looking for it)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"


def names_in(module: Path) -> set[str]:
    """The functions, classes (and their methods, as Class.method) and module-level names of a module."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef):
            found.add(node.name)
            found.update(f"{node.name}.{item.name}" for item in node.body
                         if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


def test_every_function_the_map_names_is_where_it_says() -> None:
    pointed = set(re.findall(r"`([\w/]+\.py):([\w.]+)`", DOC.read_text(encoding="utf-8")))
    assert pointed, "the map points at no function: the pattern above no longer reads it"
    missing = sorted(f"{path}:{name}" for path, name in pointed
                     if not (ROOT / "cockpit" / path).is_file() or name not in names_in(ROOT / "cockpit" / path))
    assert missing == [], f"docs/architecture.md names what is not there: {missing}"
