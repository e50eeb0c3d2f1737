"""Pattern front matter is YAML: a file reads as YAML reads it, what the cockpit writes reads
back the same (here and in any other YAML reader), and a file that does not read is refused
with its file and line. Every test runs with libyaml's loader and with PyYAML's pure one."""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from cockpit.patterns import frontmatter as fm
from cockpit.patterns.library import (
    SHIPPED,
    Pattern,
    PatternFileError,
    load_library,
    parse_pattern,
    read_pattern,
    render_pattern,
)
from cockpit.patterns.triggers import output_trigger, trigger_from_mapping, verdict_trigger
from tests.test_patterns_library import GOOD

REPO = Path(__file__).resolve().parent.parent
LIBRARY = sorted((SHIPPED).glob("[0-9]*.md"))
LOADERS = [yaml.SafeLoader, *([yaml.CSafeLoader] if hasattr(yaml, "CSafeLoader") else [])]


@pytest.fixture(autouse=True, params=LOADERS, ids=lambda loader: loader.__name__)
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(fm, "LOADER", request.param)
    return request.param


def front(text: str) -> str:
    return text.split("---\n")[1]


def sample(**changes: Any) -> Pattern:
    fields: dict[str, Any] = dict(
        id=7, title="Vectorize K loads", status="operational", time_saved_min=15,
        problem="Scalar loads leave bandwidth unused.", when="The profile says memory bound.",
        solution="Load float4.", evidence=(), triggers=(), body="\n# Body\n", path=Path("07-vectorize.md"),
    )
    fields.update(changes)
    return Pattern(**fields)


# Round trips ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.name)
def test_every_pattern_in_the_library_reads_back_the_same_after_the_cockpit_rewrites_it(path: Path) -> None:
    pattern = read_pattern(path)
    text = render_pattern(pattern)
    assert parse_pattern(text, path, pattern.id) == pattern
    assert render_pattern(parse_pattern(text, path, pattern.id)) == text, "writing is stable"


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.name)
def test_what_the_cockpit_writes_means_the_same_to_any_yaml_reader(path: Path, loader: Any) -> None:
    pattern = read_pattern(path)
    theirs = yaml.load(front(render_pattern(pattern)), Loader=loader)
    assert [trigger_from_mapping(t) for t in theirs["triggers"]] == list(pattern.triggers)
    assert (theirs["title"], theirs["problem"], theirs["evidence"]) == (
        pattern.title, pattern.problem, list(pattern.evidence))


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.name)
def test_the_library_files_mean_the_same_to_plain_pyyaml_but_for_the_bare_on_key(path: Path, loader: Any) -> None:
    text = path.read_text(encoding="utf-8")
    ours = {key: [i.value for i in f.value] if isinstance(f.value, tuple) else f.value
            for key, f in fm.split(text).fields.items()}
    theirs = yaml.load(front(text), Loader=loader)
    for trigger in theirs.get("triggers") or []:
        if True in trigger:  # YAML 1.1 reads a bare `on` key as a boolean; we read the word
            trigger["on"] = trigger.pop(True)
    assert ours == theirs


