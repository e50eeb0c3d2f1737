"""The pattern library on disk: files load, bad files are reported by file:line while the rest
load, new patterns take the next number and never replace a file, and the library that ships
is complete and cites the team's own sessions."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from cockpit.patterns.library import (
    SHIPPED,
    Pattern,
    PatternError,
    PatternFileError,
    close_matches,
    find,
    load_library,
    new_pattern,
    next_id,
    parse_pattern,
    pattern_slug,
    rank,
    read_pattern,
    render_pattern,
)
from cockpit.patterns.triggers import output_trigger, verdict_trigger

REPO = Path(__file__).resolve().parent.parent
LIBRARY = SHIPPED

GOOD = """---
id: 4
title: Keep the build observable
status: operational
time_saved_min: 20
problem: A silent build looks like a dead box.
when: Any step longer than a minute.
solution: Print progress; treat 60 s of silence as a stall.
evidence:
  - session 007-silent-build
triggers:
  - {regex: 'closed by remote host', on: output}
  - {when: 'status == timeout', gate: build}
---

# Body

Kept as written.
"""


def write(directory: Path, name: str, text: str | bytes) -> Path:
    path = directory / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def sample(path: Path, **changes: object) -> Pattern:
    fields: dict[str, object] = dict(
        id=7, title="Vectorize K loads: float4, #1 fix for 42% bandwidth", status="planned",
        time_saved_min=15,
        problem="A long problem statement " * 8 + "that wraps over several folded lines.",
        when="yes",
        solution='Use "float4" loads \\ keep alignment; 12:30 is not a time here',
        evidence=("session 012-vectorize", "Session N+4, Oct 2025: 0.10× → 0.20×", "on"),
        triggers=(output_trigger(r"uses too much shared data \(0x[0-9a-f]+ bytes", "build"),
                  output_trigger(r"it's [{a,b}] # not a comment"),
                  verdict_trigger("speedup < 0.5"), verdict_trigger("bottleneck == memory-bound", "profile")),
        body="\n# Heading\n\n---\n\nA body with its own --- rule and trailing space \n", path=path,
    )
    fields.update(changes)
    return Pattern(**fields)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def only_this_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about one folder's files and numbers: the shipped library is left out
    (tests/test_patterns_shipped.py tells how the two add up)."""
    monkeypatch.setattr("cockpit.patterns.library.SHIPPED", tmp_path_factory.mktemp("nothing-shipped"))


def test_a_pattern_written_and_read_back_is_the_same_pattern(tmp_path: Path) -> None:
    path = tmp_path / "07-vectorize-k-loads.md"
    pattern = sample(path)
    text = render_pattern(pattern)
    assert parse_pattern(text, path, 7) == pattern
    assert render_pattern(parse_pattern(text, path, 7)) == text
    assert "triggers_mean" not in text  # the default (a firing is a mistake) is left unwritten
    advice = sample(path, triggers_mean="advice")
    assert "\ntriggers_mean: advice\n---\n" in render_pattern(advice)
    assert parse_pattern(render_pattern(advice), path, 7) == advice


def test_a_good_file_loads_with_all_its_fields(tmp_path: Path) -> None:
    write(tmp_path, "04-keep-the-build-observable.md", GOOD)
    (pattern,), problems = load_library(tmp_path)
    assert problems == ()
    assert (pattern.id, pattern.slug, pattern.status, pattern.time_saved_min) == (
        4, "keep-the-build-observable", "operational", 20)
    assert pattern.evidence == ("session 007-silent-build",)
    assert [type(t).__name__ for t in pattern.triggers] == ["OutputTrigger", "VerdictTrigger"]
    assert pattern.body == "\n# Body\n\nKept as written.\n"


