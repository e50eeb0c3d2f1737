"""Errors that end a CLI command with exit code 2 and one line on stderr."""

from __future__ import annotations


class CockpitError(Exception):
    """A usage or environment problem: the message says what is wrong and what to do."""
