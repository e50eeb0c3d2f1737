"""The calls compute-sanitizer watches: every candidate once on each of the workload's K smallest
test shapes (the bench grid's when it has no test grid), synchronized after each, so the tool's
findings belong to these calls. Run by `workload_probe.py sanitize` under `sanitize_probe.py`.
A call that raises (a poisoned CUDA context after an invalid access) ends the run there: what
followed it would be noise."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from cockpit.probes.sanitize_probe import CACHING_OFF, CALLING
from cockpit.probes.workload_load import first_line

Say = Callable[[str], None]
SEED = 4000


def sanitized_calls(w: Any, knobs: Callable[[Mapping[str, Any]], Mapping[str, Any]], count: int,
                    result: dict[str, object], say: Say) -> bool:
    """Call each candidate on the `count` smallest shapes; the rows (and a failed call's error)
    go into `result`. True when every call returned."""
    import torch

    from cockpit.probes.workload.check import call

    shapes = w.smallest_first(list(w.test_grid) or list(w.bench_grid))[:count]
    names = [w.shape_name(s) for s in shapes]
    planned = len(shapes) * len(w.candidates)
    allocator_off = all(os.environ.get(k) == v for k, v in CACHING_OFF.items())
    result.update(shapes=names, candidates=list(w.candidates), planned=planned, allocator_off=allocator_off)
    say(f"calling {len(w.candidates)} candidate(s) once on {len(shapes)} smallest shape(s): "
        f"{', '.join(names)}; torch's caching allocator {'off' if allocator_off else 'ON'}")
    rows: list[dict[str, Any]] = []
    result["rows"] = rows
    for shape, shape_name in zip(shapes, names, strict=True):
        inputs = w.make_inputs(SEED, **shape)
        for name, fn in w.candidates.items():
            out = w.make_output(*inputs, **shape) if w.make_output is not None else None
            say(f"{CALLING}{name} on {shape_name} ({len(rows) + 1}/{planned})")
            t0 = time.monotonic()
            try:
                call(fn, inputs, out, knobs(shape))
                torch.cuda.synchronize()
            except Exception as exc:  # whatever the candidate raised ends the run, named
                said = first_line(exc)
                rows.append({"candidate": name, "shape": shape_name, "error": said})
                say(f"[{len(rows)}/{planned}] {name} on {shape_name} raised: {said}")
                result.update(ok=False, error=f"{name} on {shape_name} raised: {said}")
                return False
            seconds = time.monotonic() - t0
            rows.append({"candidate": name, "shape": shape_name, "seconds": round(seconds, 3)})
            say(f"[{len(rows)}/{planned}] {name} on {shape_name}: {seconds:.1f} s under the sanitizer")
    result["ok"] = True
    return True
