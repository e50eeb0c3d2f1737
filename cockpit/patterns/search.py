"""Finding a pattern by id, slug or title, with command-palette fuzzy matching: the query's
letters in order, rewarded for landing on word starts and for running together (a run scores
like a word start, so a whole word beats initials scattered over several words), penalised
for each gap.

Each space-separated query word must match on its own (in any order), so "budget smem"
finds "Shared-memory budget" as well as "smem budget" does.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from cockpit.patterns.pattern import Pattern

MATCH = 1.0
WORD_START = 8.0
TEXT_START = 2.0
CONSECUTIVE = 8.0
GAP_OPEN = 2.0
GAP = 0.25
LEADING = 0.05
LEADING_CAP = 2.0

_NONE = float("-inf")


def fuzzy_score(query: str, text: str) -> float | None:
    """How well `query` matches `text` (higher is better), or None when a query word's letters
    do not all occur in order in `text`. Case-insensitive."""
    words = query.lower().split()
    if not words:
        return None
    lowered = text.lower()
    bonus = [_position_bonus(text, j) for j in range(len(text))]
    total = 0.0
    for word in words:
        score = _word_score(word, lowered, bonus)
        if score is None:
            return None
        total += score
    return total


def _position_bonus(text: str, j: int) -> float:
    ch = text[j]
    if not ch.isalnum():
        return 0.0
    if j == 0:
        return WORD_START + TEXT_START
    before = text[j - 1]
    if not before.isalnum():
        return WORD_START
    if before.islower() and ch.isupper():
        return WORD_START / 2
    if before.isalpha() and ch.isdigit():
        return WORD_START / 2
    return 0.0


def _word_score(word: str, lowered: str, bonus: list[float]) -> float | None:
    """Best alignment of `word` as a subsequence of `lowered` (dynamic programming, O(len·len))."""
    n = len(lowered)
    if len(word) > n:
        return None
    previous: list[float] = []
    for i, ch in enumerate(word):
        current = [_NONE] * n
        # best previous-row score for a non-adjacent predecessor k, stored as prev[k] + GAP*k so
        # the gap penalty GAP*(j-k-1) can be applied once j is known
        carried = _NONE
        for j in range(n):
            if i > 0 and j >= 2 and previous[j - 2] > _NONE:
                carried = max(carried, previous[j - 2] + GAP * (j - 2))
            if lowered[j] != ch:
                continue
            here = MATCH + bonus[j]
            if i == 0:
                current[j] = here - min(LEADING_CAP, LEADING * j)
                continue
            best = _NONE
            if j >= 1 and previous[j - 1] > _NONE:
                best = previous[j - 1] + CONSECUTIVE
            if carried > _NONE:
                best = max(best, carried - GAP * (j - 1) - GAP_OPEN)
            if best > _NONE:
                current[j] = here + best
        previous = current
    best_end = max(previous)
    return None if best_end == _NONE else best_end


def rank(library: Sequence[Pattern], query: str) -> list[tuple[Pattern, float]]:
    """Patterns whose title fuzzy-matches `query`, best first (ties: shorter title, lower id)."""
    scored = [(p, s) for p in library if (s := fuzzy_score(query, p.title)) is not None]
    return sorted(scored, key=lambda ps: (-ps[1], len(ps[0].title), ps[0].id))


def find(library: Sequence[Pattern], query: str) -> Pattern | None:
    """By id ("3", "03", "#3"), by file stem or slug, else the best fuzzy title match."""
    q = query.strip()
    m = re.fullmatch(r"#?(\d+)", q)
    if m:
        return next((p for p in library if p.id == int(m.group(1))), None)
    for p in library:
        if q in (p.path.stem, p.slug):
            return p
    ranked = rank(library, q)
    return ranked[0][0] if ranked else None


def close_matches(library: Sequence[Pattern], query: str, n: int = 3) -> list[Pattern]:
    """Patterns a mistyped query was probably after ("enviornment" -> environment validation):
    some query word spelled close to a word of the title."""
    query_words = re.findall(r"[a-z0-9]+", query.lower())

    def likeness(p: Pattern) -> float:
        title_words = re.findall(r"[a-z0-9]+", p.title.lower())
        return max((difflib.SequenceMatcher(None, q, w).ratio() for q in query_words for w in title_words),
                   default=0.0)

    scored = sorted(((likeness(p), p) for p in library), key=lambda sp: (-sp[0], sp[1].id))
    return [p for score, p in scored[:n] if score >= 0.7]