@pytest.mark.parametrize(("text", "line", "says"), [
    (GOOD.replace("time_saved_min: 20", "time_saved_min: twenty"), 5, "time_saved_min: 'twenty' is not a whole number"),
    (GOOD.replace("status: operational", "status: maybe"), 4, "status: 'maybe' is not one of operational, planned"),
    (GOOD.replace("id: 4", "id: 5"), 2, "id: 5 but the file name says 04"),
    (GOOD.replace("title: Keep the build observable", "title: yes"), 3, "title: 'yes' reads as a yes/no value (a boolean), not text; put it in quotes"),
    (GOOD.replace("problem: A silent", "problem: Note: a silent"), 6, "a ': ' inside a value; put the whole value in quotes"),
    (GOOD.replace("when: Any", "colour: red\nwhen: Any"), 7, "unknown key 'colour'"),
    (GOOD.replace("solution: Print progress; treat 60 s of silence as a stall.\n", ""), 1, "missing solution"),
    (GOOD.replace("{regex: 'closed by remote host', on: output}", "{regex: '(unclosed', on: output}"), 12,
     "regex '(unclosed' does not compile"),
    (GOOD.replace("'status == timeout'", "'speedup < fast'"), 13, "'<' needs a number"),
    (GOOD.replace("  - {when:", "  - when:"), 13, "(column 30); check the quoting and indentation"),
    (GOOD.replace("id: 4\n", "id: 4\nid: 4\n"), 3, "id: given twice (first on line 2); keep one"),
    (GOOD.replace("---\n\n# Body", "\n# Body"), 1, "no closing '---' line"),
    (GOOD.replace("time_saved_min: 20", "time_saved_min: 020"), 5, "means different things to different YAML readers"),
    (GOOD.replace("---\n\n# Body", "triggers_mean: blame\n---\n\n# Body"), 14,
     "triggers_mean: 'blame' is not one of mistake, advice"),
])
def test_a_malformed_file_is_reported_with_file_and_line_while_the_others_load(
    tmp_path: Path, text: str, line: int, says: str
) -> None:
    write(tmp_path, "03-fine.md", GOOD.replace("id: 4", "id: 3"))
    bad = write(tmp_path, "04-keep-the-build-observable.md", text)
    write(tmp_path, "05-also-fine.md", GOOD.replace("id: 4", "id: 5"))
    patterns, (problem,) = load_library(tmp_path)
    assert [p.id for p in patterns] == [3, 5]
    assert (problem.path, problem.line) == (bad, line)
    assert says in problem.message
    assert str(problem).startswith(f"{bad}:{line}: ")
    assert "\n" not in str(problem)


def test_a_file_that_is_not_utf8_is_reported_at_its_line_and_skipped(tmp_path: Path) -> None:
    latin1 = GOOD.replace("A silent build", "Un build muet, déjà vu").encode("latin-1")
    bad = write(tmp_path, "04-keep-the-build-observable.md", latin1)
    write(tmp_path, "05-fine.md", GOOD.replace("id: 4", "id: 5"))
    patterns, (problem,) = load_library(tmp_path)
    assert [p.id for p in patterns] == [5]
    assert (problem.path, problem.line) == (bad, 6)
    assert "not UTF-8 (byte 0xe9)" in problem.message


def test_files_that_are_not_patterns_are_skipped_or_reported(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "# not a pattern\n")
    write(tmp_path, ".new-pattern-abc.tmp", "half written")
    write(tmp_path, "notes.txt", "scratch")
    odd = write(tmp_path, "Notes About Builds.md", GOOD)
    dup = write(tmp_path, "04-zz-second.md", GOOD)
    write(tmp_path, "04-keep-the-build-observable.md", GOOD)
    patterns, problems = load_library(tmp_path)
    assert [p.path.name for p in patterns] == ["04-keep-the-build-observable.md"]
    assert [(p.path, p.line) for p in problems] == [(dup, 1), (odd, 1)]
    assert "id 4 is also used by 04-keep-the-build-observable.md" in problems[0].message
    assert "not named NN-slug.md" in problems[1].message


def test_no_patterns_folder_yet_is_an_empty_library(tmp_path: Path) -> None:
    assert load_library(tmp_path / "patterns") == ((), ())
    assert next_id(tmp_path / "patterns") == 1


def test_read_pattern_raises_one_line_with_file_and_line(tmp_path: Path) -> None:
    bad = write(tmp_path, "04-x.md", GOOD.replace("status: operational", "status:"))
    with pytest.raises(PatternFileError) as caught:
        read_pattern(bad)
    assert str(caught.value) == f"{bad}:4: status: nothing is not one of operational, planned"


