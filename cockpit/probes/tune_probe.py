"""Correctness and timing of tuned kernel libraries, in a CHILD python that holds the CUDA context.

    python tune_probe.py serve --shapes JSON --checks JSON [--tolerance X --reps N ...]

Reads one JSON request per line on stdin and answers one JSON line on stdout (its own chatter,
the bench's lines included, goes to stderr, the log):
  {"op": "hello"}                                  -> the device
  {"op": "check", "library": SO, "D": 64}           -> {"ok", "detail"}: every check shape of
       that head dim against a float32 reference (cached per shape), output poisoned with NaN
  {"op": "time", "library": SO, "D": 64, "short": b} -> {"times_ms": [[...] per tuning shape]}
  {"op": "flash", "D": 64}                          -> the same for SDPA's FLASH backend
  {"op": "confirm", "libraries": {name: SO}, "D": 64} -> every library, SDPA's default and FLASH
       interleaved, per-call times, and the NVML samples of the window for the validity verdict
Timing is the bench gate's (attention.timing.bench: settled blocks, L2 flushed before each call,
CUDA events around the call only). A CUDA error poisons the context: the reply says "fatal" and
the probe exits 3, so the next configuration starts in a fresh process.
Each library is csrc/attention.cu built alone (cockpit/tune/compile.py) and called through its C
entry, cockpit_attn_forward_contiguous, with the tensors' pointers and torch's current stream.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import sys
import time
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:  # imported (python -m, or the core's import checks); mypy reads this
    from .attention.configs import config_name, make_inputs
    from .attention.correctness import compare, reference, run_poisoned
    from .attention.gpu_watch import GpuWatch, no_cuda_device
    from .attention.timing import bench, sdpa_impls
else:  # run by path, as the tuner does: this folder is sys.path[0]
    from attention.configs import config_name, make_inputs
    from attention.correctness import compare, reference, run_poisoned
    from attention.gpu_watch import GpuWatch, no_cuda_device
    from attention.timing import bench, sdpa_impls

import torch  # the attention package imported it, or said what to do when it is missing

CONFIG_FIELDS = ("block_m", "block_n", "warps", "min_blocks", "stages", "o_smem", "smem_bytes", "threads",
                 "q_regs")


class Library:
    """One configuration's library, callable as the probes call an implementation."""

    def __init__(self, path: str, head_dim: int) -> None:
        self.lib = ctypes.CDLL(path)
        fn = self.lib.cockpit_attn_forward_contiguous
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [ctypes.c_float, ctypes.c_int,
                                                                     ctypes.c_int, ctypes.c_void_p]
        self.fn = fn
        values = (ctypes.c_int * len(CONFIG_FIELDS))()
        self.lib.cockpit_attn_kernel_config(head_dim, values, len(CONFIG_FIELDS))
        self.config = dict(zip(CONFIG_FIELDS, list(values), strict=True))

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                 out: torch.Tensor | None = None) -> torch.Tensor:
        o = torch.empty_like(q) if out is None else out
        b, h, s, d = q.shape
        err = self.fn(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), b, h, s, d,
                      1.0 / math.sqrt(d), int(causal), int(q.dtype == torch.bfloat16),
                      torch.cuda.current_stream().cuda_stream)
        if err:
            raise RuntimeError(f"launch failed: cudaError {err}")
        return o


