"""The mark a gate's child carries, so that the cockpit only ever signals its own processes.

Journals are committed and cloned: a `gate_started` line may name any pid and start time. So the
cockpit hands each gate's child a random token in its environment (`COCKPIT_GATE_MARK`) and
journals only a seal of it: a digest of this host's name, this boot's id and the token. Before
the reaper signals a process group it reads the leader's environment back from the OS
(`/proc/PID/environ`, readable for our own processes only) and seals the token found there: only
the child the cockpit started, on this host since this boot, matches. A journal line alone is
never enough to signal anything.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

ENV = "COCKPIT_GATE_MARK"
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def new_token() -> str:
    """A fresh random token for one run (os.urandom: `secrets` would load hashlib at start-up)."""
    return os.urandom(16).hex()


def seal(token: str) -> str:
    """What the journal keeps of a token: bound to this host and this boot, and not the token."""
    import hashlib  # lazily: it maps OpenSSL's libcrypto, which an idle cockpit never needs

    return hashlib.sha256(f"{socket.gethostname()}\0{_boot_id()}\0{token}".encode()).hexdigest()


def unconfirmed(pid: int, sealed: str | None) -> str | None:
    """Why the OS does not confirm `pid` as the leader of the gate's process group the journal
    seals; None when it does (then, and only then, may its group be signalled)."""
    if not sealed:
        return "the journal keeps no mark for it, so it cannot be told from another process"
    try:
        if os.getpgid(pid) != pid:
            return "it does not lead a process group, as a gate's child does"
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError as exc:
        return f"its environment cannot be read ({exc.strerror or exc}), so its mark cannot be checked"
    prefix = f"{ENV}=".encode()
    tokens = [item[len(prefix):] for item in environ.split(b"\0") if item.startswith(prefix)]
    if not tokens:
        return f"it carries no {ENV} in its environment: not a process the cockpit started"
    import hmac

    if not any(hmac.compare_digest(seal(t.decode("ascii", errors="replace")), sealed) for t in tokens):
        return f"its {ENV} is not this run's (another run, host or boot)"
    return None


def _boot_id() -> str:
    try:
        return BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:  # not Linux: the host name and the token still bind it
        return ""
