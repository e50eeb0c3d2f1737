"""report.html as a reader's browser shows it: the example session's report, exported under
today's rules into a scratch copy of examples/, photographed by headless Chromium (Debian's
`chromium`) at each width. The PNGs in screenshots/ (report-1400.png, report-900.png) are made
by this script; the committed example reports are not touched.

    apt-get install -y chromium      # once
    python3 bench/render_report.py [--session ID] [--widths 1400 900] [--height 2400] [--out screenshots]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cockpit.cli import main as cockpit  # noqa: E402

SESSION = "20261123-1109-332d-32-query-rows-per-warp-without-spills"
"""The example whose tune kept the H100's D=128 tile: every chart and the full table."""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--disable-extensions"]


def photograph(page: Path, png: Path, width: int, height: int, work: Path) -> None:
    """One screenshot of `page` in a window `width` x `height` CSS pixels, with a fresh profile."""
    profile = tempfile.mkdtemp(dir=work, prefix="profile-")
    png.unlink(missing_ok=True)
    command = ["chromium", *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
               f"--screenshot={png}", page.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if not png.is_file():
        raise SystemExit(f"chromium wrote no {png} (exit {done.returncode}): {done.stderr.strip()[-500:]}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--session", default=SESSION, help="a folder name under examples/sessions/")
    p.add_argument("--widths", type=int, nargs="+", default=[1400, 900])
    p.add_argument("--height", type=int, default=2400, help="the window's height: what the PNG shows")
    p.add_argument("--out", type=Path, default=REPO / "screenshots")
    args = p.parse_args()
    if shutil.which("chromium") is None:
        print("no chromium on PATH: apt-get install -y chromium", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="render-report-") as scratch:
        work = Path(scratch)
        shutil.copytree(REPO / "examples", work / "examples")
        page = work / "examples" / "sessions" / args.session / "report.html"
        with contextlib.redirect_stdout(io.StringIO()):  # the scratch path it prints is of no use
            exported = cockpit(["--workspace", str(work / "examples"), "export", args.session,
                                "--format", "html", "-o", str(page)])
        if exported != 0:
            return exported
        for width in args.widths:
            png = args.out / f"report-{width}.png"
            photograph(page, png, width, args.height, work)
            print(png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
