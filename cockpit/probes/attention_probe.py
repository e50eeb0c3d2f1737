"""Correctness and timing of the workload kernel against PyTorch, in a CHILD python (imports torch).

    python attention_probe.py correctness --workspace DIR --out RESULT.json --configs JSON
    python attention_probe.py bench       --workspace DIR --out RESULT.json --configs JSON

Correctness: fresh random inputs per config, the output buffer poisoned with NaN first (an element
the kernel never writes fails), a float32 reference, max abs diff and relative L2 error; NaN/Inf
never pass; smallest config first; stops at the first failure and names it.
Bench: ours and SDPA's default backend plus FLASH / CUDNN / EFFICIENT where they run, in one
process, interleaved in blocks (each block after ~100 ms untimed, so every implementation is
timed at its own power-capped clock, as triton's do_bench times it), CUDA events around the call
only, L2 flushed before every call (outside the events), inputs rotated over several sets;
median and p20/p80 per implementation, and each timed block's span in wall-clock time. The GPU
torch runs on is named by UUID and PCI bus id (CUDA's ordinal is not NVML's index), and NVML
watches that GPU every 50 ms while it runs: clocks, throttle reasons, processes, for the validity
verdict and the clock each implementation ran at. Exit 0 ok, 1 a config failed, 2 it could not run.
The method lives in the `attention` package beside this file; this is the entry the gate runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:  # python -m, or imported (tests, tune_probe); mypy reads this
    from .attention.configs import Impl, config_name, make_inputs, say
    from .attention.correctness import TOLERANCE, correctness
    from .attention.gpu_watch import GpuWatch, device_identity, no_cuda_device
    from .attention.timing import bench, sdpa_impls
else:  # run by path, as the gate does: this folder is sys.path[0]
    from attention.configs import Impl, config_name, make_inputs, say
    from attention.correctness import TOLERANCE, correctness
    from attention.gpu_watch import GpuWatch, device_identity, no_cuda_device
    from attention.timing import bench, sdpa_impls

import torch  # the attention package imported it, or said what to do when it is missing

# bench/observer.py and bench/kernel_variants.py time kernels with the gate's method from here.
__all__ = ["TOLERANCE", "bench", "config_name", "correctness", "main", "make_inputs", "sdpa_impls"]


# The extension -------------------------------------------------------------------------------


def load_extension(workspace: Path, name: str = "cockpit_attn") -> Any:
    so = workspace / "build" / name / f"{name}.so"
    if not so.exists():
        raise FileNotFoundError(f"{so} is not built yet; run the build gate first (cockpit gate build)")
    spec = importlib.util.spec_from_file_location(name, so)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ours(ext: Any) -> Impl:
    def run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
            out: torch.Tensor | None = None) -> torch.Tensor:
        result: torch.Tensor = ext.forward(q, k, v, causal, None, out)
        return result
    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("mode", choices=("correctness", "bench"))
    p.add_argument("--workspace", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--configs", required=True, help="JSON list of {B, H, S, D, dtype, causal}")
    p.add_argument("--tolerance", default=json.dumps(TOLERANCE))
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--input-sets", type=int, default=4)
    p.add_argument("--settle-ms", type=float, default=100.0)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    configs = json.loads(args.configs)
    if not torch.cuda.is_available():
        say(no_cuda_device())
        return 2
    try:
        ext = load_extension(args.workspace)
    except (FileNotFoundError, ImportError, OSError) as exc:
        say(f"cannot load the extension: {exc}")
        return 2
    started = time.time()
    gpu = device_identity(torch.cuda.current_device())
    result: dict[str, Any] = {"mode": args.mode, "device": gpu["name"], "gpu": gpu,
                              "torch": torch.__version__, "started": started,
                              "pid": os.getpid()}
    if args.mode == "correctness":
        # Watched like the bench, so a session's report has the GPU's view of this gate too.
        with GpuWatch(torch.cuda.current_device()) as watch:
            rows, ok = correctness(ours(ext), configs, "cuda", json.loads(args.tolerance))
        result.update(rows=rows, ok=ok, gpu_samples=watch.samples, gpu_watch_error=watch.error)
    else:
        say(f"timing on {result['device']} ({gpu['uuid']}): {args.reps}+ reps in {args.rounds} blocks "
            f"per implementation, each after {args.settle_ms:g} ms untimed; {args.warmup} warm-up, "
            f"{args.input_sets} input sets, L2 flushed before each call")
        with GpuWatch(torch.cuda.current_device()) as watch:
            rows = bench({"ours": ours(ext), **sdpa_impls()}, configs, args.reps, args.warmup,
                         args.input_sets, settle_ms=args.settle_ms, rounds=args.rounds)
        result.update(rows=rows, ok=True, gpu=watch.gpu, gpu_samples=watch.samples,
                      gpu_watch_error=watch.error)
        ok = True
    result["finished"] = time.time()
    tmp = args.out.with_suffix(".tmp")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(result))
    os.replace(tmp, args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
