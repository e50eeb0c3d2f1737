"""The TUI's side of workspace trust (session/trust.py): before a gate first runs anything the
workspace names, a dialog lists it and asks once; y records the answer where `cockpit trust`
keeps it, so the next cockpit (and `cockpit gate`) does not ask again until cockpit.toml changes."""

from __future__ import annotations

from collections.abc import Callable

from cockpit.config import CONFIG_NAME
from cockpit.errors import CockpitError
from cockpit.session.trust import allow, trust_file, what_runs
from cockpit.ui.controllers.host import CockpitHost
from cockpit.ui.screens.dialogs import TrustDialog


def asked_trust(app: CockpitHost, gate: str, then: Callable[[bool], None]) -> bool:
    """False when the workspace's cockpit.toml is trusted as it is now (or names nothing to run);
    else True, and the dialog shows what it names before `gate` runs: `then(True)` once the user
    trusted it and that was recorded, else `then(False)` (nothing ran)."""
    runs = what_runs(app.workspace.root, app.config)
    if runs.trusted:
        return False
    heading = (f"{runs.root / CONFIG_NAME} {runs.untrusted}. It names what the gates would run; "
               f"nothing of it has run. Before {gate} runs:")
    hint = (f"y: trust it as it is now and run {gate} (kept in {trust_file()}; asked again when "
            f"{CONFIG_NAME} names something else)   n / escape: run nothing")

    def answered(yes: bool | None) -> None:
        if yes:
            try:
                allow(runs)
            except CockpitError as exc:  # not recorded: it would ask again at once, so it runs nothing
                app.notify(str(exc), severity="error", markup=False, timeout=15)
                yes = False
        then(bool(yes))

    app.push_screen(TrustDialog(heading, runs.listing(beside=False), hint), answered)
    return True
