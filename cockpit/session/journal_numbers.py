"""Which journal lines hold a number the batched JSON parse must not be trusted with (a long
exponent, hundreds of digits): found with a few byte searches over a whole batch, so those lines
alone go to the checked parse (journal.py's `parse_bounded`)."""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate


def suspect_lines(batch: list[bytes]) -> set[int]:
    """The lines of `batch` holding a number that needs the float check, found with a few byte
    searches over the whole batch (digits read as 0: no regex per line); an `e` inside a word
    (a GPU UUID's `9e133`) is not an exponent."""
    joined = b"\n".join(batch)
    shape = joined.translate(_SHAPE)
    hits = [at for needle in (b"e000", b"e-000", b"e+000") for at in _find_all(shape, needle)
            if _in_number(joined, at)]
    hits += _find_all(shape, b"0" * 300)
    if not hits:
        return set()
    starts = list(accumulate((len(raw) + 1 for raw in batch[:-1]), initial=0))
    return {bisect_right(starts, at) - 1 for at in hits}


_SHAPE = bytes.maketrans(b"0123456789E", b"0000000000e")


def _find_all(text: bytes, needle: bytes) -> list[int]:
    found, at = [], text.find(needle)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def _in_number(text: bytes, e_at: int) -> bool:
    """Whether the `e` at `e_at` ends a JSON number's mantissa: digits before it, and before them
    what JSON puts before a number."""
    head = text[max(0, e_at - 40):e_at]
    mantissa = head.rstrip(b"0123456789.-")
    return len(mantissa) < len(head) and head[len(mantissa):][-1:].isdigit() and \
        mantissa[-1:] in (b":", b",", b"[", b" ", b"\t", b"")