@pytest.mark.parametrize(("title", "slug"), [
    ("../../etc", "etc"),
    ("..", "pattern"),
    ("/etc/passwd", "etc-passwd"),
    ("a/b\\c:d*e?f", "a-b-c-d-e-f"),
    ("Measure the PyTorch baseline before touching the kernel", "measure-the-pytorch-baseline-before-touching"),
    ("Éviter les verrous périmés", "eviter-les-verrous-perimes"),
    ("共享内存", "pattern"),
    ("The", "the"),
])
def test_slugs_are_path_safe(title: str, slug: str) -> None:
    assert pattern_slug(title) == slug


def test_a_title_full_of_path_tricks_still_lands_inside_the_folder(tmp_path: Path) -> None:
    path = new_pattern(tmp_path / "patterns", "../../etc", "p", "w", "s", 5)
    assert path == tmp_path / "patterns" / "01-etc.md"
    assert path.resolve().parent == (tmp_path / "patterns").resolve()


def test_new_pattern_takes_the_next_number_and_loads_back(tmp_path: Path) -> None:
    folder = tmp_path / "patterns"
    first = new_pattern(folder, "Stale lock in torch_extensions", "A killed build leaves a lock.",
                        "A JIT load prints nothing for minutes.", "Delete the lock when no build runs.", 25,
                        triggers=[output_trigger(r"^WARN\s+stale_lock", "env")], evidence=["session 014"])
    write(folder, "07-broken.md", "not a pattern at all")
    second = new_pattern(folder, "Second", "p", "w", "s", 0)
    assert (first.name, second.name) == ("01-stale-lock-in-torch-extensions.md", "08-second.md")
    patterns, problems = load_library(folder)
    assert [p.id for p in patterns] == [1, 8]
    assert [p.path.name for p in problems] == ["07-broken.md"]
    loaded = patterns[0]
    assert (loaded.title, loaded.time_saved_min, loaded.evidence) == (
        "Stale lock in torch_extensions", 25, ("session 014",))
    assert loaded.triggers[0].gate == "env"
    assert not [n for n in os.listdir(folder) if n.startswith(".")], "no temporary file is left behind"


def test_new_pattern_never_overwrites_an_existing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "patterns"
    folder.mkdir()
    theirs = write(folder, "01-same-title.md", "someone else's work\n")
    # Someone writes 01-same-title.md between our scan and our link: we must move on, not replace it.
    monkeypatch.setattr("cockpit.patterns.library.next_id", lambda directory: 1)
    path = new_pattern(folder, "Same title", "p", "w", "s", 1)
    assert path.name == "02-same-title.md"
    assert theirs.read_text() == "someone else's work\n"


def test_two_writers_racing_for_one_number_end_with_distinct_numbers(tmp_path: Path) -> None:
    folder = tmp_path / "patterns"
    folder.mkdir()
    barrier = threading.Barrier(8)
    paths: list[Path] = []

    def writer(i: int) -> None:
        barrier.wait()
        paths.append(new_pattern(folder, f"Writer {i} finding", "p", "w", "s", i))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    patterns, problems = load_library(folder)
    assert problems == ()
    assert sorted(p.id for p in patterns) == list(range(1, 9))
    assert sorted(p.path for p in patterns) == sorted(paths)


def test_without_hard_links_the_file_is_still_never_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: str, dst: str) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    folder = tmp_path / "patterns"
    first = new_pattern(folder, "One", "p", "w", "s", 1)
    monkeypatch.setattr("cockpit.patterns.library.next_id", lambda directory: 1)
    theirs = write(folder, "01-two.md", "keep me\n")
    second = new_pattern(folder, "Two", "p", "w", "s", 2)
    assert (first.name, second.name) == ("01-one.md", "02-two.md")
    assert theirs.read_text() == "keep me\n"
    assert read_pattern(second).title == "Two"


@pytest.mark.parametrize(("field", "value", "says"), [
    ("title", "   ", "the title is empty"),
    ("problem", "bell \x07 inside", "the problem contains a control character"),
    ("title", "t" * 121, "the title is 121 characters"),
])
def test_new_pattern_refuses_what_would_not_be_a_good_pattern(
    tmp_path: Path, field: str, value: str, says: str
) -> None:
    args = {"title": "T", "problem": "p", "when": "w", "solution": "s", field: value}
    with pytest.raises(PatternError, match=says):
        new_pattern(tmp_path, time_saved_min=1, **args)
    assert list(tmp_path.iterdir()) == []


