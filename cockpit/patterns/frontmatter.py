"""Front matter: the YAML between a file's opening `---` line and the next `---` line.

Read with PyYAML's safe loader (libyaml's when it is installed) and written with its safe
dumper, so a pattern file means the same to any YAML reader. The loader's node tree gives
each field and list item its line, so every error can say `file:line`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

FENCE = "---"
WIDTH = 92
_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FrontMatterError(Exception):
    """The front matter cannot be read at `line` (1-based, counted in the whole file)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class ListItem:
    value: Any
    line: int
    written: str | None  # the item as written in the file when it is a single value


@dataclass(frozen=True)
class Field:
    key: str
    value: Any  # a list is a tuple of ListItem
    line: int
    written: str | None  # the value as written in the file when it is a single value


@dataclass(frozen=True)
class Document:
    fields: Mapping[str, Field]
    body: str


# Reading ------------------------------------------------------------------------------------

def split(text: str) -> Document:
    """The front matter's fields and the markdown body after the closing `---`."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines[0].rstrip() != FENCE:
        raise FrontMatterError(1, "the file must start with a '---' line, then the front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip() == FENCE)
    except StopIteration:
        raise FrontMatterError(1, "the front matter has no closing '---' line") from None
    fields = _read("".join(line + "\n" for line in lines[1:end]))
    return Document(fields, "\n".join(lines[end + 1:]))


def _line(mark: yaml.Mark) -> int:
    """A line of the front matter's text as a line of the file: the opening `---` is line 1."""
    return mark.line + 2


def _read(source: str) -> dict[str, Field]:
    try:
        loader = LOADER(source)
        try:
            return _fields(loader)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        raise _located(exc, source) from exc
    except yaml.reader.ReaderError as exc:
        line = source[:exc.position].count("\n") + 2
        raise FrontMatterError(line, f"a control character (#x{exc.character:04x}) in the front matter; "
                                     "remove it") from exc


def _fields(loader: yaml.SafeLoader | yaml.CSafeLoader) -> dict[str, Field]:
    root = loader.get_single_node()
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise FrontMatterError(_line(root.start_mark), _not_a_mapping(root))
    _keys_as_written(root)
    fields: dict[str, Field] = {}
    for key_node, node in root.value:
        key = key_node.value
        value = _construct(loader, node)
        if isinstance(node, yaml.SequenceNode) and isinstance(value, list):
            value = tuple(ListItem(item, _line(item_node.start_mark), _written(item_node))
                          for item, item_node in zip(value, node.value, strict=True))
        fields[key] = Field(key, value, _line(key_node.start_mark), _written(node))
    return fields


def _keys_as_written(root: yaml.MappingNode) -> None:
    """Read every plain key as the text written, and refuse a key given twice in one mapping.
    A key is a name here, so `on:` in a trigger is the key "on": plain YAML 1.1 would read the
    boolean True, which no field is called, and older pattern files were written that way."""
    for mapping in _mappings(root, set()):
        first: dict[str, int] = {}
        for key_node, _ in mapping.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise FrontMatterError(_line(key_node.start_mark),
                                       "a key must be a name such as title, not a list or a mapping")
            if not key_node.style:  # plain: None from the pure loader, '' from libyaml's
                key_node.tag = _STR
            line = _line(key_node.start_mark)
            if key_node.value in first:
                raise FrontMatterError(line, f"{key_node.value}: given twice (first on line "
                                             f"{first[key_node.value]}); keep one")
            first[key_node.value] = line


def _mappings(node: yaml.Node, seen: set[int]) -> Iterator[yaml.MappingNode]:
    if id(node) in seen:  # an alias points back at a node already visited
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        yield node
        for key_node, value_node in node.value:
            yield from _mappings(key_node, seen)
            yield from _mappings(value_node, seen)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _mappings(item, seen)


def _construct(loader: yaml.SafeLoader | yaml.CSafeLoader, node: yaml.Node) -> Any:
    try:
        return loader.construct_document(node)
    except ValueError as exc:  # e.g. 2025-13-45 looks like a date to YAML but is none
        shown = repr(node.value) if isinstance(node, yaml.ScalarNode) else "this value"
        raise FrontMatterError(_line(node.start_mark), f"{shown} cannot be read as YAML reads it ({exc}); "
                                                       "put it in quotes if it is text") from exc


def _written(node: yaml.Node) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _not_a_mapping(root: yaml.Node) -> str:
    if isinstance(root, yaml.SequenceNode):
        return "the front matter is a list, not 'key: value' lines; start each line with a key"
    hint = "put a space after ':'" if ":" in str(root.value) else "write 'key: value' lines"
    return f"the front matter is a single value, not 'key: value' lines; {hint}"


_HINTS = (
    ("found unexpected end of stream", "a quote or bracket opened here is never closed"),
    ("mapping values are not allowed", "a ': ' inside a value; put the whole value in quotes"),
    ("found undefined alias", "'*' starts an alias in YAML; put the value in quotes"),
    ("could not determine a constructor", "'!' starts a tag in YAML; put the value in quotes"),
)


def _located(exc: yaml.MarkedYAMLError, source: str) -> FrontMatterError:
    """PyYAML's error as `line: what is wrong (column N); what to do`. An error found at the
    end of the text (an unclosed quote or bracket) is placed where that construct began."""
    mark = exc.problem_mark
    if exc.context_mark is not None and (mark is None or mark.index >= len(source.rstrip())):
        mark = exc.context_mark
    problem = exc.problem or exc.context or "not valid YAML"
    if mark is None:
        return FrontMatterError(1, f"{problem}; check the front matter against patterns/README.md")
    return FrontMatterError(_line(mark), f"{problem} (column {mark.column + 1}); "
                                         f"{_hint(problem, source[mark.index:mark.index + 1])}")


def _hint(problem: str, at: str) -> str:
    """What to do about PyYAML's `problem`, found at the character `at`."""
    hint = next((h for start, h in _HINTS if problem.startswith(start)), None)
    if hint is None and at == "\t":
        return "indent with spaces, not tabs"
    return hint or "check the quoting and indentation"


# Writing ------------------------------------------------------------------------------------

class _FlowMapping(dict[str, Any]):
    """A mapping written on one line in braces: `- {regex: '...', 'on': output}`."""


# The pure emitter, even where libyaml is installed: libyaml escapes characters outside the
# Basic Multilingual Plane, so the same pattern would be written differently on two machines.
class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # list items indented under their key, as people write them


_Dumper.add_representer(
    _FlowMapping, lambda dumper, data: dumper.represent_mapping(_MAP, data, flow_style=True))


def render(fields: Mapping[str, Any], body: str) -> str:
    """The file text: `fields` as YAML in the order given, between `---` lines, then `body`.
    Values that a YAML reader would take for something else (yes, 01, 12:30, 2025-10-12) come
    out quoted; paragraphs wrap at WIDTH columns; a mapping inside a list stays on one line."""
    data = {key: [_FlowMapping(v) if isinstance(v, Mapping) else v for v in value]
            if isinstance(value, (list, tuple)) else value
            for key, value in fields.items()}
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=WIDTH,
                     default_flow_style=False)
    return f"{FENCE}\n{text}{FENCE}\n{body}"
