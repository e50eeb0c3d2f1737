"""tmux's status line runs `cockpit status` every few seconds: it builds only the grammar of the verb
it names, and reads cockpit.toml whole only when the file changed. Both give what the whole
grammar and the whole read give."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit import user_cache
from cockpit.cli import main
from cockpit.cli.parser import TUI, VERBS, build_parser, verb_asked
from cockpit.config import ConfigError
from cockpit.config.warn_fraction import phase_warn_fraction

LINES = [
    ["status"], ["--workspace", "W", "status", "--json"], ["--session", "status", "status"],
    ["--workspace=W", "--session=latest", "status"], ["new", "tile the softmax", "--json"],
    ["gate", "bench", "--session", "latest", "--json"], ["phase", "next"], ["end", "--reason", "done"],
    ["gpu", "--json"], ["telemetry", "record", "--seconds", "5", "-o", "t.jsonl"], ["telemetry", "track"],
    ["pattern", "list", "--json"], ["pattern", "show", "3"], ["analyze", "r.csv", "--details", "d.csv"],
    ["decide", "0.42", "1.5"], ["export", "OLDER", "--format", "pr"], ["history", "--wide"],
    ["tune", "--dry-run", "--group", "D=128"], ["workload", "show", "--fresh"], ["trust", "allow"],
    ["init", "here", "--workload", "triton"], ["screenshot", "--demo", "--size", "80x24"],
    ["--replay", "g.jsonl"], [],
]


@pytest.mark.parametrize("argv", LINES, ids=lambda argv: " ".join(argv) or "(the TUI)")
def test_the_verb_s_grammar_alone_reads_a_command_line_as_the_whole_grammar_does(argv: list[str]) -> None:
    assert build_parser(argv).parse_args(argv) == build_parser().parse_args(argv)


def test_every_verb_is_in_the_table_the_help_lists() -> None:
    assert set(build_parser()._subparsers._group_actions[0].choices) == set(VERBS)  # type: ignore[union-attr]


@pytest.mark.parametrize(("argv", "verb"), [
    (["status"], "status"),
    (["--workspace", "status", "gate", "env"], "gate"),  # a folder named like a verb is the folder
    (["--workspace=ws", "status"], "status"),
    (["-h", "status"], None),  # argparse reads the options: every verb built
    (["--work", "ws", "status"], None),  # an abbreviation: not plain, every verb built
    (["statsu"], None),
    ([], TUI),
    (["--workspace", "ws", "--session=latest"], TUI),
])
def test_the_verb_is_taken_from_the_line_only_where_it_is_plain(argv: list[str], verb: str | None) -> None:
    assert verb_asked(argv) == verb


def test_a_mistyped_verb_or_an_abbreviated_option_is_read_as_ever(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["statsu"])
    assert exited.value.code == 2 and "invalid choice: 'statsu'" in capsys.readouterr().err
    assert main(["--work", str(tmp_path), "status"]) == 0  # argparse's abbreviation of --workspace
    assert capsys.readouterr().out == "no open cockpit session\n"


def test_status_takes_the_warning_fraction_from_cockpit_toml_and_sees_an_edit_at_once(tmp_path: Path) -> None:
    assert phase_warn_fraction(tmp_path) == 0.8  # no file: the default
    toml = tmp_path / "cockpit.toml"
    toml.write_text("[thresholds]\nphase_warn_fraction = 0.5\n")
    assert phase_warn_fraction(tmp_path) == 0.5
    toml.write_text("[thresholds]\nphase_warn_fraction = 0.65\n")
    assert phase_warn_fraction(tmp_path) == 0.65
    toml.write_text("[thresholds]\nphase_warn_fraction = 2\n")
    with pytest.raises(ConfigError, match=r"cockpit\.toml:2: thresholds\.phase_warn_fraction"):
        phase_warn_fraction(tmp_path)


def test_a_kept_fraction_holds_while_the_file_looks_the_same_and_never_for_a_broken_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(user_cache, "SETTLED_S", -1e9)  # the file reads as settled at once
    toml = tmp_path / "cockpit.toml"
    toml.write_text("[thresholds]\nphase_warn_fraction = 0.5\n")
    assert phase_warn_fraction(tmp_path) == 0.5
    from cockpit.config import load

    monkeypatch.setattr(load, "load_config", lambda _: pytest.fail("read again though it did not change"))
    assert phase_warn_fraction(tmp_path) == 0.5
    monkeypatch.undo()
    monkeypatch.setattr(user_cache, "SETTLED_S", -1e9)
    toml.write_text("[thresholds]\nphase_warn_fraction = 0.5\n[cadence]\nstatus_every_s = -1\n")
    for _ in range(2):  # broken: refused each time, nothing kept of it
        with pytest.raises(ConfigError, match=r"cockpit\.toml:4"):
            phase_warn_fraction(tmp_path)


def test_status_with_a_kept_cockpit_toml_imports_no_table_s_code(tmp_path: Path) -> None:
    assert main(["--workspace", str(tmp_path), "new", "x"]) == 0
    (tmp_path / "cockpit.toml").write_text("[thresholds]\nphase_warn_fraction = 0.5\n")
    code = ("import sys, json; import cockpit.user_cache as u; u.SETTLED_S = -1e9\n"
            "from cockpit.cli import main; main(['--workspace', sys.argv[1], 'status', '--json'])\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('cockpit.config'))))")
    for _ in range(2):  # the first reads the file whole and keeps the fraction; the second uses it
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                              timeout=60, check=True)
    shown, modules = done.stdout.splitlines()
    assert json.loads(shown)["open"] is True
    assert "cockpit.config.load" not in json.loads(modules), modules
