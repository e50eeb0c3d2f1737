"""The bench after a profile: the profile's one fix held to what this bench realized
(analysis/fix_payoff.py), gathered as the bench gate decides.

A profile of this session is joined with the first bench after it that keeps or reverts (a later
bench finds it taken): its fix (the kernel the profile's summary speaks of), the decision's
speedup over the bench it compared with and that speedup's interval, the commits the two ran on
with what git says changed in the kernel's files since the profile, and the notes the engineer
wrote in between. A profile from before the commit was recorded, a workspace that is no git
checkout, a bench with no config to compare: each is said as missing, never guessed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cockpit.analysis.fix_payoff import FixPayoff, Predicted
from cockpit.analysis.keep import BenchRecord, KeepResult, speedup_interval
from cockpit.errors import CockpitError
from cockpit.gates import kernel_git
from cockpit.gates.bench.result import read_bench_result
from cockpit.gates.catalog import measures
from cockpit.json_fields import JsonObject, obj, text, texts, whole
from cockpit.printable import printable
from cockpit.session.bounds import cut
from cockpit.session.gate_run import GateRunRecord
from cockpit.session.journal import JOURNAL_NAME
from cockpit.session.log_md import read_log_lines
from cockpit.session.saved_state import recent_state
from cockpit.session.state import SessionState

COMMIT = "commit"
"""The key a bench's or a profile's result keeps the workspace's head commit under."""
LOG_SEEN = "log_lines_seen"
"""The key a profile's result keeps the count of SESSION.md's Log lines under as it finished: the
lines after them are what the engineer wrote before the bench that pays the profile off."""
NOTES_MOST = 5
"""Log lines a payoff keeps (the last ones), each cut to SUBJECT_MAX characters."""
FIX = "fix"
"""The key a profile's result keeps its one fix under: {"line": the fix, "estimates": ncu's first
estimate's line when it chose the fix} (gates/profile/gate.py writes it)."""


def session_state(workspace: Path, session_dir: Path) -> SessionState | None:
    """The session's recent state, as the profile gate reads it (session/saved_state.py); None
    when its journal cannot be read."""
    try:
        return recent_state(session_dir / JOURNAL_NAME, workspace)
    except CockpitError:
        return None


def profile_to_join(state: SessionState, workload: str | None) -> tuple[GateRunRecord, JsonObject] | None:
    """The session's latest finished profile of this workload that no decided bench followed yet,
    with the fix its result keeps (`FIX`; a profile from before it is not joined)."""
    for run in reversed([r for r in state.gate_runs if r.finished]):
        if measures(run.gate) and _decided(run):
            return None  # the latest decided bench came after every earlier profile: taken
        fix = _fix_of(run, workload)
        if fix is not None:
            return run, fix
    return None


def _decided(run: GateRunRecord) -> bool:
    bench = read_bench_result(run.result_inline)
    return bench is not None and bench.keep is not None and bench.keep.decides


def _fix_of(run: GateRunRecord, workload: str | None) -> JsonObject | None:
    """A passed profile's fix, when it profiled this workload (or does not say which)."""
    if run.gate != "profile" or run.status != "pass":
        return None
    fix, said = obj(run.result.get(FIX)), run.result.get("workload")
    return fix if text(fix.get("line")) and said in (None, workload) else None


def join(workspace: Path, session_dir: Path, run_id: str, keep: KeepResult, current: BenchRecord,
         past: Sequence[BenchRecord], paths: Sequence[str], commit: str | None) -> FixPayoff | None:
    """This bench's payoff of the profile before it; None when it decides nothing or no profile
    of this session waits for one."""
    state = session_state(workspace, session_dir) if keep.decides else None
    found = profile_to_join(state, current.workload) if state is not None else None
    if state is None or found is None:
        return None
    run, fix = found
    realized, configs = _realized(past, keep.reference, current)
    predicted = Predicted.of_fix(text(fix.get("line")) or "", texts(fix.get("estimates")),
                                 f"{state.id}/{run.run_id}")
    return FixPayoff(predicted, f"{state.id}/{run_id}", keep.action, realized, configs, keep.reference,
                     _changed(workspace, run.result.get(COMMIT), commit, paths),
                     _notes_since(state, run, session_dir))


def _notes_since(state: SessionState, run: GateRunRecord, session_dir: Path) -> tuple[str, ...]:
    """What the engineer wrote after the profile finished: the journal's notes, then the lines
    added to SESSION.md's Log since (the last NOTES_MOST, each cut, hidden characters spelled
    out); a profile from before it kept the count has none from SESSION.md."""
    after = run.finished_t or run.started_t
    noted = [n.text for n in state.notes if n.t >= after]
    written = [*noted, *_written(run, session_dir)][-NOTES_MOST:]
    return tuple(cut(printable(n), SUBJECT_MAX, "SESSION.md", " ") for n in written if n)


def _written(run: GateRunRecord, session_dir: Path) -> list[str]:
    """The Log lines after the count the profile kept, their list marks off."""
    seen = whole(run.result.get(LOG_SEEN))
    lines = read_log_lines(session_dir) if seen is not None else None
    if lines is None or seen is None:
        return []
    return [line.lstrip("-* ").strip() for line in lines[max(0, seen):]]


def _realized(past: Sequence[BenchRecord], reference_run: str | None, current: BenchRecord
              ) -> tuple[tuple[float, float, float] | None, int]:
    """The speedup over the bench compared with and its interval, and over how many configs."""
    reference = next((r for r in past if r.run == reference_run), None)
    found = speedup_interval(reference, current) if reference is not None else None
    return (found[:3], found[3]) if found is not None else (None, 0)


def _changed(workspace: Path, before: object, now: str | None, paths: Sequence[str]) -> str | None:
    """"abc123 -> def456: 1 file changed, 12 insertions(+), 3 deletions(-), in "fewer registers"
    (the working tree's kernel files against the profile's commit, and the subjects of the commits
    in between that touched them, each cut to SUBJECT_MAX, hidden characters spelled out); None when
    either commit is unknown."""
    if not isinstance(before, str) or not before or now is None:
        return None
    try:
        stat = kernel_git.diff_stat_since(workspace, before, paths)
        subjects = kernel_git.subjects_since(workspace, before, paths)
    except CockpitError as exc:
        return f"{before} -> {now}: {exc}"
    summary = stat.splitlines()[-1].strip() if stat else "no change in the kernel's files"
    said = ", ".join(f'"{cut(printable(s), SUBJECT_MAX, "git log", " ")}"' for s in subjects)
    return f"{before} -> {now}: {summary}" + (f", in {said}" if said else "")


SUBJECT_MAX = 100
"""Characters of a commit's subject, or of a line of the Log, kept in the payoff (session/bounds.py
`cut` says how many more)."""
