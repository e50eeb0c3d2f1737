"""The pattern library in the TUI: load it, browse it, mark a pattern applied, write a new one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cockpit.errors import CockpitError
from cockpit.patterns.pattern import library_size
from cockpit.session import events as ev
from cockpit.ui.controllers.host import CockpitHost

if TYPE_CHECKING:
    from cockpit.patterns.library import Pattern
    from cockpit.ui.controllers.gate_board import GateBoard


class PatternDesk:
    """The library is read when something first needs it (a finished gate run to match, the
    browser, the palette), not at start: it costs YAML and ~1 MiB an idle cockpit never uses."""

    def __init__(self, host: CockpitHost, gates: GateBoard) -> None:
        self.host = host
        self.gates = gates
        self._patterns: tuple[Pattern, ...] | None = None
        self._files: int | None = None

    @property
    def patterns(self) -> tuple[Pattern, ...]:
        if self._patterns is None:
            self.load()
        return self._patterns or ()

    def size(self) -> int:
        """Patterns in the library: those read, else the files there (the header's count, read
        once)."""
        if self._patterns is not None:
            return len(self._patterns)
        if self._files is None:
            self._files = library_size(self.host.workspace.patterns_dir)
        return self._files

    def load(self) -> None:
        from cockpit.patterns.library import load_patterns

        self._patterns = ()
        try:
            self._patterns, problems = load_patterns(self.host.workspace.patterns_dir)
        except CockpitError as exc:
            self.host.notify(str(exc), severity="warning", markup=False)
            return
        for problem in problems[:3]:
            self.host.notify(f"pattern skipped: {problem.path.name}:{problem.line}: {problem.message}",
                             severity="warning", markup=False)

    def browse(self, select: int | None = None) -> None:
        from cockpit.ui.screens.patterns import PatternBrowser

        live = self.host.live
        applied = live.state.applied_patterns if live else ()
        if select is None:
            select = self.gates.matched_pattern_id()
        from cockpit.report.fix_paid import workspace_payoffs

        workspace = self.host.workspace
        self.host.push_screen(PatternBrowser(self.patterns, applied,
                                             lambda p: self.mark_applied(p, "from the pattern browser"),
                                             select, lambda: workspace_payoffs(workspace)))

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
        from cockpit.ui.screens.patterns import NewPatternDialog

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
