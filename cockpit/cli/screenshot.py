"""`cockpit screenshot`: SVG screenshots of the main screens, rendered headless by Textual."""

from __future__ import annotations

import argparse

from cockpit.cli.parser import session_named, workspace_of
from cockpit.errors import CockpitError
from cockpit.ui.pictures.screenshot import parse_size, take_screenshots


def screenshot(args: argparse.Namespace) -> int:
    """`cockpit screenshot`: SVGs of the workspace's latest session (never written to), or of
    the demo sessions with `--demo`."""
    spec = session_named(args)
    if args.demo and spec is not None:
        raise CockpitError("screenshot: --demo shows the demo sessions, --session one of yours: "
                           "drop one")
    size = parse_size(args.size)
    workspace = None if args.demo else workspace_of(args)
    for path in take_screenshots(args.out, size, workspace, spec,
                                 getattr(args, "replay", None)):
        print(path)
    return 0
