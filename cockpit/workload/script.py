"""The functions of a script, without running the script.

A tutorial or a benchmark script defines its kernels and then, at its top level, reads the GPU's
driver, runs its tests and its benchmark (Triton's layer-norm tutorial does all three at import).
`from_script` runs only what defines things: imports, functions and classes (their decorators
too: `@triton.jit`, `@triton.autotune(...)`), and assignments of plain values (`BLOCK = 1024`,
`DTYPES = {"fp16": torch.float16}`). Every other top-level statement (a call, a loop,
`if __name__ == "__main__":`, `DEVICE = triton.runtime.driver.active.get_active_torch_device()`,
`GPU = os.environ["GPU"]`) is left out, and named in `skipped` so a missing name can be explained.

    from cockpit.workload.script import from_script

    tutorial = from_script("third_party/05-layer-norm.py", "LayerNorm", "_layer_norm_fwd_fused")
    def ours(x, w, b): return tutorial.LayerNorm.apply(x, (x.shape[-1],), w, b, 1e-5)

Imports no torch: the script's own imports run in the gates' child, where torch is.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class Script:
    """What `from_script` kept: the names asked for, each an attribute; `module` has all it ran."""

    path: Path
    module: ModuleType
    skipped: list[str] = field(default_factory=list)
    """The top-level statements left out, as `LINE: first words`."""

    def __getattr__(self, name: str) -> object:
        try:
            return getattr(self.module, name)
        except AttributeError:
            raise AttributeError(f"{self.path.name} defines no {name!r} outside its top-level code "
                                 f"(left out: {'; '.join(self.skipped[:4]) or 'nothing'})") from None


def from_script(path: str | Path, *names: str) -> Script:
    """The definitions of the script at `path` (relative to the workspace root, or absolute), run
    without its top-level code; `names` must be among them (one line otherwise, naming the file)."""
    from cockpit.workload.builds import workspace_root

    source = Path(path)
    if not source.is_absolute():
        source = workspace_root() / source
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise FileNotFoundError(f"{path}: cannot read the script ({exc.strerror})") from None
    kept, skipped = _definitions(text, source)
    module = ModuleType(f"cockpit_script_{source.stem.replace('-', '_')}")
    module.__file__ = str(source)
    sys.modules[module.__name__] = module  # dataclasses, pickling and Triton look a module up by name
    if str(source.parent) not in sys.path:
        sys.path.insert(0, str(source.parent))  # its helpers beside it
    # the user's own script, as a workload module is: run in the gates' child, its definitions only
    exec(compile(ast.Module(body=kept, type_ignores=[]), str(source), "exec"), module.__dict__)
    script = Script(source, module, skipped)
    missing = [n for n in names if not hasattr(module, n)]
    if missing:
        raise AttributeError(f"{source.name} defines no {', '.join(map(repr, missing))} outside its "
                             f"top-level code (left out: {'; '.join(skipped[:4]) or 'nothing'})")
    return script


def _definitions(text: str, source: Path) -> tuple[list[ast.stmt], list[str]]:
    """The script's top-level statements that only define (kept), and the first line of each
    other one ("12: main()"), said when a name asked for is missing."""
    kept: list[ast.stmt] = []
    skipped: list[str] = []
    for node in ast.parse(text, filename=str(source)).body:
        if _defines(node):
            kept.append(node)
        else:
            skipped.append(f"{node.lineno}: {ast.get_source_segment(text, node, padded=False) or ''}"
                           .splitlines()[0][:60])
    return kept, skipped


def _defines(node: ast.stmt) -> bool:
    """An import, a def or class, a docstring, or an assignment of plain values (_PLAIN)."""
    if isinstance(node, KEPT):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # a docstring or a bare constant
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        return all(isinstance(n, _PLAIN) for n in ast.walk(node.value))
    return False


_PLAIN = (ast.Constant, ast.Name, ast.Attribute, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BinOp,
          ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Load, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
          ast.Lambda, ast.arguments, ast.arg)
"""What an assignment kept may hold: literals, names, attributes (`tl.float16`), arithmetic and a
lambda. A call, a subscript (`os.environ["GPU"]`) or a comprehension runs code: left out."""
