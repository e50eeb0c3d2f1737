"""The timer and the checks are the cockpit's, not the workload's: which objects the timing functions
(torch.cuda.Event and its methods, torch.cuda.synchronize, time.perf_counter, torch.empty, ...) and
the cockpit's own checking functions (every function of the modules that check, the guards' state,
json.dump, the probe's write_result) are, taken before the workload is imported (`start`, from
`workload_probe.main` right after `guarded.start`), and held against what those names are now
(`intact`): after the import, around every candidate call in correctness, and per timed block in
the bench. A name that now holds another object is a patch, said as such ("replaced
torch.cuda.Event.elapsed_time during its call: a timer patch"), and put back, so the next candidate
runs under the real timer and is not blamed for it.

torch is imported here only when it imports (a probe that describes a workload needs none)."""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from cockpit.probes import guarded

TIMER = ("torch.cuda.Event", "torch.cuda.Event.record", "torch.cuda.Event.elapsed_time",
         "torch.cuda.Event.synchronize", "torch.cuda.synchronize", "torch.cuda.current_stream",
         "time.perf_counter", "time.perf_counter_ns", "time.monotonic", "time.monotonic_ns", "time.time")
"""What the timer reads: replaced, a call is timed by the workload's clock."""
ALLOCATOR = ("torch.empty", "torch.empty_like")
"""What the output buffers come from: replaced, a candidate picks the memory it is checked in."""
EVALUATOR_MODULES = ("cockpit.probes.guarded", "cockpit.probes.copies", "cockpit.probes.workload.compare",
                     "cockpit.probes.workload.poison", "cockpit.probes.workload.calls",
                     "cockpit.probes.workload.grad_round", "cockpit.probes.workload.kept",
                     "cockpit.probes.workload.downcast", "cockpit.probes.workload.same_kernels",
                     "cockpit.probes.workload.check", "cockpit.probes.workload.timing")
"""The modules whose functions check a candidate: each of their names is held."""
_SHORT = ("cockpit.probes.workload.", "cockpit.probes.")


@dataclass(frozen=True)
class Held:
    """One name and the object it held when the snapshot was taken."""

    owner: Any
    attr: str
    obj: Any
    said: str
    guard: str

    def now(self) -> Any:
        return _value(self.owner, self.attr)


@dataclass
class Identity:
    """What every held name held, and what each guard says when one changed."""

    held: tuple[Held, ...]

    def changed(self) -> list[Held]:
        return [h for h in self.held if h.now() is not h.obj]

    def restore(self, which: list[Held]) -> None:
        for h in which:
            setattr(h.owner, h.attr, h.obj)


def _value(owner: Any, attr: str) -> Any:
    """What a name holds: a class's own or inherited attribute as stored (not bound), a module's as is."""
    if isinstance(owner, type):
        return inspect.getattr_static(owner, attr, None)
    return getattr(owner, attr, None)


def _resolve(path: str) -> tuple[Any, str, Any] | None:
    """(the object holding the last name, the name, what it holds) of a dotted path; None when any
    part is missing (no torch in this python, a torch without CUDA's names)."""
    parts = path.split(".")
    try:
        owner: Any = importlib.import_module(parts[0])
    except ImportError:
        return None
    for part in parts[1:-1]:
        owner = getattr(owner, part, None)
    if owner is None:
        return None
    value = _value(owner, parts[-1])
    return None if value is None else (owner, parts[-1], value)


def _short(name: str) -> str:
    for prefix in _SHORT:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _module_names(module: ModuleType, name: str) -> list[Held]:
    """Every function and class of one of the cockpit's checking modules, its constants (ROUNDS)
    and the guards' state (`guarded._off`)."""
    said = _short(name)
    return [Held(module, attr, value, f"{said}.{attr}", "evaluator-intact")
            for attr, value in vars(module).items()
            if not attr.startswith("__") and (callable(value) or attr == "_off" or attr.isupper())]


def snapshot(probe: ModuleType | None = None) -> Identity:
    """What the timer, the allocator and the checks are now (the probe's own module too: its
    write_result writes the verdict)."""
    held: list[Held] = []
    writers = ("json.dump", "json.dumps")
    for paths, guard in ((TIMER + ALLOCATOR, "timer-intact"), (writers, "evaluator-intact")):
        for path in paths:
            found = _resolve(path)
            if found is not None:
                held.append(Held(*found, path, guard))
    for name in EVALUATOR_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # no torch in this python: nothing of it to check
            continue
        held.extend(_module_names(module, name))
    if probe is not None:
        held.extend(Held(probe, attr, getattr(probe, attr), f"workload_probe.{attr}", "evaluator-intact")
                    for attr in ("write_result", "check_all", "say") if hasattr(probe, attr))
    return Identity(tuple(held))


def line(h: Held, when: str) -> str:
    """The failure line of one replaced name."""
    if h.guard == "evaluator-intact":
        return f"replaced the cockpit's check {h.said} {when}: evaluator tampering"
    kind = "an allocator patch" if h.said in ALLOCATOR else "a timer patch"
    return f"replaced {h.said} {when}: {kind}"


_taken: Identity | None = None


def start(probe: ModuleType | None = None) -> Identity:
    """Take the snapshot the probe's checks hold the names to (before the workload is imported)."""
    global _taken
    _taken = snapshot(probe)
    return _taken


def taken() -> Identity | None:
    """The snapshot `start` took in this process (None: none was)."""
    return _taken


def held_intact(when: str) -> str | None:
    """`intact` against the probe's own snapshot (the bench's check per timed block: "during a timed
    block"); None when no snapshot was taken in this process."""
    return intact(_taken, when)


def intact(identity: Identity | None, when: str) -> str | None:
    """The failure line of the first name replaced since the snapshot ("replaced time.perf_counter
    during its call: a timer patch"), every replaced name put back; None when all are intact or
    their guards are off (a name whose guard is off is left as the workload made it)."""
    found = breach(identity, when)
    return None if found is None else found[1]


def breach(identity: Identity | None, when: str) -> tuple[str, str] | None:
    """`intact`'s finding as (the guard that caught it, its line)."""
    if identity is None:
        return None
    replaced = [h for h in identity.changed() if guarded.on(h.guard)]
    if not replaced:
        return None
    identity.restore(replaced)
    return replaced[0].guard, line(replaced[0], when)