def test_new_pattern_refuses_a_negative_or_fractional_time(tmp_path: Path) -> None:
    for bad in (-5, 1.5, True):
        with pytest.raises(PatternError, match="not a whole number of minutes"):
            new_pattern(tmp_path, "T", "p", "w", "s", bad)  # type: ignore[arg-type]


def test_new_pattern_puts_multi_line_input_on_one_line(tmp_path: Path) -> None:
    path = new_pattern(tmp_path, "  Spaced\n title ", "line one\nline two", "w", "s", 3)
    pattern = read_pattern(path)
    assert (pattern.title, pattern.problem) == ("Spaced title", "line one line two")


# Finding -------------------------------------------------------------------------------------

def library(*titles: str) -> list[Pattern]:
    return [sample(Path(f"{i:02d}-x.md"), id=i, title=t) for i, t in enumerate(titles, 1)]


def test_fuzzy_search_ranks_word_starts_and_whole_words_first() -> None:
    lib = library(
        "Run the compile-time gates in CI on every change",
        "Profile before optimizing, then change one thing at a time",
        "Check the shared-memory budget before compiling",
        "Keep the GPU running",
    )
    assert [p.id for p, _ in rank(lib, "one change")][:2] == [2, 1]
    assert [p.id for p, _ in rank(lib, "smem")] == [3]
    assert [p.id for p, _ in rank(lib, "budget smem")] == [3], "words match in any order"
    assert rank(lib, "gpu")[0][0].id == 4
    assert rank(lib, "xyz") == []


def test_find_by_id_slug_or_fuzzy_title() -> None:
    lib = library("Measure the baseline first", "Validate the environment")
    assert find(lib, "2") is lib[1]
    assert find(lib, "02") is lib[1]
    assert find(lib, "#1") is lib[0]
    assert find(lib, "13") is None, "an id that does not exist is not fuzzy-matched"
    assert find(lib, "env") is lib[1]
    assert find(lib, "BASELINE") is lib[0]
    assert find(lib, "zzz") is None


def test_close_matches_catch_typos() -> None:
    lib = library("Measure the baseline first", "Validate the environment", "Keep the GPU running")
    assert [p.id for p in close_matches(lib, "enviornment")] == [2]
    assert [p.id for p in close_matches(lib, "frist baselnie")] == [1]
    assert close_matches(lib, "qqqq") == []


# The library that ships ----------------------------------------------------------------------

def test_the_library_ships_twelve_operational_and_two_planned_patterns() -> None:
    # 13 was learned in the example session (sessions/20261123-0849-...): the tune gate's kept
    # Hopper tile failed the build gate's L4 check; 14 in sessions/20261123-1109-...: the spills
    # at 32 rows per warp were hoisted addresses.
    patterns, problems = load_library(LIBRARY)
    assert problems == ()
    assert [p.id for p in patterns] == list(range(1, 15))
    assert [p.status for p in patterns].count("operational") == 12
    assert [p.id for p in patterns if p.status == "planned"] == [11, 12]
    assert {p.id: p.time_saved_min for p in patterns} == {
        1: 60, 2: 90, 3: 30, 4: 45, 5: 20, 6: 55, 7: 0, 8: 40, 9: 50, 10: 30, 11: 0, 12: 0, 13: 20, 14: 60}
    assert all(p.evidence for p in patterns)
    assert all(p.body.strip() for p in patterns)


def test_the_library_cites_the_teams_sessions_never_the_documents_it_was_made_from() -> None:
    """Evidence names a session and its month ("Session N+3, Oct 2025: ..."), not a file the
    user has never seen ("seed 003")."""
    shown = [*LIBRARY.glob("*.md"), REPO / "README.md", REPO / "cockpit.toml",
             *(p for p in (REPO / "cockpit").rglob("*") if p.suffix in (".py", ".tcss"))]
    said = [f"{p.relative_to(REPO)}:{n}" for p in shown
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"(?i)\bseeds? \d", line)]
    assert said == []
    patterns, _ = load_library(LIBRARY)
    # ... or a session committed in this repository, by its id ("Session 20261123-0849 (H100, ...").
    assert all(re.match(r"(Session N(\+\d)?, |Session \d{8}-\d{4} |Loop 1 session, |The team's )", e)
               for p in patterns for e in p.evidence)
