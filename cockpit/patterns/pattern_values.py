"""A pattern file's front matter values checked one by one into a `Pattern`.

Each bad value is a FrontMatterError at its own line, saying what to write instead;
`library.py` turns it into file:line: message.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cockpit.patterns import frontmatter as fm
from cockpit.patterns.pattern import MEANINGS, STATUSES, Pattern, Trigger, TriggerMeaning
from cockpit.patterns.triggers import TriggerError, trigger_from_mapping

KEYS = ("id", "title", "status", "time_saved_min", "problem", "when", "solution", "evidence", "triggers",
        "triggers_mean")
REQUIRED = ("id", "title", "status", "time_saved_min", "problem", "when", "solution")
TEXT_KEYS = ("title", "problem", "when", "solution")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_PLAIN_DIGITS = re.compile(r"0|[1-9][0-9]*")
TITLE_MAX = 120


class _Bad(fm.FrontMatterError):
    """A well-formed front matter whose values are not a pattern."""


def checked_pattern(doc: fm.Document, path: Path, file_id: int | None) -> Pattern:
    """The pattern a parsed file holds; FrontMatterError (line: what is wrong) at its first bad value."""
    fields = doc.fields
    _check_keys(fields)
    pid = _whole_number(fields["id"])
    if file_id is not None and pid != file_id:
        raise _Bad(fields["id"].line, f"id: {pid} but the file name says {file_id:02d}; make them agree")
    status = _one_of(fields["status"], STATUSES)
    meaning: TriggerMeaning = "mistake"
    if "triggers_mean" in fields:
        meaning = _one_of(fields["triggers_mean"], MEANINGS)
    texts = {key: _text(fields[key]) for key in TEXT_KEYS}
    if len(texts["title"]) > TITLE_MAX:
        raise _Bad(fields["title"].line, f"title is {len(texts['title'])} characters; keep it under "
                                         f"{TITLE_MAX} and put the detail in the body")
    evidence = tuple(_text_item(item, "evidence") for item in _items(fields.get("evidence"), "evidence"))
    triggers = tuple(_trigger(item) for item in _items(fields.get("triggers"), "triggers"))
    return Pattern(
        id=pid, title=texts["title"], status=status,
        time_saved_min=_whole_number(fields["time_saved_min"]),
        problem=texts["problem"], when=texts["when"], solution=texts["solution"],
        evidence=evidence, triggers=triggers, body=doc.body, path=path, triggers_mean=meaning,
    )


def _check_keys(fields: Mapping[str, fm.Field]) -> None:
    """Every key is a pattern's, and every required one is there."""
    for key, field in fields.items():
        if key not in KEYS:
            raise _Bad(field.line, f"unknown key '{key}' (allowed: {', '.join(KEYS)})")
    missing = [k for k in REQUIRED if k not in fields]
    if missing:
        raise _Bad(1, f"missing {', '.join(missing)} in the front matter; add "
                      f"{'it' if len(missing) == 1 else 'them'} (see patterns/README.md)")


def _one_of(field: fm.Field, allowed: tuple[str, ...]) -> Any:
    """A value that must be one of `allowed` (status, triggers_mean)."""
    if field.value not in allowed:
        raise _Bad(field.line, f"{field.key}: {_shown(field.value)} is not one of {', '.join(allowed)}")
    return field.value


def _whole_number(field: fm.Field) -> int:
    value = field.value
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Bad(field.line, f"{field.key}: {_shown(value, field.written)} is not a whole number ≥ 0; "
                               f"write e.g. {field.key}: 30")
    if field.written is None or not _PLAIN_DIGITS.fullmatch(field.written):
        # YAML 1.1 reads 020 as 16 and 1:20 as 80, YAML 1.2 reads neither so
        raise _Bad(field.line, f"{field.key}: {field.written!r} means different things to different "
                               f"YAML readers; write plain digits, e.g. {field.key}: 30")
    return value


def _text(field: fm.Field) -> str:
    value = field.value
    if value is None:
        raise _Bad(field.line, f"{field.key} is empty; say it in one sentence")
    if not isinstance(value, str):
        raise _Bad(field.line, f"{field.key}: {_not_text(value, field.written)}")
    value = value.strip()
    if not value:
        raise _Bad(field.line, f"{field.key} is empty; say it in one sentence")
    if "\n" in value:
        raise _Bad(field.line, f"{field.key} keeps line breaks; write one paragraph ('>-' joins "
                               "the lines under it with spaces)")
    if CONTROL.search(value):
        raise _Bad(field.line, f"{field.key} contains a control character; keep it to plain text")
    return value


def _not_text(value: Any, written: str | None) -> str:
    """Why a value is not text, in the words it was written in."""
    shown = _shown(value, written)
    if isinstance(value, bool):
        return f"{shown} reads as a yes/no value (a boolean), not text; put it in quotes"
    if isinstance(value, (int, float)):
        return f"{shown} reads as a number, not text; put it in quotes"
    if isinstance(value, datetime.date):
        return f"{shown} reads as a date, not text; put it in quotes"
    return f"{shown} is not text; write one paragraph"


def _items(field: fm.Field | None, key: str) -> tuple[fm.ListItem, ...]:
    if field is None or field.value is None:
        return ()
    if not isinstance(field.value, tuple):
        raise _Bad(field.line, f"{key} must be a list: '{key}: []' or '- ...' lines under it")
    return field.value


def _text_item(item: fm.ListItem, key: str) -> str:
    value = item.value
    if not isinstance(value, str):
        raise _Bad(item.line, f"{key}: {_not_text(value, item.written)}")
    if not value.strip():
        raise _Bad(item.line, f"{key}: an empty item; remove it or say what happened")
    return value.strip()


def _trigger(item: fm.ListItem) -> Trigger:
    if not isinstance(item.value, Mapping):
        raise _Bad(item.line, "a trigger is a mapping on one line: - {regex: '...', on: output} "
                              "or - {when: 'speedup < 0.5'}")
    try:
        return trigger_from_mapping(item.value)
    except TriggerError as exc:
        raise _Bad(item.line, f"trigger: {exc}") from exc


def _shown(value: Any, written: str | None = None) -> str:
    if isinstance(value, tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    if value is None:
        return "nothing"
    return repr(written if written is not None else value)
