"""A tuned setting in the words a reviewer reads, as the workload gave them.

The tune names a setting the short way, to be read at a glance in its pane, its commit message and
the tuned file: "N=4096 ROWS=2 num_warps=8" (its group, `tuned.group_label`, then each knob,
`tune/space.py` `label`). A pull request spells it out in the words the workload declared on its
`Knob`s (`words`) and its `keep_per` keys (`group_words`): "rows of 4096: 2 rows per program, 8
warps". The manifest carries them from the workload's child; a tune journals them with its
decision, so the report reads them without importing the workload.

A knob, or a group key, without words reads as written ("ROWS=2"), and so does a whole setting
journaled without any (a session from before words, or a workload that gave none). The cockpit
knows no kernel's knobs: every word here is the workload author's.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypedDict

Words = str | Mapping[str, str]
"""One knob's words: a format string of its value ("{} warp(s)", "block {}x{block_n}"), or the
value's text -> its phrase ({"True": "O in shared memory", "False": "O in registers"});
`spec.Knob.words` says how each reads."""
SOURCE_DEFAULT = "src"
"""A define knob left to the source's own default, as `label` writes its value."""


class KnobWordsJson(TypedDict):
    """The words as a tune's decision journals them."""

    knobs: dict[str, str | dict[str, str]]
    groups: dict[str, str]


def checked_words(value: object) -> Words | None:
    """A knob's (or a group key's) words as declared, or None for none; ValueError saying what is
    wrong with any other value (a format string may name the value `{}` and other knobs `{name}`,
    with no conversion or format spec: words are text, never a computation)."""
    if value is None:
        return None
    if isinstance(value, str):
        if not _plain_format(value):
            raise ValueError(f"{value!r}: name the value {{}} and another knob {{name}}, nothing else "
                             "in braces")
        return value
    if isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str)
                                          for k, v in value.items()):
        return dict(value)
    raise ValueError(f"{value!r}: words are a format string or a mapping of the value's text to a phrase")


def _plain_format(words: str) -> bool:
    """`{}` and `{name}` fields only (no `{0.attr}`, `{x[0]}`, `{!r}`, `{:>99}`)."""
    try:
        fields = [f for f in string.Formatter().parse(words) if f[1] is not None]
    except ValueError:
        return False
    return all(not spec and conv is None and (name == "" or str(name).isidentifier())
               for _, name, spec, conv in fields)


@dataclass(frozen=True)
class KnobWords:
    """A workload's words: per knob name, and per keep_per key (a format string of the value)."""

    knobs: Mapping[str, Words] = field(default_factory=dict)
    groups: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.knobs or self.groups)

    def to_json(self) -> KnobWordsJson:
        return {"knobs": {k: w if isinstance(w, str) else dict(w) for k, w in self.knobs.items()},
                "groups": dict(self.groups)}

    @classmethod
    def from_json(cls, value: object) -> KnobWords | None:
        """Words read back from a journal; None when there are none. A knob's words in no form
        these read are left out: that knob reads as written."""
        if not isinstance(value, Mapping):
            return None
        knobs = {name: w for name, w in _entries(value.get("knobs")) if w is not None}
        groups = {key: w for key, w in _entries(value.get("groups")) if isinstance(w, str)}
        return cls(knobs, groups) or None


def _entries(value: object) -> list[tuple[str, Words | None]]:
    """(name, its words or None where they do not read) of one journaled mapping."""
    if not isinstance(value, Mapping):
        return []
    out: list[tuple[str, Words | None]] = []
    for name, words in value.items():
        try:
            out.append((str(name), checked_words(words)))
        except ValueError:
            out.append((str(name), None))
    return out


def spelled(setting: str, words: KnobWords | None) -> str:
    """The setting in its workload's words: its group ("head dim 128: ..."), then each knob; as
    written when the workload gave no words."""
    if not words:
        return setting
    tokens = setting.split()
    group = _group(tokens, words.groups)
    rest = tokens[len(group):]
    if rest[:1] == ["all"]:  # the group of a workload that keeps one winner for every shape
        rest = rest[1:]
    values = dict(t.split("=", 1) for t in tokens if "=" in t)  # what `{name}` in words may name
    knobs = ", ".join(p for p in (_knob(t, words.knobs, values) for t in rest) if p)
    return ": ".join(part for part in (" ".join(group), knobs) if part)


def _group(tokens: list[str], groups: Mapping[str, str]) -> list[str]:
    """The setting's first tokens that are group keys with words, in their words."""
    said: list[str] = []
    for token in tokens:
        key, _, value = token.partition("=")
        words = groups.get(key) if "=" in token else None
        if words is None or (text := _formatted(words, value, {})) is None:
            break
        said.append(text)
    return said


def _knob(token: str, knobs: Mapping[str, Words], values: Mapping[str, str]) -> str:
    """One knob in its words ("" when another knob's words say it), else as written."""
    name, equals, value = token.partition("=")
    words = knobs.get(name) if equals else None
    if words is None:
        return token
    if value == SOURCE_DEFAULT:
        return f"{name} from the source"
    said = words.get(value) if isinstance(words, Mapping) else _formatted(words, value, values)
    return token if said is None else said


def _formatted(words: str, value: str, values: Mapping[str, str]) -> str | None:
    """`words` with the value in `{}`, other knobs' values in `{name}`, and "(s)" plural unless the
    value is 1; None when it names a knob the setting does not set."""
    if not _plain_format(words):
        return None
    try:
        text = words.format(value, **values)
    except (KeyError, IndexError):
        return None
    return text.replace("(s)", "" if value == "1" else "s")
