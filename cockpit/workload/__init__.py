"""Workloads: any kernel through every gate.

`spec` is the contract a workload module is written against (imported in the gates' child Python,
next to the user's torch); `manifest` is what the cockpit reads of it (no torch, no import of the
user's module in the cockpit's own process); `describe` asks the child for the manifest.
"""

from cockpit.workload.spec import (
    Check,
    Extension,
    Inline,
    Knob,
    NoBuild,
    Profile,
    Reference,
    TritonJit,
    Workload,
    allclose,
    axes,
    custom,
    exact,
    rel_l2,
    shape_name,
)

__all__ = [
    "Check", "Extension", "Inline", "Knob", "NoBuild", "Profile", "Reference", "TritonJit", "Workload",
    "allclose", "axes", "custom", "exact", "rel_l2", "shape_name",
]
