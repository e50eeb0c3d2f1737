"""Records the kernel-records audit's raw activities for the planted escapes (honest, side, joined,
thread) on the GPU, for tests/test_kernel_records.py: one JSON file per candidate under argv[1].
    PYTHONPATH=$PWD python3 bench/device/record_escapes.py OUT_DIR"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from cockpit.probes.device_hold import Hold
from cockpit.probes.workload.escapes import record


def calls(fn: Callable[..., object], xs: list[torch.Tensor]) -> Callable[[int], object]:
    outs = [torch.empty_like(x) for x in xs]
    return lambda k: fn(xs[k], outs[k])


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, "bench/device/planted")
    hold = Hold()
    for name in ("honest", "side", "joined", "thread"):
        os.environ["PLANTED"] = name
        m = importlib.import_module("escapes")
        run = calls(getattr(m, name), [m.make_inputs(s, M=4096, N=1024)[0] for s in range(4)])
        for k in range(8):
            run(k % 4)
        torch.cuda.synchronize()
        seen = record(run, 4, hold)
        torch.cuda.synchronize()
        doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "caller": seen.caller,
               "stream": seen.stream, "timer_us": seen.timer_us,
               "records": [dataclasses.asdict(a) for a in seen.records]}
        (out / f"{name}.json").write_text(json.dumps(doc))
        print(name, len(seen.records), "records, timer", round(seen.timer_us, 2), "us, stream", seen.stream)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
