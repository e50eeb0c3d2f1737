"""The pattern library: `patterns/NN-slug.md` files, each one failure turned into a rule.

A file is YAML front matter (`frontmatter.py`, its values checked by `pattern_values.py`) and a
markdown body (a pattern: `pattern.py`; finding by id or title: `search.py`, re-exported). A bad
file is a `LoadProblem` (file:line: what is wrong) and the others load; a new pattern takes the
next free number, never a file.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.files import RefusedFile, read_file
from cockpit.patterns import frontmatter as fm
from cockpit.patterns.pattern import FILE_NAME, SHIPPED, Pattern, PatternStatus, Trigger
from cockpit.patterns.pattern_values import CONTROL, TITLE_MAX, checked_pattern
from cockpit.patterns.search import close_matches, find, rank
from cockpit.patterns.triggers import trigger_to_mapping
from cockpit.session.inside import OutsideWorkspace, confine
from cockpit.slug import slugify

if sys.platform != "win32":
    import fcntl

__all__ = ["LoadProblem", "Pattern", "PatternError", "PatternFileError", "PatternStatus", "close_matches",
           "find", "load_library", "new_pattern", "next_id", "parse_pattern", "pattern_slug", "rank",
           "read_pattern", "render_pattern"]

_NUMBERED = re.compile(r"^(\d+)-")
MAX_PATTERN_BYTES = 1 << 20
"""The biggest pattern file read: a pattern is a page (the shipped ones are 2 to 6 KB)."""


class PatternError(CockpitError):
    """A pattern cannot be written as given, or the library cannot be listed."""


class PatternFileError(PatternError):
    """A pattern file that does not load: `path:line: message`."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


