"""What the bench's anti-cheat checks did and what they cost, in one line for its pane: the timed
outputs checked against the oracle (probes/workload/timed_check.py), the candidates' calls audited
by kernel records (probes/workload/escapes.py), each with the seconds it took, from the rows the
result keeps (a row from before the checks has neither: nothing is said)."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.json_fields import JsonObject, as_number, obj


def checks_line(rows: Sequence[JsonObject]) -> str | None:
    """'412 timed outputs checked against the oracle (3.1 s); kernel records audited on 24 candidate
    configs: the timer saw all their work (4.0 s)', or None when the rows carry no check."""
    audited = _audits(rows)
    parts = [_timed_words(rows), _audit_words([a for a in audited if "error" not in a])]
    parts.append(next((str(a["error"]) for a in audited if "error" in a), None))
    return "; ".join(p for p in parts if p) or None


def _audits(rows: Sequence[JsonObject]) -> list[JsonObject]:
    """Every implementation cell's kernel-records audit, in row order."""
    cells = [obj(c) for r in rows for c in obj(r.get("impl")).values()]
    return [obj(c["records"]) for c in cells if isinstance(c.get("records"), dict)]


def _timed_words(rows: Sequence[JsonObject]) -> str | None:
    checked = sum(int(as_number(r.get("checked")) or 0) for r in rows)
    check_s = sum(as_number(r.get("check_s")) or 0.0 for r in rows)
    return f"{checked} timed outputs checked against the oracle ({check_s:.1f} s)" if checked else None


def _audit_words(done: Sequence[JsonObject]) -> str | None:
    if not done:
        return None
    audit_s = sum(as_number(a.get("audit_s")) or 0.0 for a in done)
    return (f"kernel records audited on {len(done)} candidate configs: the timer saw all their work "
            f"({audit_s:.1f} s)")


def audit_missing(rows: Sequence[JsonObject]) -> str | None:
    """Why a candidate's kernel-records audit could not run (the first reason), or None."""
    return next((str(a["error"]) for a in _audits(rows) if "error" in a), None)
