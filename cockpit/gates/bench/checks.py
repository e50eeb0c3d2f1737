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
    checked = sum(int(as_number(r.get("checked")) or 0) for r in rows)
    check_s = sum(as_number(r.get("check_s")) or 0.0 for r in rows)
    audits = [obj(c).get("records") for r in rows for c in obj(r.get("impl")).values()]
    audited = [obj(a) for a in audits if isinstance(a, dict)]
    parts = []
    if checked:
        parts.append(f"{checked} timed outputs checked against the oracle ({check_s:.1f} s)")
    done = [a for a in audited if "error" not in a]
    if done:
        audit_s = sum(as_number(a.get("audit_s")) or 0.0 for a in done)
        parts.append(f"kernel records audited on {len(done)} candidate configs: the timer saw all their work "
                     f"({audit_s:.1f} s)")
    why_not = next((str(a["error"]) for a in audited if "error" in a), None)
    if why_not is not None:
        parts.append(why_not)
    return "; ".join(parts) or None