HOSTILE = [
    "yes", "No", "on", "off", "null", "~", "true", "01", "0x1f", "1_000", "1e3", "12:30", "2025-10-12",
    ".inf", "Vectorize K loads: float4, #1 fix", "it's 'single' and \"double\"", "- a leading dash",
    "# not a comment", "[brackets] and {braces}", "*alias &anchor !tag", "a trailing colon:",
    "back\\slash \\d+", "é × → 共享内存 😀", "%YAML", "@at `tick`", "> folded? | literal?",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_text_that_yaml_would_read_as_something_else_is_written_so_it_comes_back_as_text(
    value: str, loader: Any
) -> None:
    pattern = sample(title=value, problem=f"{value} then more words", evidence=(value,),
                     triggers=(output_trigger(value), verdict_trigger(f"note == {value}")) if value.isalpha() else ())
    text = render_pattern(pattern)
    assert parse_pattern(text, pattern.path, 7) == pattern
    theirs = yaml.load(front(text), Loader=loader)
    assert (theirs["title"], theirs["evidence"]) == (value, [value])


def test_values_yaml_reads_specially_are_quoted_in_the_file() -> None:
    text = render_pattern(sample(title="yes", when="12:30", evidence=("2025-10-12", "01", "on"),
                                 triggers=(output_trigger("it's [{a,b}] # not a comment"),)))
    assert "title: 'yes'\n" in text
    assert "when: '12:30'\n" in text
    assert "evidence:\n  - '2025-10-12'\n  - '01'\n  - 'on'\n" in text
    assert "triggers:\n  - {regex: 'it''s [{a,b}] # not a comment', 'on': output}\n" in text


def test_long_paragraphs_wrap_for_reading_and_read_back_as_one_line() -> None:
    long = "A long problem statement " * 8 + "that wraps over several lines."
    text = render_pattern(sample(problem=long.strip()))
    lines = front(text).splitlines()
    assert max(len(line) for line in lines) <= fm.WIDTH + len("statement "), "a line ends at the word past WIDTH"
    assert lines[lines.index(next(ln for ln in lines if ln.startswith("problem:"))) + 1].startswith("  ")
    assert parse_pattern(text, Path("07-x.md")).problem == long.strip()


def test_multi_line_text_keeps_its_lines_through_the_front_matter() -> None:
    value = "line one\nline two\n\nafter a blank line\n  indented"
    doc = fm.split(fm.render({"note": value, "items": [value]}, "body\n"))
    assert doc.fields["note"].value == value
    assert doc.fields["items"].value[0].value == value
    assert doc.body == "body\n"


def test_a_folded_or_wrapped_paragraph_is_one_line_but_a_literal_block_is_refused(tmp_path: Path) -> None:
    folded = GOOD.replace("problem: A silent build looks like a dead box.",
                          "problem: >-\n  A silent build\n  looks like a dead box.")
    wrapped = GOOD.replace("problem: A silent build looks like a dead box.",
                           "problem: A silent build\n  looks like a dead box.")
    for text in (folded, wrapped):
        assert parse_pattern(text, Path("04-x.md"), 4).problem == "A silent build looks like a dead box."
    literal = GOOD.replace("problem: A silent build looks like a dead box.", "problem: |\n  line one\n  line two")
    with pytest.raises(PatternFileError, match=re.escape("04-x.md:6: problem keeps line breaks; write one paragraph")):
        parse_pattern(literal, Path("04-x.md"), 4)


def test_a_bare_on_key_is_the_word_on_and_the_writer_quotes_it() -> None:
    (item,) = fm.split("---\ntriggers:\n  - {regex: 'x', on: output}\n---\n").fields["triggers"].value
    assert item.value == {"regex": "x", "on": "output"}
    assert "'on': output" in fm.render({"triggers": [item.value]}, "")


def test_the_body_is_everything_after_the_closing_line_and_windows_line_endings_read_too() -> None:
    assert fm.split("---\na: 1\n---\n# Title\n\n---\nmore\n").body == "# Title\n\n---\nmore\n"
    doc = fm.split("---\r\na: text\r\nb:\r\n  - x\r\n---\r\nbody\r\n")
    assert (doc.fields["a"].value, doc.fields["b"].value, doc.body) == ("text", (fm.ListItem("x", 4, "x"),), "body\n")


def test_fields_and_list_items_know_their_lines_and_how_they_were_written() -> None:
    doc = fm.split("---\n# a comment\nid: 4\nwhen: >-\n  two\n  lines\nitems:\n  - one\n\n  - 2025-10-12\n---\n")
    assert (doc.fields["id"].line, doc.fields["id"].written) == (3, "4")
    assert doc.fields["when"].line == 4
    assert doc.fields["items"].value == (fm.ListItem("one", 8, "one"),
                                         fm.ListItem(datetime.date(2025, 10, 12), 10, "2025-10-12"))


# Errors name the file and the line ------------------------------------------------------------

@pytest.mark.parametrize(("change", "line", "says"), [
    (("---\nid: 4", "id: 4"), 1, "must start with a '---' line"),
    (("---\n\n# Body", "\n# Body"), 1, "no closing '---' line"),
    (("problem: A silent", "problem: Note: a silent"), 6, "a ': ' inside a value; put the whole value in quotes"),
    (("title: Keep the build observable", 'title: "Keep the build observable'), 3, "(column 8)"),
    (("status: operational", "\tstatus: operational"), 4, "indent with spaces, not tabs"),
    (("id: 4\n", "id: 4\nid: 4\n"), 3, "id: given twice (first on line 2); keep one"),
    (("{regex: 'closed by remote host', on: output}", "{regex: 'a', regex: 'b'}"), 12, "regex: given twice"),
    (("title: Keep the build observable", "title: *the-build"), 3, "'*' starts an alias"),
    (("title: Keep the build observable", "title: !!python/object/apply:os.system ['true']"), 3,
     "'!' starts a tag in YAML"),
    (("title: Keep the build observable", "title: bell \x07 inside"), 3, "a control character (#x0007)"),
    (("title: Keep the build observable", "title: 2025-13-45"), 3, "'2025-13-45' cannot be read"),
    (("  - {when:", "  - when:"), 13, "check the quoting and indentation"),
    (("  - session 007", "  - x\n - session 007"), 11, ""),
])
def test_front_matter_that_does_not_read_is_refused_with_file_and_line(
    tmp_path: Path, change: tuple[str, str], line: int, says: str
) -> None:
    old, new = change
    assert old in GOOD
    path = tmp_path / "04-keep-the-build-observable.md"
    path.write_text(GOOD.replace(old, new), encoding="utf-8")
    with pytest.raises(PatternFileError) as caught:
        read_pattern(path)
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("front_matter", "line", "says"), [
    ("- a\n- b\n", 2, "the front matter is a list, not 'key: value' lines; start each line with a key"),
    ("title:x\n", 2, "the front matter is a single value, not 'key: value' lines; put a space after ':'"),
    ("just some words\n", 2, "the front matter is a single value, not 'key: value' lines; write 'key: value' lines"),
])
def test_front_matter_that_is_not_a_mapping_is_refused_clearly(
    tmp_path: Path, front_matter: str, line: int, says: str
) -> None:
    path = tmp_path / "04-x.md"
    path.write_text(f"---\n{front_matter}---\nbody\n", encoding="utf-8")
    patterns, (problem,) = load_library(tmp_path)
    assert patterns == ()
    assert str(problem) == f"{path}:{line}: {says}"


def test_empty_front_matter_asks_for_the_keys(tmp_path: Path) -> None:
    path = tmp_path / "04-x.md"
    path.write_text("---\n---\nbody\n", encoding="utf-8")
    with pytest.raises(PatternFileError, match=r"04-x.md:1: missing id, title, status"):
        read_pattern(path)
