"""Stray typing never fires an action, and never lands anywhere.

The cockpit's actions sit on single letters (n, k, x, q ...), and an engineer who starts typing
a sentence before the editor has focus would otherwise skip phases and cancel builds. Outside
the editor, a letter key is therefore held for a moment: a second printable key inside that
moment means the engineer is typing, and none of those keys acts; the screen says that text goes
into the editor (Tab first) and types nothing: SESSION.md holds what was typed in the editor, and
only that. A letter no action uses is ignored. A letter pressed on its own acts as before, a blink
later (the hold is ~0.25 s, far below a deliberate second key press and far above the gap between
two keys of a typed word).

A key that comes within that gap *after* another printable key is typing too, even when it is
the last of them: keys that arrive in one burst (a paste without bracketed paste, keystrokes
bunched by a laggy SSH link, `tmux send-keys -l "check the timer"`) reach the cockpit together,
and the burst's last letter (`r`, run the gate) must not act because nothing followed it. An
action key acts only when it is pressed alone: no printable key within the gap before or after.
Only printable keys are judged: Escape, Tab and Enter are never held or swallowed.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPING_GAP_S = 0.25


@dataclass(frozen=True)
class HeldKey:
    """Hold `action` for the typing gap; run it if no other key comes."""

    action: str
    char: str


@dataclass(frozen=True)
class Typing:
    """The engineer is typing outside the editor: nothing acts (the screen says where text goes)."""


@dataclass(frozen=True)
class Unused:
    """A key pressed alone that no action uses: ignored."""


class KeyGuard:
    """Decides, key by key, whether a printable key outside the editor is an action or typing.

    `actions` maps a key name (Textual's, e.g. "n", "A", "full_stop") to its action."""

    def __init__(self, actions: dict[str, str], gap_s: float = TYPING_GAP_S) -> None:
        self._actions = actions
        self._gap_s = gap_s
        self.held: HeldKey | None = None
        self._last_t: float | None = None
        """When the last printable key arrived (the key event's own time, not when it was handled:
        a burst's keys are handled one by one, but arrived together)."""

    def press(self, key: str, char: str, t: float | None = None,
              also: dict[str, str] | None = None) -> HeldKey | Typing | Unused:
        """`t`: when the key arrived (monotonic seconds); None: alone, as far as the guard can tell.
        `also`: actions this key has only where the engineer is (j/k in a list), before the app's."""
        after_another = t is not None and self._last_t is not None and 0 <= t - self._last_t < self._gap_s
        if t is not None:
            self._last_t = t
        if self.held is not None or after_another:  # a second key within the gap: typing all along
            self.held = None
            return Typing()
        action = (also or {}).get(key) or self._actions.get(key)
        if action is None:
            return Unused()
        self.held = HeldKey(action, char)
        return self.held

    def release(self, hold: HeldKey) -> bool:
        """The gap is over: True when `hold` is still the key held (run its action)."""
        if self.held is not hold:
            return False
        self.held = None
        return True