class Server:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.shapes = {int(d): v for d, v in json.loads(args.shapes).items()}
        self.checks = {int(d): v for d, v in json.loads(args.checks).items()}
        self.libraries: dict[tuple[str, int], Library] = {}
        self.references: dict[str, tuple[torch.Tensor, ...]] = {}

    def library(self, path: str, head_dim: int) -> Library:
        if (path, head_dim) not in self.libraries:
            self.libraries[(path, head_dim)] = Library(path, head_dim)
        return self.libraries[(path, head_dim)]

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req["op"]
        if op == "hello":
            props = torch.cuda.get_device_properties(0)
            return {"device": props.name, "arch": f"sm_{props.major}{props.minor}",
                    "uuid": str(getattr(props, "uuid", "")), "pid": os.getpid()}
        if op == "check":
            return self.check(self.library(req["library"], req["D"]), req["D"])
        if op == "time":
            rows = self.rows({"ours": self.library(req["library"], req["D"])}, req["D"], req["short"])
            return {"times_ms": self.times(rows, ["ours"])["ours"]}
        if op == "flash":
            rows = self.rows({"flash": sdpa_impls()["flash"]}, req["D"], False)
            return {"times_ms": self.times(rows, ["flash"])["flash"]}
        if op == "confirm":
            impls = {name: self.library(path, req["D"]) for name, path in req["libraries"].items()}
            sdpa = sdpa_impls()
            started = time.time()
            # The one GPU this process sees (pinned by UUID): the watch finds it in NVML itself.
            with GpuWatch(torch.cuda.current_device()) as watch:
                rows = self.rows({**impls, "sdpa": sdpa["sdpa"], "flash": sdpa["flash"]}, req["D"], False)
            return {"times_ms": self.times(rows, [*impls, "sdpa", "flash"]), "rows": rows,
                    "configs": {n: lib.config for n, lib in impls.items()}, "started": started,
                    "finished": time.time(), "pid": os.getpid(), "gpu": getattr(watch, "gpu", None),
                    "gpu_samples": watch.samples, "gpu_watch_error": watch.error}
        raise ValueError(f"unknown op {op!r}")

    def check(self, lib: Library, head_dim: int) -> dict[str, Any]:
        shapes = sorted(self.checks[head_dim], key=lambda c: (c["B"] * c["H"] * c["S"], c["D"]))
        for index, cfg in enumerate(shapes):
            name = config_name(cfg)
            if name not in self.references:
                q, k, v = make_inputs(cfg, "cuda", seed=1000 + index)
                self.references[name] = (q, k, v, reference(q, k, v, cfg["causal"]))
            q, k, v, ref = self.references[name]
            out = run_poisoned(lib, q, k, v, cfg["causal"])
            torch.cuda.synchronize()
            stats = compare(out, ref)
            if stats["nonfinite"] or stats["rel_l2"] > self.args.tolerance:
                why = (f"{stats['nonfinite']} NaN/Inf" if stats["nonfinite"]
                       else f"rel L2 {stats['rel_l2']:.2e} > {self.args.tolerance:g}")
                return {"ok": False, "detail": f"FAILS at {name}: {why}"}
        return {"ok": True, "detail": f"{len(shapes)} shapes correct"}

    def rows(self, impls: dict[str, Any], head_dim: int, short: bool) -> list[dict[str, Any]]:
        """The bench gate's rows for these implementations on the tuning shapes, per-call times kept."""
        a = self.args
        if short:  # the first look a pruner decides on: one block per shape, a third of the calls
            rows = bench(impls, self.shapes[head_dim], max(5, a.reps // 3), 2, a.input_sets,
                         budget_s=0.1, settle_ms=a.settle_ms, rounds=1, keep_times=True)
        else:
            rows = bench(impls, self.shapes[head_dim], a.reps, a.warmup, a.input_sets,
                         settle_ms=a.settle_ms, rounds=a.rounds, keep_times=True)
        return rows

    @staticmethod
    def times(rows: list[dict[str, Any]], names: list[str]) -> dict[str, list[list[float]]]:
        for row in rows:
            missing = [name for name in names if name not in row["impl"]]
            if missing:  # bench() left out what raised on its first call; the log says why
                raise RuntimeError(f"{', '.join(missing)} did not run on {row['config']} (see the log)")
        return {name: [row["impl"][name]["times_ms"] for row in rows] for name in names}


def fatal(exc: BaseException) -> bool:
    """A CUDA error leaves the context unusable: only a fresh process can go on."""
    return "CUDA error" in str(exc) or type(exc).__name__ == "AcceleratorError"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("mode", choices=("serve",))
    p.add_argument("--shapes", required=True, help='JSON {"64": [{B, H, S, D, dtype, causal}, ...]}')
    p.add_argument("--checks", required=True, help="JSON, the same form: the correctness shapes")
    p.add_argument("--tolerance", type=float, default=0.01)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--input-sets", type=int, default=4)
    p.add_argument("--settle-ms", type=float, default=100.0)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr  # the bench's own lines go to the log, never into a reply
    if not torch.cuda.is_available():
        replies.write(json.dumps({"fatal": True, "error": no_cuda_device()}) + "\n")
        return 2
    server = Server(args)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = server.handle(json.loads(line))
        except Exception as exc:
            traceback.print_exc()
            replies.write(json.dumps({"error": f"{type(exc).__name__}: {exc}", "fatal": fatal(exc)}) + "\n")
            if fatal(exc):
                return 3
            continue
        replies.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
