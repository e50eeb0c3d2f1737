"""`cockpit history` and the TUI's History screen on a workspace of 10,000 realistic sessions.

The workspace is built from the three example sessions (examples/sessions/: real H100 sessions with
their gate runs, tunes and results), copied round-robin as a team's workspace grows: each copy gets
its own id and starts a day after the one before (every timestamp of its journal shifted), its
results/, logs/ and tune/ hard-linked (the journals alone are ~2.7 GB for 10,000 sessions).

Measured, each in a fresh `python -m cockpit` process as the user runs it:
  history       time to the first session row on stdout, to the end, and peak RSS
  history json  to the end, and peak RSS
  TUI           from pressing H to the first session row drawn on a pseudo-terminal (120x40), its peak
                RSS while still reading, and from pressing q (back, quit, yes) while the screen is still
                reading to the process's exit

    python3 bench/history_big.py [--sessions 10000] [--workspace DIR (kept, reused if built)]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from startup import CHILD_ENV, COLS, ROWS, _controlling_tty, cockpit  # noqa: E402

EXAMPLES = REPO / "examples" / "sessions"
DAY = 86_400.0
TARGETS = {"first row": 3.0, "TUI first row": 5.0, "quit": 2.0, "MB": 500}
_T = re.compile(rb'^\{"t":(-?\d+(?:\.\d+)?)')
_ID = re.compile(r"^(\d{8})-(\d{4})-([0-9a-f]{4})-(.*)$")


def build(root: Path, sessions: int) -> None:
    """`sessions` copies of the example sessions under root/sessions, oldest first."""
    sources = sorted(p for p in EXAMPLES.iterdir() if (p / "journal.jsonl").is_file())
    base = min(json.loads((p / "journal.jsonl").open().readline())["t"] for p in sources)
    (root / "sessions").mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "examples" / ".." / "cockpit" / "patterns" / "shipped", root / "patterns",
                    dirs_exist_ok=True)
    for k in range(sessions):
        src = sources[k % len(sources)]
        first = json.loads((src / "journal.jsonl").open().readline())
        shift = (k * DAY + base) - first["t"] + (first["t"] - base) % DAY
        stamp = time.strftime("%Y%m%d-%H%M", time.gmtime(first["t"] + shift))
        slug = _ID.match(src.name).group(4)  # type: ignore[union-attr]
        sid = f"{stamp}-{k % 65536:04x}-{slug}"
        dest = root / "sessions" / sid
        dest.mkdir()
        with (src / "journal.jsonl").open("rb") as f, (dest / "journal.jsonl").open("wb") as out:
            for i, line in enumerate(f):
                if i == 0:
                    event = json.loads(line)
                    event["t"] += shift
                    event["id"] = sid
                    out.write(json.dumps(event, separators=(",", ":")).encode() + b"\n")
                else:
                    out.write(_T.sub(lambda m, by=shift: b'{"t":%.3f' % (float(m.group(1)) + by), line))
        shutil.copy2(src / "SESSION.md", dest / "SESSION.md")
        for sub in ("results", "logs", "tune"):
            if (src / sub).is_dir():
                shutil.copytree(src / sub, dest / sub, copy_function=os.link)


class Terminal:
    """The cockpit on a pseudo-terminal of ROWS x COLS: what it drew, keys sent, its exit awaited."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.child = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                                      env=dict(env, TERM="xterm-256color", COLUMNS=str(COLS),
                                               LINES=str(ROWS)),
                                      start_new_session=True, preexec_fn=_controlling_tty)
        os.close(slave)
        self.out = bytearray()

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.child.poll() is None:
            self.child.kill()
            self.child.wait()
        os.close(self.master)

    def _read(self, timeout_s: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout_s)
        if ready:
            try:
                chunk = os.read(self.master, 1 << 16)
            except OSError:
                return False
            self.out += chunk
            return bool(chunk)
        return True

    def send(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def wait_for(self, marker: bytes | re.Pattern[bytes], timeout_s: float, after: int = 0) -> None:
        deadline = time.perf_counter() + timeout_s
        while time.perf_counter() < deadline:
            found = (self.out.find(marker, after) >= 0 if isinstance(marker, bytes)
                     else marker.search(self.out, after) is not None)
            if found:
                return
            if not self._read(0.05) and self.child.poll() is not None:
                break
        tail = bytes(self.out[-400:]).decode("utf-8", "replace")
        raise SystemExit(f"bench: {marker!r} not drawn within {timeout_s:g} s; last output:\n{tail}")

    def wait_exit(self, timeout_s: float) -> bool:
        deadline = time.perf_counter() + timeout_s
        while self.child.poll() is None and time.perf_counter() < deadline:
            self._read(0.05)
        return self.child.poll() is not None


def history_cli(root: Path, *extra: str) -> dict[str, float]:
    """`cockpit history`: seconds to the first session row and to the end, and peak RSS (MB)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(cockpit("--workspace", str(root), "history", *extra), stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=CHILD_ENV)
    first = None
    assert child.stdout is not None
    for line in child.stdout:
        if first is None and re.search(rb"\d{8}-\d{4}-", line):  # the id, cut to its stem at the least
            first = time.perf_counter() - t0
    _, status, usage = os.wait4(child.pid, 0)
    end = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        code = os.waitstatus_to_exitcode(status)
        raise SystemExit(f"bench: cockpit history {' '.join(extra)} exited {code}")
    out = {"end": end, "MB": usage.ru_maxrss / 1024}
    return out if "--json" in extra else {"first row": first if first is not None else end, **out}


def history_tui(root: Path) -> dict[str, float]:
    """The TUI: H pressed once the main screen is drawn; seconds until a session row is drawn, then
    q pressed (while the screen may still be reading) and seconds until the process is gone."""
    with Terminal(cockpit("--workspace", str(root)), env=CHILD_ENV) as term:
        term.wait_for(b"Total", timeout_s=60)
        t0 = time.perf_counter()
        term.send(b"H")
        term.wait_for(b"oldest first", timeout_s=600, after=len(term.out))  # the title, with the first rows
        first = time.perf_counter() - t0
        term.wait_for(b"reading", timeout_s=60, after=len(term.out))  # still reading: then peak so far
        peak_mb = _peak_mb(term.child.pid)
        t1 = time.perf_counter()
        for key in (b"q", b"q", b"y"):  # back from History, quit, yes
            term.send(key)
        gone = term.wait_exit(timeout_s=600)
        quit_s = (time.perf_counter() - t1) if gone else float("inf")
        return {"TUI first row": first, "MB": peak_mb, "quit": quit_s}


def _peak_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--workspace", type=Path, help="build here (kept; reused when already built)")
    parser.add_argument("--only", choices=("cli", "json", "tui"), help="one measurement")
    args = parser.parse_args()
    root = args.workspace or Path(tempfile.mkdtemp(prefix="cockpit-history-"))
    try:
        sessions = root / "sessions"
        if not sessions.is_dir() or sum(1 for _ in sessions.iterdir()) != args.sessions + 1:
            shutil.rmtree(sessions, ignore_errors=True)
            t0 = time.perf_counter()
            build(root, args.sessions)
            size = sum(f.stat().st_size for f in sessions.glob("*/journal.jsonl"))
            subprocess.run(cockpit("--workspace", str(root), "new", "bench: the History screen"), check=True,
                           stdout=subprocess.DEVNULL, env=CHILD_ENV)  # the open session the TUI opens
            print(f"built {args.sessions} sessions in {time.perf_counter() - t0:.0f} s "
                  f"(journals {size / 2**30:.2f} GiB)")
        only = args.only
        rows = [(name, fn()) for name, key, fn in (
            ("cockpit history", "cli", lambda: history_cli(root)),
            ("cockpit history --json", "json", lambda: history_cli(root, "--json")),
            ("TUI History screen (H, then q while it reads)", "tui", lambda: history_tui(root)))
            if only in (None, key)]
        print(f"\n{args.sessions} sessions, {os.cpu_count()} cores\n")
        print("| measurement | first row (s) | to the end (s) | peak RSS (MB) | quit (s) |")
        print("|---|---|---|---|---|")
        for name, m in rows:
            cells = [m.get("first row", m.get("TUI first row")), m.get("end"), m.get("MB"), m.get("quit")]
            print(f"| {name} | " + " | ".join("—" if c is None else f"{c:.1f}" for c in cells) + " |")
        print(f"\ntargets: first row ≤ {TARGETS['first row']:g} s (TUI ≤ {TARGETS['TUI first row']:g} s), "
              f"quit ≤ {TARGETS['quit']:g} s, peak RSS ≤ {TARGETS['MB']} MB")
    finally:
        if args.workspace is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
