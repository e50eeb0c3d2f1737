"""The profile gate's view: the kernel on the card's roofline (at the bench's time), then per
kernel (the first three) its share of peak in compute and memory, the bottleneck, the ONE fix and
how sure the verdict is; the clocks ncu ran at and its report."""

from __future__ import annotations

from cockpit.gates.profile.result import COMPUTE, MEMORY, ProfileResult
from cockpit.gates.view import Fact, GateView, present

KERNELS = 3
NOTES = 4


def profile_view(result: ProfileResult) -> GateView:
    facts: list[Fact] = []
    if result.roofline is not None:
        facts.append(Fact("roofline", result.roofline.line()))
    for k in result.kernels[:KERNELS]:
        v = k.verdict
        facts.append(Fact("kernel", k.kernel or k.name, "strong", kernel=True))
        for label, names in (("compute", COMPUTE), ("memory", MEMORY)):
            share = v.percent(names)
            if share is not None:
                facts.append(Fact(label, f"{share:.1f} %", meter=share))
        facts += [Fact("verdict", present(v.bottleneck, v.headline, sep=": "), "strong"),
                  Fact("the one fix", v.recommendation, "fix"),
                  *(Fact("ncu estimates", line, "dim") for line in v.estimates[1:3]),
                  Fact("decision tree", v.tree_fix or "", "dim"),
                  Fact("confidence", present(v.confidence, v.confidence_reason, sep=": ")),
                  *(Fact("note", note, "dim") for note in v.notes[:NOTES])]
    if result.clock_note:
        facts.append(Fact("clocks", result.clock_note, "quiet"))
    if result.report:
        facts.append(Fact("ncu report", result.report))
    if result.kernels_seen:
        facts.append(Fact("kernels that ran", ", ".join(result.kernels_seen)))
    return GateView(tuple(f for f in facts if f.value))
