"""A KernelBench answer to start from: `class ModelNew` as a copy of the problem's `class Model`.

`cockpit init --workload kernelbench=P.py` writes it as `P_new.py` when no file beside the
problem defines ModelNew: the same constructor and the same forward, so it runs and passes
correctness at once (timed against Model at about 1.00x), with the forward's torch ops marked as
the place the engineer's kernel goes. The problem is read with `ast`, never run: it is someone
else's code, and the cockpit's process never imports torch. What Model uses of the problem's
module (its imports, a helper function or block class, a constant) is copied with it.
"""

from __future__ import annotations

import ast
import io
import re
import symtable
from importlib import resources
from string import Template

MODEL, NEW = "Model", "ModelNew"
PROBLEM_ONLY = frozenset({"get_inputs", "get_init_inputs"})
"""The problem's own functions: how the gates make Model's inputs, never part of an answer."""
YOUR_KERNEL = (
    "# YOUR KERNEL GOES HERE. This forward is Model's: ModelNew passes correctness as it is.",
    "# Replace the torch ops below with a call of your kernel (a load_inline extension or a",
    "# Triton launch, sketched at the top of this file) that returns the same output.",
)


class NotAProblem(ValueError):
    """One line: the file has no class Model to start from, or does not parse."""


def model_new_starter(problem_text: str, problem_name: str) -> str:
    """The text of `P_new.py` for the KernelBench problem `problem_name` holding `problem_text`."""
    try:
        tree = ast.parse(problem_text, filename=problem_name)
    except SyntaxError as exc:
        raise NotAProblem(f"{problem_name}:{exc.lineno}: does not parse ({exc.msg})") from exc
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == MODEL), None)
    if model is None:
        raise NotAProblem(f"{problem_name}: defines no class Model; a KernelBench problem has class Model, "
                          "get_inputs() and get_init_inputs()")
    lines = io.StringIO(problem_text, newline="").readlines()  # ast's lines: \n, \r\n or \r
    imports = [_source(lines, n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    helpers = [_source(lines, n) for n in _used(problem_text, problem_name, tree, model)]
    stem = re.sub(r"\W", "_", problem_name.removesuffix(".py"))
    starter = resources.files("cockpit.workload") / "starters" / "kernelbench_new.py.tmpl"
    return Template(starter.read_text(encoding="utf-8")).substitute(
        problem=problem_name, extension=f"{stem}_new" if stem[:1].isalpha() else f"kernel_{stem}_new",
        imports="".join(imports), helpers="".join(f"\n\n{h}" for h in helpers),
        model=_renamed(lines, model)).rstrip() + "\n"


def _defined(node: ast.stmt) -> set[str]:
    """The module-level names a statement of the problem defines."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _used(text: str, name: str, tree: ast.Module, model: ast.ClassDef) -> list[ast.stmt]:
    """The problem's module-level definitions Model reads, and what they read, in the file's order:
    a helper block class, a function, a constant (a sizing global only get_inputs() reads is
    left out)."""
    scopes = {(t.get_name(), t.get_lineno()): t for t in symtable.symtable(text, name, "exec").get_children()}
    defining = [(n, _defined(n) - PROBLEM_ONLY - {MODEL}) for n in tree.body if n is not model]
    wanted = _reads(model, scopes)
    kept: list[ast.stmt] = []
    for _ in defining:  # each pass adds what the last one's additions read; at most one per statement
        more = [n for n, names in defining if names & wanted and not any(n is k for k in kept)]
        if not more:
            break
        kept += more
        for node in more:
            wanted |= _reads(node, scopes)
    return [n for n, _ in defining if any(n is k for k in kept)]


Scopes = dict[tuple[str, int], symtable.SymbolTable]


def _reads(node: ast.stmt, scopes: Scopes) -> set[str]:
    """The module-level names a statement reads: its decorators, bases and defaults (evaluated at
    module level) and the globals its bodies read, by Python's own scoping (symtable), so a
    parameter named like a global (`in_features`) is no read of it."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    outer: list[ast.AST] = [*node.decorator_list]
    if isinstance(node, ast.ClassDef):
        outer += [*node.bases, *node.keywords]
    else:
        outer += [node.args, *([node.returns] if node.returns else [])]
    names = {n.id for e in outer for n in ast.walk(e) if isinstance(n, ast.Name)}
    scope = scopes.get((node.name, node.lineno))
    return names | (_globals(scope) if scope is not None else set())


def _globals(scope: symtable.SymbolTable) -> set[str]:
    found = {s.get_name() for s in scope.get_symbols() if s.is_referenced() and s.is_global()}
    for child in scope.get_children():
        found |= _globals(child)
    return found


def _source(lines: list[str], node: ast.stmt) -> str:
    """A statement's whole lines, its decorators included."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return "".join(lines[first - 1:node.end_lineno])


def _renamed(lines: list[str], model: ast.ClassDef) -> str:
    """Model's source as ModelNew: the class renamed, and every `Model` its body names
    (`super(Model, self).__init__()`) with it; the forward's body marked YOUR KERNEL."""
    first = min([model.lineno, *(d.lineno for d in model.decorator_list)])
    own = [line.encode() for line in lines[first - 1:model.end_lineno]]
    names = sorted(((n.lineno, n.col_offset, n.end_col_offset) for n in ast.walk(model)
                    if isinstance(n, ast.Name) and n.id == MODEL and n.end_col_offset is not None),
                   reverse=True)  # right to left: the earlier offsets on a line hold
    for lineno, start, end in names:  # ast's columns count UTF-8 bytes
        i = lineno - first
        own[i] = own[i][:start] + NEW.encode() + own[i][end:]
    header = model.lineno - first
    own[header] = re.sub(rb"\bclass\s+Model\b", b"class " + NEW.encode(), own[header], count=1)
    text = [line.decode() for line in own]
    forward = next((n for n in model.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n.name == "forward"), None)
    if forward is not None:
        at = _first_op(forward)
        target = at if at.lineno > forward.lineno else forward  # a one-line forward: above its def
        i = min([target.lineno, *(d.lineno for d in getattr(target, "decorator_list", []))]) - first
        indent = text[i][:len(text[i]) - len(text[i].lstrip(" \t"))]  # its own tabs or spaces
        text[i:i] = [f"{indent}{line}\n" for line in YOUR_KERNEL]
    return "".join(text)


def _first_op(forward: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt:
    """The forward's first statement after its docstring (the docstring itself when it is all)."""
    body = forward.body
    docstring = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                 and isinstance(body[0].value.value, str))
    return body[1] if docstring and len(body) > 1 else body[0]
