"""`cockpit screenshot`: SVG screenshots of the main screens, rendered headless by Textual."""

from __future__ import annotations

import argparse

from cockpit.cli.parser import workspace_of
from cockpit.ui.screenshot import parse_size, take_screenshots


def screenshot(args: argparse.Namespace) -> int:
    """`cockpit screenshot`: SVGs of the main screens."""
    size = parse_size(args.size)
    session = getattr(args, "session", None)
    for path in take_screenshots(args.out, size, workspace_of(args), session):
        print(path)
    return 0
