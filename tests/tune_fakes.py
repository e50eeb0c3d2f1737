"""Stand-ins at the two side-effect boundaries of a search, and nowhere else: nvcc (a compile
that returns at once, with ptxas's registers as the limits estimate them) and the GPU (a
measurer whose kernel speed is a known function of the configuration, timed with noise).
The search itself — Optuna's study on its journal file, the seed, TPE, pruning, the worker's
look-ahead, the events — runs for real."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cockpit.analysis.stats import flops
from cockpit.config import Config, load_config
from cockpit.gates.build_log import KernelResources
from cockpit.hardware.limits import limits_for
from cockpit.session.journal import Event
from cockpit.tune.compile import Compiled, CompilePool
from cockpit.tune.feasibility import register_estimate
from cockpit.tune.launch import TuneChecks, new_run
from cockpit.tune.measure import Check, MeasureCrashed, MeasureFailed
from cockpit.tune.plan import make_plan
from cockpit.tune.runplan import RunPlan
from cockpit.tune.search import SearchContext
from cockpit.tune.space import KernelParams
from cockpit.tune.target import resolve_target

TOML = """
[workload]
settle_ms = 0
rounds = 1

[tune]
head_dims = [64]
seq_lens = [1024, 4096]
budget_min = 5
trials = 14
seed_trials = 6
prune_slower = 0.05
"""


def fake_compile(params: KernelParams, head_dim: int) -> Compiled:
    """What ptxas would say if the estimate were exact; no library is built."""
    regs = min(255, register_estimate(params, head_dim) + 8)
    kernel = KernelResources(f"attn_fwd_kernel<__half, {head_dim}>", "sm_90", regs, 0, 0, 0, 0)
    return Compiled(params, head_dim, params.label.replace(" ", "_"), Path(f"/fake/{params.label}.so"),
                    0.01, False, (kernel,))


def model_tflops(params: KernelParams) -> float:
    """A kernel whose speed peaks at BM128 BN128, 4 warps (32 rows each), two stages."""
    tflops = 200.0
    tflops *= {64: 0.85, 128: 1.0, 256: 0.9}[params.block_m]
    tflops *= {16: 0.6, 32: 0.8, 64: 0.95, 128: 1.1, 256: 0.9}[params.block_n]
    tflops *= 1.08 if params.block_m // params.warps == 32 else 1.0
    tflops *= 1.1 if params.stages == 2 else 1.0
    tflops *= 1.0 if params.o_smem else 0.97
    tflops *= 1.0 if params.q_regs else 0.99
    return tflops


@dataclass
class FakeGpu:
    """`measure this configuration` on a GPU that follows `model_tflops`: each call's time is
    the model's with 1 % noise; block_n=16 with a direct O store computes garbage; 64-row blocks
    with two stages crash the CUDA context; BM128 BN64 with two stages and a direct store is
    refused at launch (the child lives on)."""

    shapes: list[dict[str, Any]]
    delay_s: float = 0.0
    """How long each timing takes: a GPU is busy while it measures."""
    seed: int = 0
    restarts: int = 0
    calls: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _params(self, library: Path) -> KernelParams:
        bm, bn, warps, mb, st, o, *q = library.stem.split()
        return KernelParams(int(bm[2:]), int(bn[2:]), int(warps[:-1]), int(mb[2:]), int(st[:-2]), o == "O:smem",
                            q != ["Q:smem"])

    def correctness(self, library: Path, head_dim: int) -> Check:
        params = self._params(library)
        self.calls.append(("check", params.label))
        if params.block_n == 16 and not params.o_smem:
            return Check(False, "FAILS at B3 H5 S17 D64 fp16 full: rel L2 3.1e-01 > 0.01")
        return Check(True, "52 shapes correct")

    def timing(self, library: Path, head_dim: int, short: bool) -> list[list[float]]:
        params = self._params(library)
        self.calls.append(("short" if short else "full", params.label))
        time.sleep(self.delay_s)
        if params.block_m == 64 and params.stages == 2:
            raise MeasureCrashed("an illegal memory access was encountered")
        if (params.block_m, params.block_n, params.stages, params.o_smem) == (128, 64, 2, False):
            raise MeasureFailed("ours did not run on B4 H16 S1024 D64 fp16 full (see the log)")
        return self._times(model_tflops(params), 10 if short else 30)

    def flash(self, head_dim: int) -> list[list[float]]:
        return self._times(190.0, 30)

    def _times(self, tflops: float, n: int) -> list[list[float]]:
        with self.lock:
            rng = random.Random(self.seed)
            self.seed += 1
        return [[flops(s) / (tflops * 1e12) * 1e3 * (1 + rng.gauss(0, 0.01)) for _ in range(n)]
                for s in self.shapes]

    def restart(self) -> None:
        self.restarts += 1

    def close(self) -> None:
        pass


# What each configuration is checked on before it is timed: two shapes per head dim, as the
# attention workload's correctness grid would give them.
CHECKS = TuneChecks({d: [{"B": 3, "H": 5, "S": s, "D": d, "dtype": "fp16", "causal": c}
                         for s in (17, 1000) for c in (False, True)] for d in (64, 128)}, 1e-2)


def workspace(tmp: Path, toml: str = TOML) -> tuple[Config, Path]:
    (tmp / "cockpit.toml").write_text(toml)
    (tmp / "csrc").mkdir(exist_ok=True)
    return load_config(tmp), tmp


def start_run(tmp: Path, toml: str = TOML) -> tuple[Config, RunPlan]:
    config, root = workspace(tmp, toml)
    plan = make_plan(config.tune, config.workload, resolve_target("9.0", {}, []))
    run = new_run(config, plan, CHECKS, root / "sessions" / "s1" / "tune", root / "sessions" / "s1" / "journal.jsonl",
                  root / "csrc", root / "build" / "tune", 1_700_000_000.0)
    return config, run


def context(run: RunPlan, gpu: FakeGpu, record: Callable[[Event], None], deadline: float = float("inf"),
            clock: Callable[[], float] = lambda: 1_700_000_100.0) -> SearchContext:
    limits = limits_for(run.arch)
    assert limits is not None
    return SearchContext(run, run.head_dims[0], limits, CompilePool(fake_compile, workers=2), gpu, record,
                         clock, deadline, "GPU-fake")
