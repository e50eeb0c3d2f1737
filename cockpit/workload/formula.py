"""Arithmetic over a shape's keys: the byte or FLOP count of a GPU MODE folder, written in
cockpit.toml as `bytes = "3 * size * size * 2"`.

A formula is parsed, never run as Python: numbers, the shape's key names, `+ - * / // % **`,
parentheses, unary signs and `min(...)`/`max(...)` are all it may hold. Anything else (an
attribute, a call of another name, a subscript, a string) is refused when it is read, in one line
that says what and where. Evaluated in floats, so `10 ** 10 ** 10` overflows at once instead of
building a huge integer. Standard library only: the cockpit checks a formula when it reads the
folder and the gates' child evaluates it per shape.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_CHARS = 500
"""A byte count is one line; a longer formula is refused before it is parsed."""

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., float]] = {"min": min, "max": max}


class FormulaError(ValueError):
    """A formula that does not read or does not evaluate; the message is one line."""


@dataclass(frozen=True)
class Formula:
    """A parsed formula: `formula(**shape)` is its value on that shape (a finite number >= 0)."""

    text: str
    names: frozenset[str]
    """The shape keys it reads."""
    _tree: ast.expr = field(repr=False, compare=False)

    def __call__(self, **shape: Any) -> float:
        missing = sorted(self.names - shape.keys())
        if missing:
            raise FormulaError(f"{self.text!r} reads {', '.join(missing)}, which the shape "
                               f"{_shape_text(shape)} does not have")
        try:
            value = _evaluate(self._tree, shape)
        except ZeroDivisionError:
            raise FormulaError(f"{self.text!r} divides by zero on {_shape_text(shape)}") from None
        except OverflowError:
            raise FormulaError(f"{self.text!r} overflows on {_shape_text(shape)}") from None
        if isinstance(value, complex) or not math.isfinite(value) or value < 0:
            raise FormulaError(f"{self.text!r} is {value} on {_shape_text(shape)}, "
                               "not a count (a finite number >= 0)")
        return float(value)


def parse_formula(text: str) -> Formula:
    """`text` as a Formula; FormulaError saying what is not allowed otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise FormulaError(f"{text!r} is not a formula (write one such as \"3 * size * size * 2\")")
    if len(text) > MAX_CHARS:
        raise FormulaError(f"{len(text)} characters, over the {MAX_CHARS} a formula may have")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise FormulaError(f"{text!r} does not parse ({exc.msg}, column {exc.offset})") from None
    except (RecursionError, MemoryError, ValueError):
        raise FormulaError(f"{text!r} is nested too deep to read") from None
    names: set[str] = set()
    _check(tree, names)
    return Formula(text.strip(), frozenset(names), tree)


def _check(node: ast.expr, names: set[str]) -> None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise FormulaError(f"{node.value!r} is not a number (only numbers and the shape's keys)")
    elif isinstance(node, ast.Name):
        if node.id in _FUNCTIONS:
            raise FormulaError(f"{node.id} is a function: call it, as in {node.id}(a, b)")
        names.add(node.id)
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise FormulaError(f"the operator {type(node.op).__name__} is not allowed (only + - * / // % **)")
        _check(node.left, names)
        _check(node.right, names)
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            raise FormulaError(f"the operator {type(node.op).__name__} is not allowed "
                               "(only + and - before a value)")
        _check(node.operand, names)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords \
                or not node.args or any(isinstance(a, ast.Starred) for a in node.args):
            raise FormulaError(f"{_source(node)}: only min(a, b, ...) and max(a, b, ...) may be called")
        for arg in node.args:
            _check(arg, names)
    else:
        raise FormulaError(f"{_source(node)}: not allowed in a formula (only numbers, the shape's keys, "
                           "+ - * / // % **, parentheses, min and max)")


def _evaluate(node: ast.expr, shape: Mapping[str, Any]) -> float:
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, (int, float))  # _check allowed numbers only
        return float(node.value)
    if isinstance(node, ast.Name):
        value = shape[node.id]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise FormulaError(f"{node.id} is {value!r} on {_shape_text(shape)}, not a number")
        return float(value)
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, shape), _evaluate(node.right, shape)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, shape))
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        return float(_FUNCTIONS[node.func.id](*(_evaluate(a, shape) for a in node.args)))
    raise FormulaError(f"{_source(node)}: not allowed in a formula")  # _check refused it already


def _source(node: ast.AST) -> str:
    try:
        return ast.unparse(node)[:60]
    except (ValueError, RecursionError):
        return type(node).__name__


def _shape_text(shape: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in shape.items()) + "}"

