"""The pattern library in the TUI: load it, browse it, mark a pattern applied, write a new one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cockpit.errors import CockpitError
from cockpit.session import events as ev
from cockpit.ui.host import CockpitHost

if TYPE_CHECKING:
    from cockpit.patterns.library import Pattern
    from cockpit.ui.gate_board import GateBoard


class PatternDesk:
    def __init__(self, host: CockpitHost, gates: GateBoard) -> None:
        self.host = host
        self.gates = gates
        self.patterns: tuple[Pattern, ...] = ()

    def load(self) -> None:
        from cockpit.patterns.library import load_library

        try:
            self.patterns, problems = load_library(self.host.workspace.patterns_dir)
        except CockpitError as exc:
            self.host.notify(str(exc), severity="warning", markup=False)
            return
        for problem in problems[:3]:
            self.host.notify(f"pattern skipped: {problem.path.name}:{problem.line}: {problem.message}",
                             severity="warning", markup=False)

    def browse(self, select: int | None = None) -> None:
        from cockpit.ui.patterns import PatternBrowser

        live = self.host.live
        applied = live.state.applied_patterns if live else ()
        if select is None:
            select = self.gates.matched_pattern_id()
        self.host.push_screen(PatternBrowser(self.patterns, applied,
                                             lambda p: self.mark_applied(p, "from the pattern browser"),
                                             select))

    def mark_applied(self, pattern: Pattern, why: str) -> None:
        host = self.host
        if host.append([ev.pattern_applied(host.clock.now(), pattern.id, pattern.title, why)]):
            host.notify(f"Pattern {pattern.id:02d} marked applied.", markup=False)
            host.redraw()

    def apply_matched(self) -> None:
        match = self.gates.matched_pattern()
        if match is None:
            self.host.notify("No pattern matched the selected gate's last run.", severity="warning")
            return
        pattern, why = match
        self.mark_applied(pattern, why)

    def write_new(self) -> None:
        from cockpit.ui.patterns import NewPatternDialog

        host = self.host

        def written(values: dict[str, str] | None) -> None:
            if not values:
                return
            from cockpit.patterns.library import new_pattern
            from cockpit.patterns.triggers import output_trigger

            try:
                triggers = [output_trigger(values["trigger"])] if values["trigger"] else []
                evidence = [host.live.state.id] if host.live else []
                path = new_pattern(host.workspace.patterns_dir, values["title"], values["problem"],
                                   values["when"], values["solution"],
                                   int(values["time_saved_min"] or 0), triggers, evidence)
            except CockpitError as exc:
                host.notify(str(exc), severity="error", markup=False)
                return
            self.load()
            host.notify(f"Wrote {path.name}.", markup=False)

        host.push_screen(NewPatternDialog(), written)
