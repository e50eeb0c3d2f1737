"""The pattern library in the TUI: a browser with fuzzy search, a form for a new pattern, and a
command-palette provider."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.analysis.fix_payoff import FixPayoff, RulePaid
from cockpit.patterns.search import rank
from cockpit.printable import printable
from cockpit.report.fix_paid import paid_for, paid_line

if TYPE_CHECKING:
    from cockpit.patterns.library import Pattern

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 90%; height: 85%; padding: 0 1; border: thick $primary;
                    background: $surface; }}
{name} Label.hint {{ color: $text-muted; }}
"""


def pattern_details(p: Pattern, applied: bool, paid: Sequence[RulePaid] = ()) -> Text:
    """A pattern as the browser shows it: every word of the file through the door, never markup;
    under its head, how the fix rule it names paid across sessions (report/fix_paid.py)."""
    text = Text()
    text.append(f"{p.id:02d} · {printable(p.title)}\n", style="bold")
    text.append(f"{printable(p.status)} · saves {p.time_saved_min} min", style="dim")
    text.append("  · applied in this session\n" if applied else "\n", style="bold green")
    if paid:
        text.append(printable(paid_line(paid)) + "\n", style="bold")
    for label, value in (("Problem", p.problem), ("When", p.when), ("Solution", p.solution)):
        text.append(f"\n{label}: ", style="bold")
        text.append(printable(value))
    if p.evidence:
        text.append("\n\nEvidence: ", style="bold")
        text.append(printable(", ".join(p.evidence)))
    if p.body.strip():
        text.append("\n\n" + printable(p.body.strip()))
    return text


class PatternBrowser(ModalScreen[None]):
    """Type to search; up/down to pick; ctrl+o marks the pattern applied in this session."""

    DEFAULT_CSS = DIALOG_CSS.format(name="PatternBrowser") + """
    PatternBrowser OptionList { width: 45%; height: 1fr; }
    PatternBrowser VerticalScroll { width: 55%; height: 1fr; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "dismiss_browser", "Close"),
                Binding("ctrl+o", "mark_applied", "Mark applied"),
                Binding("down", "move(1)", "Pattern below", show=False),
                Binding("up", "move(-1)", "Pattern above", show=False)]

    def __init__(self, patterns: Sequence[Pattern], applied: Sequence[int],
                 on_applied: Callable[[Pattern], None], select: int | None = None,
                 payoffs: Callable[[], Sequence[FixPayoff]] | None = None) -> None:
        super().__init__()
        self.patterns = list(patterns)
        self.applied = set(applied)
        self.on_applied = on_applied
        self._select = select
        self.shown: list[Pattern] = []
        self._payoffs = payoffs
        """Every session's payoffs, read in a thread: every journal of the workspace is read."""
        self.paid: Mapping[int, list[RulePaid]] = {}

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"[b]Patterns[/b] — {len(self.patterns)} in the library; "
                        f"{len(self.applied)} applied in this session")
            yield Input(placeholder="fuzzy search: env abi, smem, baseline…", id="query")
            with Horizontal():
                yield OptionList(id="pattern-list")
                with VerticalScroll():
                    yield Static("", id="pattern-detail")
            yield Label("type to search · ↑↓ pick · ctrl+o mark applied · escape close",
                        classes="hint")

    def on_mount(self) -> None:
        self._fill("")
        if self._select is not None:
            ids = [p.id for p in self.shown]
            if self._select in ids:
                self.query_one(OptionList).highlighted = ids.index(self._select)
        self._show_highlighted()
        if self._payoffs is not None:
            self.read_paid(self._payoffs)

    @work(thread=True, exclusive=True, exit_on_error=False, group="paid")
    def read_paid(self, payoffs: Callable[[], Sequence[FixPayoff]]) -> None:
        """How each named rule paid, read off the app's thread, then shown."""
        paid = paid_for(self.patterns, payoffs())
        try:
            self.app.call_from_thread(self._got_paid, paid)
        except RuntimeError:  # the app is gone meanwhile
            return

    def _got_paid(self, paid: Mapping[int, list[RulePaid]]) -> None:
        self.paid = paid
        if self.is_mounted:
            self._show_highlighted()

    def _fill(self, query: str) -> None:
        self.shown = [p for p, _ in rank(self.patterns, query)] if query.strip() else self.patterns
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(Text(f"{p.id:02d} {'✓ ' if p.id in self.applied else ''}"
                                         + printable(p.title)), id=str(p.id)) for p in self.shown])
        if self.shown:
            options.highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)
        self._show_highlighted()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_highlighted()

    def _current(self) -> Pattern | None:
        index = self.query_one(OptionList).highlighted
        return self.shown[index] if index is not None and index < len(self.shown) else None

    def _show_highlighted(self) -> None:
        p = self._current()
        detail = self.query_one("#pattern-detail", Static)
        detail.update(pattern_details(p, p.id in self.applied, self.paid.get(p.id, ())) if p
                      else Text("No match.", style="dim"))

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if self.shown:
            options.highlighted = ((options.highlighted or 0) + step) % len(self.shown)

    def action_mark_applied(self) -> None:
        p = self._current()
        if p is None or p.id in self.applied:
            return
        self.applied.add(p.id)
        self.on_applied(p)
        self._fill(self.query_one(Input).value)
        self._show_highlighted()

    def action_dismiss_browser(self) -> None:
        self.dismiss(None)


class NewPatternDialog(ModalScreen[dict[str, str] | None]):
    """A form for a new pattern; enter on the last field (or ctrl+s) writes it."""

    DEFAULT_CSS = DIALOG_CSS.format(name="NewPatternDialog") + """
    NewPatternDialog > Vertical { height: auto; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "submit", "Save")]
    FIELDS = (("title", "Title: the lesson in a few words"),
              ("problem", "Problem: what went wrong, with numbers"),
              ("when", "When to apply it"),
              ("solution", "Solution: what to do, concretely"),
              ("time_saved_min", "Minutes it saves next time (a number)"),
              ("trigger", "Optional trigger: a regex on gate output, e.g. undefined symbol"))

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("[b]New pattern[/b] — a failure written down is time saved next session")
            for key, placeholder in self.FIELDS:
                yield Input(placeholder=placeholder, id=f"field-{key}")
            yield Label("tab: next field · enter on the last field or ctrl+s: save · escape: cancel",
                        classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == f"field-{self.FIELDS[-1][0]}":
            self.action_submit()
        else:
            self.focus_next()

    def action_submit(self) -> None:
        values = {key: self.query_one(f"#field-{key}", Input).value.strip() for key, _ in self.FIELDS}
        missing = [key for key in ("title", "problem", "when", "solution") if not values[key]]
        if missing:
            self.notify(f"Fill in: {', '.join(missing)}.", severity="warning")
            return
        if values["time_saved_min"] and not values["time_saved_min"].isdigit():
            self.notify("Minutes saved must be a whole number.", severity="warning")
            return
        self.dismiss(values)

    def action_cancel(self) -> None:
        self.dismiss(None)


class PatternProvider(Provider):
    """The command palette finds patterns by title too."""

    async def search(self, query: str) -> Hits:
        app = self.app
        patterns = getattr(app, "patterns", ())
        matcher = self.matcher(query)
        for p in patterns:
            label = f"Pattern {p.id:02d}: {printable(p.title)}"
            score = matcher.match(label)
            if score > 0:
                # The palette parses a hit's words as markup: a pattern's are escaped.
                yield Hit(score, matcher.highlight(escape(label)),
                          lambda pid=p.id: app.open_patterns(pid),  # type: ignore[attr-defined]
                          help=escape(printable(p.problem)[:120]))
