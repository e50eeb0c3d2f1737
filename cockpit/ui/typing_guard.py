"""Stray typing never fires an action.

The cockpit's actions sit on single letters (n, k, x, q ...), and an engineer who starts typing
a sentence before the editor has focus would otherwise skip phases and cancel builds. Outside
the editor, a letter key is therefore held for a moment: a second printable key inside that
moment means the engineer is typing, and both keys go to the editor as text; a letter that no
action uses goes to the editor straight away. A letter pressed on its own acts as before, a
blink later (the hold is ~0.25 s, far below a deliberate second key press and far above the
gap between two keys of a typed word).
"""

from __future__ import annotations

from dataclasses import dataclass

TYPING_GAP_S = 0.25


@dataclass(frozen=True)
class Hold:
    """Hold `action` for the typing gap; run it if no other key comes."""

    action: str
    char: str


@dataclass(frozen=True)
class Type:
    """The engineer is typing: put `text` in the editor (and focus it)."""

    text: str


class KeyGuard:
    """Decides, key by key, whether a printable key outside the editor is an action or typing.

    `actions` maps a key name (Textual's, e.g. "n", "A", "full_stop") to its action."""

    def __init__(self, actions: dict[str, str]) -> None:
        self._actions = actions
        self.held: Hold | None = None

    def press(self, key: str, char: str) -> Hold | Type:
        if self.held is not None:  # a second key within the gap: it was typing all along
            text, self.held = self.held.char + char, None
            return Type(text)
        action = self._actions.get(key)
        if action is None:
            return Type(char)
        self.held = Hold(action, char)
        return self.held

    def release(self, hold: Hold) -> bool:
        """The gap is over: True when `hold` is still the key held (run its action)."""
        if self.held is not hold:
            return False
        self.held = None
        return True
