"""Is this the reference? A candidate that gives the baseline's bits on the same inputs AND launches
the baseline's kernels is most likely the baseline called under another name: flagged in the
verdict, not failed (a session starts from a copy of the baseline, as KernelBench's folders do).
The kernels are read with torch.profiler: the CUDA kernels on a GPU, the aten ops on the CPU,
leaving out what any call does around its work (copies into an output buffer, fills, views)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from cockpit.probes.copies import clone
from cockpit.probes.workload.calls import CallSite
from cockpit.probes.workload.compare import same_bits
from cockpit.probes.workload_load import first_line
from cockpit.workload.spec import Reference

AROUND = ("copy", "fill", "empty", "clone", "view", "reshape", "as_strided", "contiguous", "detach", "lift",
          "resolve", "zero", "alias", "expand", "aten::to", "result_type")
"""Parts of the names of what a call does around its work (lowercase): left out of the kernels held."""
FLAG = "is this the reference?"
"""How the flag on a candidate starts (a warning, not a failure; the cheat catalogue counts it a catch)."""

def launched(do: Callable[[], Any], on_gpu: bool) -> tuple[Any, frozenset[str]]:
    """`do()`'s result and the kernels it launched (the aten ops it ran, on the CPU)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if on_gpu else [ProfilerActivity.CPU]
    with profile(activities=activities) as prof:
        result = do()
        if on_gpu:
            torch.cuda.synchronize()
    names = set()
    for event in prof.events():
        name = str(event.name)
        if on_gpu and getattr(event, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        if not on_gpu and not name.startswith("aten::"):
            continue
        if not any(part in name.lower() if part != "aten::to" else name == part for part in AROUND):
            names.add(name)
    return result, frozenset(names)


def _on_gpu(inputs: Sequence[Any]) -> bool:
    return any(isinstance(t, torch.Tensor) and t.is_cuda for t in inputs)


def reference_line(site: CallSite, cand: str, fn: Callable[..., Any], baseline: Reference,
                   inputs: Sequence[Any]) -> str | None:
    """The verdict's line when the candidate is the baseline by its bits and its kernels; a line
    saying the check could not run when the baseline raises or the profiler cannot start."""
    gpu = _on_gpu(inputs)
    try:
        baseline.fn(*clone(inputs))  # warm: a first call's one-time work is not its kernels
        theirs, their_kernels = launched(lambda: baseline.fn(*clone(inputs)), gpu)
        mine, my_kernels = launched(lambda: site.call_once(fn, clone(inputs)), gpu)
    except Exception as exc:  # the baseline, or the profiler, could not: said, never a silent pass
        return (f"is-reference could not run for {cand} against the baseline {baseline.name}: "
                f"{first_line(exc)}")
    if their_kernels and my_kernels == their_kernels and same_bits(mine, theirs):
        return f"{FLAG} {cand} gives the baseline's bits with the baseline's kernels"
    return None
