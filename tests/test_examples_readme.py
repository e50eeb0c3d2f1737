"""Every `cockpit ...` command examples/README.md gives parses, with a verb the CLI has (it named a
`report` verb that does not exist: issue 36)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cockpit.cli.parser import build_parser

README = Path(__file__).resolve().parent.parent / "examples" / "README.md"
SESSION = "20261123-1109-332d-32-query-rows-per-warp-without-spills"


def commands() -> list[list[str]]:
    return [code.split()[1:] for code in re.findall(r"`(cockpit [^`]+)`", README.read_text(encoding="utf-8"))]


def test_the_readme_gives_commands() -> None:
    verbs = {c[2] for c in commands() if c[:2] == ["--workspace", "examples"]}
    assert {"history", "export"} <= verbs and "report" not in verbs


@pytest.mark.parametrize("argv", commands(), ids=lambda a: " ".join(a))
def test_each_command_in_the_readme_parses(argv: list[str]) -> None:
    argv = [SESSION if word == "SESSION_ID" else word for word in argv]
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: an unknown verb or option
        pytest.fail(f"`cockpit {' '.join(argv)}` does not parse (exit {exc.code})")
