"""Triggers: when a pattern applies, read from a gate's output lines or its verdict.

Two kinds, as written in a pattern's front matter:
- `{regex: '...', on: output}` fires when a line of a gate's output matches (re.search);
- `{when: 'speedup < 0.5'}` fires when a field of a gate's structured result compares true.
Either may add `gate: NAME` to listen to one gate only. Regexes are compiled once, at load, by
the `regex` module (re's syntax) so that each search runs under a time budget (output_search.py,
re-exported here): a pattern file is someone else's input, and `(a+)+$` against a long line would
otherwise backtrack for hours. The trigger types themselves live in `pattern.py`, beside the
Pattern that carries them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import regex as bounded_re

from cockpit.errors import CockpitError
from cockpit.patterns.output_search import LIBRARY, TriggerBudget, lines_regex, match_output
from cockpit.patterns.pattern import OutputTrigger, Pattern, Trigger, VerdictTrigger

__all__ = [
    "LIBRARY",
    "OutputTrigger",
    "Trigger",
    "TriggerBudget",
    "TriggerError",
    "VerdictTrigger",
    "match_output",
    "match_verdict",
    "output_trigger",
    "trigger_from_mapping",
    "trigger_text",
    "trigger_to_mapping",
    "verdict_trigger",
]


class TriggerError(CockpitError):
    """A trigger as written cannot be used; the message says what to write instead."""


OPERATORS = ("<=", ">=", "==", "!=", "<", ">")
_CONDITION = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*(<=|>=|==|!=|<|>)\s*(\S+)\s*$")
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_GATE = re.compile(r"[a-z][a-z0-9_-]*")
OUTPUT_KEYS = ("regex", "on", "gate")
VERDICT_KEYS = ("when", "gate")


def output_trigger(regex: str, gate: str | None = None) -> OutputTrigger:
    """An output trigger; TriggerError when the regex does not compile or matches everything."""
    if not regex:
        raise TriggerError("regex is empty; write the text to look for, e.g. 'undefined symbol'")
    try:
        compiled = bounded_re.compile(regex)
    except bounded_re.error as exc:
        raise TriggerError(f"regex {regex!r} does not compile ({exc}); "
                           "fix it, and write it in 'single quotes'") from exc
    if compiled.search("") is not None:
        raise TriggerError(f"regex {regex!r} matches an empty line, so it would fire on every gate; "
                           "make it match real text")
    return OutputTrigger(compiled, _gate(gate), lines_regex(compiled))


def verdict_trigger(condition: str, gate: str | None = None) -> VerdictTrigger:
    """A verdict trigger from 'FIELD OP VALUE'; VALUE is a number or a bare word (== and != only)."""
    m = _CONDITION.match(condition)
    if m is None:
        raise TriggerError(f"condition {condition!r} is not 'FIELD OP VALUE' "
                           f"(OP one of {' '.join(OPERATORS)}), e.g. 'speedup < 0.5'")
    field, op, token = m.groups()
    value: float | str
    if _NUMBER.fullmatch(token):
        value = float(token)
    elif _WORD.fullmatch(token):
        if op not in ("==", "!="):
            raise TriggerError(f"condition {condition!r}: '{op}' needs a number; compare words with == or !=")
        value = _norm_word(token)
    else:
        raise TriggerError(f"condition {condition!r}: {token!r} is neither a number nor a bare word")
    return VerdictTrigger(field, op, value, f"{field} {op} {token}", _gate(gate))


def trigger_from_mapping(item: Mapping[str, Any]) -> Trigger:
    """A trigger from its front-matter mapping: {regex, on?, gate?} or {when, gate?}."""
    keys = set(item)
    gate = item.get("gate")
    if gate is not None and not isinstance(gate, str):
        raise TriggerError(f"gate: {gate!r} is not a gate name (lowercase, e.g. env, build, profile)")
    if "regex" in keys and "when" in keys:
        raise TriggerError("a trigger has either regex (output) or when (verdict), not both; split it in two")
    if "regex" in keys:
        _only(keys, OUTPUT_KEYS)
        on = item.get("on", "output")
        if on != "output":
            raise TriggerError(f"on: {on!r} is not supported; regex triggers read gate output (on: output)")
        regex = item["regex"]
        if not isinstance(regex, str):
            raise TriggerError(f"regex: {regex!r} must be text; quote it: regex: '...'")
        return output_trigger(regex, gate)
    if "when" in keys:
        _only(keys, VERDICT_KEYS)
        when = item["when"]
        if not isinstance(when, str):
            raise TriggerError(f"when: {when!r} must be a condition in quotes, e.g. when: 'speedup < 0.5'")
        return verdict_trigger(when, gate)
    raise TriggerError("a trigger needs regex: '...' (gate output) or when: '...' (gate verdict)")


def trigger_to_mapping(trigger: Trigger) -> dict[str, str]:
    """The front-matter mapping that `trigger_from_mapping` reads back as the same trigger."""
    out = ({"regex": trigger.regex.pattern, "on": "output"} if isinstance(trigger, OutputTrigger)
           else {"when": trigger.condition})
    if trigger.gate is not None:
        out["gate"] = trigger.gate
    return out


def trigger_text(trigger: Trigger) -> str:
    """One line for people: "output /too much shared data/ (build)" or "speedup < 0.5"."""
    where = f" ({trigger.gate})" if trigger.gate else ""
    if isinstance(trigger, OutputTrigger):
        return f"output /{trigger.regex.pattern}/{where}"
    return f"{trigger.condition}{where}"


def match_verdict(
    patterns: Sequence[Pattern], gate: str, result: Mapping[str, Any]
) -> list[tuple[Pattern, str]]:
    """Patterns whose verdict triggers hold for `gate`'s result, each once with the reason,
    e.g. "speedup 0.1 < 0.5". Pass the status in the result too (the journal's fields and "status")
    for conditions on it. A field the result lacks never fires."""
    out: list[tuple[Pattern, str]] = []
    for pattern in patterns:
        for trigger in pattern.triggers:
            if isinstance(trigger, VerdictTrigger) and trigger.gate in (None, gate):
                reason = _holds(trigger, result)
                if reason is not None:
                    out.append((pattern, reason))
                    break
    return out


def _holds(trigger: VerdictTrigger, result: Mapping[str, Any]) -> str | None:
    if trigger.field not in result:
        return None
    actual = result[trigger.field]
    if isinstance(trigger.value, float):
        if isinstance(actual, bool) or not isinstance(actual, (int, float)) or math.isnan(actual):
            return None
        if not _compare(float(actual), trigger.op, trigger.value):
            return None
        shown = f"{actual:g}" if isinstance(actual, float) else str(actual)
        return f"{trigger.field} {shown} {trigger.op} {trigger.condition.split(' ', 2)[2]}"
    if isinstance(actual, bool):
        actual = "true" if actual else "false"
    if not isinstance(actual, str):
        return None
    equal = _norm_word(actual) == trigger.value
    if trigger.op == "==":
        return f"{trigger.field} is {actual}" if equal else None
    return None if equal else f"{trigger.field} is {actual}, not {trigger.condition.split(' ', 2)[2]}"


def _compare(a: float, op: str, b: float) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]


def _norm_word(word: str) -> str:
    """memory-bound, MEMORY_BOUND and 'memory bound' are one word to a condition."""
    return re.sub(r"[-\s]+", "_", word.strip().lower())


def _gate(gate: str | None) -> str | None:
    if gate is not None and not _GATE.fullmatch(gate):
        raise TriggerError(f"gate: {gate!r} is not a gate name (lowercase, e.g. env, build, profile)")
    return gate


def _only(keys: set[str], allowed: tuple[str, ...]) -> None:
    extra = sorted(keys - set(allowed), key=str)
    if extra:
        raise TriggerError(f"unknown trigger key {extra[0]!r} (allowed here: {', '.join(allowed)})")
