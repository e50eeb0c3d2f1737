"""report.html in a real browser: headless Chromium (Debian's `chromium`) opens the report of the
recorded fixture session and of a hostile one, with a fresh profile and a network log, and this
script checks that the page asked for nothing (no request in the log has the page as its
initiator; the browser's own background requests are counted apart), that the DOM holds no
<script> element, and that the page's Content-Security-Policy stops an injected script and an
injected image fetch in this very browser (a control copy without the policy shows both
checks can fail).

    apt-get install -y chromium      # once
    python3 bench/report_browser.py [--screenshot FILE.png]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cockpit.report.build import build_report  # noqa: E402
from cockpit.report.export import export_files  # noqa: E402
from cockpit.session.workspace import Workspace, list_sessions  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--disable-extensions"]
PROBE = ("<script>document.title = 'SCRIPT RAN'</script>"
         '<img src="http://127.0.0.1:9/probe.png" alt="">')


def chromium(page: Path, work: Path) -> tuple[str, list[str], int]:
    """The page's DOM after load; the URLs the page asked for (network-log requests with an
    initiator: the page's origin, "null" for a file); and how many requests the browser made on
    its own (initiator "not an origin": updater, network time, accounts — not the page)."""
    profile = Path(tempfile.mkdtemp(dir=work, prefix="profile-"))
    netlog = work / f"{page.stem}-{profile.name}.netlog.json"
    out = subprocess.run(["chromium", *FLAGS, f"--user-data-dir={profile}", f"--log-net-log={netlog}",
                          "--net-log-capture-mode=Everything", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    log = json.loads(netlog.read_text(errors="replace"))
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    jobs = [e["params"] for e in log["events"] if e["type"] == start_job and "url" in e.get("params", {})]
    mine = [j["url"] for j in jobs if j.get("initiator") != "not an origin"]
    return out.stdout, mine, len(jobs) - len(mine)


def title(dom: str) -> str:
    m = re.search(r"<title>(.*?)</title>", dom, re.S)
    return m.group(1) if m else ""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--screenshot", type=Path, help="also save a PNG of the recorded report")
    args = p.parse_args()
    if shutil.which("chromium") is None:
        print("chromium is not installed: apt-get install -y chromium", file=sys.stderr)
        return 2
    version = subprocess.run(["chromium", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"# {version}; flags: {' '.join(FLAGS)}, a fresh --user-data-dir, --log-net-log")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(REPO / "tests" / "fixtures" / "sessions" / "ws", work / "ws")
        ws = Workspace(work / "ws")
        ref = list_sessions(ws)[-1]
        export_files(build_report(ws, ref, 0.0), ("html",), ref.path)
        recorded = ref.path / "report.html"
        hostile = work / "hostile.html"
        text = recorded.read_text()
        # the hostile objective as the template renders it: escaped text, not a tag
        hostile.write_text(text.replace("<h1>", "<h1>&lt;script&gt;alert(1)&lt;/script&gt; ", 1))
        control_csp = work / "control-with-csp.html"
        control_csp.write_text(text.replace("</body>", PROBE + "</body>"))
        control_open = work / "control-without-csp.html"
        control_open.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "",
                                       text).replace("</body>", PROBE + "</body>"))
        print(f"{'page':30} {'page requests':>13} {'browser own':>11} {'<script> in DOM':>15} {'title':>11}")
        for page, expect_ran in ((recorded, False), (hostile, False), (control_csp, False),
                                 (control_open, True)):
            dom, mine, own = chromium(page, work)
            scripts = dom.count("<script")
            ran = title(dom) == "SCRIPT RAN"
            print(f"{page.name:30} {len(mine):>13} {own:>11} {scripts:>15} "
                  f"{'SCRIPT RAN' if ran else 'unchanged':>11}")
            for url in mine:
                print(f"  the page asked for: {url}")
            ours = page in (recorded, hostile)
            failed |= not dom or ran != expect_ran or bool(mine) != expect_ran or (ours and scripts > 0)
        if args.screenshot:
            subprocess.run(["chromium", *FLAGS, f"--user-data-dir={work / 'shot'}", "--window-size=1200,2400",
                            f"--screenshot={args.screenshot.resolve()}", recorded.as_uri()],
                           capture_output=True, timeout=120)
    print("FAIL" if failed else "PASS: our pages asked for nothing and hold no script; the CSP blocked an "
          "injected script and image that ran and fetched without it")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