@dataclass(frozen=True)
class LoadProblem:
    """A file that did not load: `path:line: message`."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


# Reading ------------------------------------------------------------------------------------

def load_patterns(workspace_dir: Path) -> tuple[tuple[Pattern, ...], tuple[LoadProblem, ...]]:
    """The shipped library with the workspace's `patterns/` on top: a workspace file adds a
    pattern, or replaces the shipped one of the same id (your own wording of a rule wins)."""
    shipped, problems = load_library(SHIPPED)
    own, own_problems = load_library(workspace_dir, workspace=workspace_dir.parent)
    by_id = {p.id: p for p in shipped}
    by_id.update({p.id: p for p in own})
    return tuple(sorted(by_id.values(), key=lambda p: p.id)), problems + own_problems


def load_library(directory: Path, workspace: Path | None = None
                 ) -> tuple[tuple[Pattern, ...], tuple[LoadProblem, ...]]:
    """Every `NN-slug.md` in `directory`, by id, and a problem for each file that did not load.
    No directory yet is an empty library; README.md and dotfiles are not patterns. With
    `workspace`, a file (or the folder) that a symlink leads out of it is a problem, never read."""
    try:
        if workspace is not None:
            confine(directory, workspace)
    except OutsideWorkspace as exc:
        return (), (LoadProblem(directory, 1, str(exc)),)
    patterns: list[Pattern] = []
    problems: list[LoadProblem] = []
    by_id: dict[int, Path] = {}
    for name in _pattern_names(directory):
        path = directory / name
        pattern = _load_one(path, workspace)
        if isinstance(pattern, LoadProblem):
            problems.append(pattern)
        elif pattern.id in by_id:
            problems.append(LoadProblem(path, 1, f"id {pattern.id} is also used by {by_id[pattern.id].name}; "
                                                 "renumber one of them"))
        else:
            by_id[pattern.id] = path
            patterns.append(pattern)
    return tuple(sorted(patterns, key=lambda p: p.id)), tuple(problems)


def _pattern_names(directory: Path) -> list[str]:
    """The names in `directory` that may be patterns, sorted: not README.md, not dotfiles, not
    folders (a FIFO named like a pattern is named as a problem, never opened); none when there
    is no directory yet."""
    try:
        names = sorted(entry.name for entry in os.scandir(directory) if not entry.is_dir())
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise _unlistable(directory, exc) from exc
    return [name for name in names
            if name.endswith(".md") and not name.startswith(".") and name.lower() != "readme.md"]


def _load_one(path: Path, workspace: Path | None) -> Pattern | LoadProblem:
    """One library file: its pattern, or why it did not load (a symlink out of `workspace` too)."""
    try:
        return read_pattern(confine(path, workspace) if workspace is not None else path)
    except OutsideWorkspace as exc:
        return LoadProblem(path, 1, str(exc))
    except PatternFileError as exc:
        return LoadProblem(path, exc.line, exc.message)


def read_pattern(path: Path) -> Pattern:
    """One pattern file; PatternFileError (file:line: what is wrong) when it does not load."""
    m = FILE_NAME.match(path.name)
    if m is None:
        raise PatternFileError(path, 1, "not named NN-slug.md (two or more digits, then lowercase "
                                        "words joined by '-'); rename it, or move it out of patterns/")
    try:
        raw = read_file(path, MAX_PATTERN_BYTES, "a pattern file may be")
    except RefusedFile as exc:
        raise PatternFileError(path, 1, str(exc.strerror)) from exc
    except OSError as exc:
        raise PatternFileError(path, 1, f"cannot read ({exc.strerror}); check its permissions") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        bad = f"0x{raw[exc.start]:02x}"
        raise PatternFileError(path, line, f"not UTF-8 (byte {bad}); re-save the file as UTF-8") from exc
    return parse_pattern(text.removeprefix("\ufeff"), path, int(m.group(1)))


def parse_pattern(text: str, path: Path, file_id: int | None = None) -> Pattern:
    """A pattern from a file's text; `file_id` is the NN of its name, which `id` must equal.
    PatternFileError (file:line: what is wrong) when it does not hold a valid pattern."""
    try:
        return checked_pattern(fm.split(text), path, file_id)
    except fm.FrontMatterError as exc:
        raise PatternFileError(path, exc.line, exc.message) from exc


def next_id(directory: Path) -> int:
    """One more than the highest NN among the files in `directory` and the shipped library
    (broken files count too): a new pattern never takes a shipped one's id by accident."""
    return max([*_taken_ids(directory), *_taken_ids(SHIPPED)], default=0) + 1


def _unlistable(directory: Path, exc: OSError) -> PatternError:
    return PatternError(f"{directory}: cannot list the patterns ({exc.strerror}); check its permissions")


def _taken_ids(directory: Path) -> list[int]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise _unlistable(directory, exc) from exc
    return [int(m.group(1)) for name in names if name.endswith(".md") and (m := _NUMBERED.match(name))]


# Writing ------------------------------------------------------------------------------------

_TRAILING_FILLER = {"a", "an", "and", "at", "by", "for", "in", "of", "on", "or", "the", "to", "when", "with"}


def pattern_slug(title: str) -> str:
    """A file-name-safe slug of the title: lowercase ASCII words joined by '-', at most 48
    characters, never a path ('../../etc' -> 'etc'), never ending on a filler word."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    if not re.search(r"[A-Za-z0-9]", ascii_title):
        return "pattern"
    words = slugify(title, limit=48).split("-")
    while len(words) > 1 and words[-1] in _TRAILING_FILLER:
        words.pop()
    return "-".join(words)


def render_pattern(p: Pattern) -> str:
    """The file text of `p`, keys in the order of pattern_values.KEYS; `parse_pattern` reads it back as an
    equal pattern."""
    fields: dict[str, object] = {
        "id": p.id, "title": p.title, "status": p.status, "time_saved_min": p.time_saved_min,
        "problem": p.problem, "when": p.when, "solution": p.solution,
        "evidence": list(p.evidence), "triggers": [trigger_to_mapping(t) for t in p.triggers],
    }
    if p.triggers_mean != "mistake":  # the default is left unwritten
        fields["triggers_mean"] = p.triggers_mean
    return fm.render(fields, p.body)


def new_pattern(
    directory: Path, title: str, problem: str, when: str, solution: str, time_saved_min: int,
    triggers: Sequence[Trigger] = (), evidence: Sequence[str] = (),
) -> Path:
    """Write `directory/NN-slug.md` with the next free NN and return its path. The file appears
    whole (temp file, then a hard link that fails rather than replace), never over another, and
    two writers at once (other panes, other processes) get different numbers."""
    clean = _clean_texts({"title": title, "problem": problem, "when": when, "solution": solution})
    if isinstance(time_saved_min, bool) or not isinstance(time_saved_min, int) or time_saved_min < 0:
        raise PatternError(f"time saved {time_saved_min!r} is not a whole number of minutes ≥ 0")
    slug = pattern_slug(clean["title"])
    _make_folder(directory)
    with _one_writer_at_a_time(directory):
        number = next_id(directory)
        while True:
            path = directory / f"{number:02d}-{slug}.md"
            pattern = Pattern(
                id=number, title=clean["title"], status="operational", time_saved_min=time_saved_min,
                problem=clean["problem"], when=clean["when"], solution=clean["solution"],
                evidence=tuple(" ".join(e.split()) for e in evidence if e.strip()),
                triggers=tuple(triggers), body=_new_body(number, clean), path=path,
            )
            text = render_pattern(pattern)
            parse_pattern(text, path, number)  # never write a file the loader would reject
            if _publish(directory, path, text):
                return path
            number = max(number, *_taken_ids(directory)) + 1


def _clean_texts(fields: Mapping[str, str]) -> dict[str, str]:
    """The texts of a new pattern on one line each, whitespace runs made one space: each says
    something, in plain text, and the title fits a line."""
    clean = {key: " ".join(str(value).split()) for key, value in fields.items()}
    for key, value in clean.items():
        if not value:
            raise PatternError(f"the {key} is empty; say it in one sentence")
        if CONTROL.search(value):
            raise PatternError(f"the {key} contains a control character; write plain text")
    if len(clean["title"]) > TITLE_MAX:
        raise PatternError(f"the title is {len(clean['title'])} characters; keep it under {TITLE_MAX}")
    return clean


def _make_folder(directory: Path) -> None:
    """The workspace's patterns folder, made if need be, never through a symlink out of it."""
    try:
        confine(directory, directory.parent)
    except OutsideWorkspace as exc:
        raise PatternError(str(exc)) from exc
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PatternError(f"{directory}: cannot create the patterns folder ({exc.strerror}); "
                           "fix its permissions or pass another --workspace") from exc


@contextlib.contextmanager
def _one_writer_at_a_time(directory: Path) -> Iterator[None]:
    """An exclusive flock on the folder itself (no lock file to commit by mistake); closing
    the descriptor releases it, even when the writer dies."""
    if sys.platform == "win32":
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _new_body(number: int, texts: Mapping[str, str]) -> str:
    return (f"\n# {number:02d} · {texts['title']}\n\n"
            f"**Problem.** {texts['problem']}\n\n"
            f"**When to apply.** {texts['when']}\n\n"
            f"**Solution.** {texts['solution']}\n")


def _publish(directory: Path, path: Path, text: str) -> bool:
    """Put `text` at `path` all at once; False when that name is already taken."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".new-pattern-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # unlike rename, a link never replaces an existing file
        except FileExistsError:
            return False
        except OSError:
            return _reserve_and_replace(tmp, path)
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _reserve_and_replace(tmp: str, path: Path) -> bool:
    """For file systems without hard links: claim the name exclusively, then rename over it."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        return False
    except OSError as exc:
        raise PatternError(f"{path}: cannot write ({exc.strerror}); check the patterns folder") from exc
    os.replace(tmp, path)
    return True
