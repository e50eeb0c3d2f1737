"""Stand-ins at the two side-effect boundaries of a knob search, and nowhere else: the build of a
define-knob variant (which here writes a marker into the box's own `build/tune/`, at once) and the
measuring child on the GPU (a `workload_probe.py serve` whose kernel speed is a known function of
the configuration, timed with noise). The search itself — Optuna's study in its store, the seed,
TPE, pruning, the worker's look-ahead, the events — runs for real.

The space is an attention-like tile search of define knobs, one group per head dim (`keep_per`
("D",)): block rows BM, keys per tile BN, K/V stages ST, O staged through shared memory O_SMEM."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cockpit.tune.build import Built, build_dir
from cockpit.tune.measure import MeasureCrashed, MeasureFailed
from cockpit.tune.plan import BenchSettings, GroupPlan, KnobPlan, PlanBuild
from cockpit.tune.seeds import seed_order
from cockpit.tune.space import Group, KnobSetting, Variant, label
from cockpit.workload.tuned import KnobDecl

WORKLOAD = "tiles"
BUILD_NAME = "tiles_ext"
TILES = (
    KnobDecl("BM", "define", "K_D{D}_BM", 64),
    KnobDecl("BN", "define", "K_D{D}_BN", 64),
    KnobDecl("ST", "define", "K_D{D}_ST", 1),
    KnobDecl("O_SMEM", "define", "K_D{D}_O_SMEM", True),
)
OPTIONS: dict[str, tuple[Any, ...]] = {"BM": (64, 128), "BN": (16, 64, 128), "ST": (1, 2),
                                       "O_SMEM": (True, False)}
NAMES = [k.name for k in TILES]
CURRENT: KnobSetting = (64, 64, 1, True)
SEED_TRIALS = 6


def every_config(options: dict[str, tuple[Any, ...]] = OPTIONS) -> tuple[KnobSetting, ...]:
    out: list[KnobSetting] = [()]
    for name in NAMES:
        out = [(*c, v) for c in out for v in options[name]]
    return tuple(out)


def bench(d: int, seq_lens: tuple[int, ...] = (1024, 4096)) -> tuple[dict[str, Any], ...]:
    return tuple({"B": 4, "H": 16, "S": s, "D": d, "dtype": "fp16", "causal": False} for s in seq_lens)


def tile_plan(run_dir: str = "sessions/s1/tune", run: str = "tune-20231114-221320", trials: int = 14,
              seq_lens: tuple[int, ...] = (1024, 4096), d: int = 64) -> KnobPlan:
    """What `cockpit tune` lays out for the tiles of one head dim on an H100 (sm_90): every
    combination allowed by the rule, the current tile first in the seed."""
    feasible = every_config()
    seeds, how = seed_order(feasible, OPTIONS, NAMES, CURRENT, SEED_TRIALS)
    shapes = bench(d, seq_lens)
    checks = tuple({"B": 3, "H": 5, "S": s, "D": d, "dtype": "fp16", "causal": c}
                   for s in (17, 1000) for c in (False, True))
    group = GroupPlan(Group({"D": d}, shapes, checks), feasible, CURRENT, tuple(seeds), ())
    return KnobPlan(
        run=run, run_dir=run_dir, session_journal=str(Path(run_dir).parent / "journal.jsonl"),
        workload=WORKLOAD, workload_argv=("--workload", "workloads/tiles/tiles.py"),
        build=PlanBuild(BUILD_NAME, ("csrc/tiles.cu",)),
        tuned_file="workloads/tiles/tiles.tuned.json", keep_per=("D",), knobs=TILES, options=dict(OPTIONS),
        arch="sm_90", target="H100 (sm_90)", trials=trials, prune_slower=0.05, budget_s=600.0, seed_how=how,
        baseline="SDPA", groups=(group,),
        settings=BenchSettings(reps=30, warmup=5, input_sets=4, settle_ms=0, rounds=1),
    )


def speed(config: KnobSetting) -> float:
    """A kernel whose speed (x SDPA) peaks at BM128 BN128, two stages, O staged."""
    bm, bn, st, o_smem = config
    x = 1.0
    x *= {64: 0.85, 128: 1.0}[bm]
    x *= {16: 0.6, 64: 0.95, 128: 1.1}[bn]
    x *= 1.1 if st == 2 else 1.0
    x *= 1.0 if o_smem else 0.97
    return x


def outcome(config: KnobSetting) -> str:
    """What the GPU stand-in makes of a configuration: BN16 with a direct O store computes garbage;
    64-row blocks with two stages crash the CUDA context; BM128 BN64 with two stages and a direct
    store is refused at launch (the child lives on)."""
    bm, bn, st, o_smem = config
    if bn == 16 and not o_smem:
        return "incorrect"
    if bm == 64 and st == 2:
        return "crashed"
    if (bm, bn, st, o_smem) == (128, 64, 2, False):
        return "failed"
    return "timed"


def fastest() -> KnobSetting:
    return max((c for c in every_config() if outcome(c) == "timed"), key=speed)


def builder(workspace: Path, compiled: list[str], lock: threading.Lock) -> Callable[[Variant], Built]:
    """A variant's build, into this box's own build/tune/ (where the real build puts it)."""

    def build(v: Variant) -> Built:
        where = build_dir(workspace, BUILD_NAME, v.key)
        where.mkdir(parents=True, exist_ok=True)
        (where / "flags").write_text(" ".join(v.flags))
        with lock:
            compiled.append(v.key)
        return Built(v.key, True, 0.01, False)

    return build


CHILD_PID = 4242


def quiet_window(times: dict[str, list[list[float]]], shapes: list[dict[str, Any]], card: str) -> dict[str, Any]:
    """A `confirm` reply as the measuring child gives it (cockpit/probes/workload/tune_serve.py):
    the times, and a window NVML watched at full clocks with only the child on the GPU."""
    t0 = time.time()
    samples = [{"t": t0 + i * 0.02, "util": 100, "sm_clock": 1980, "max_sm_clock": 1980, "throttle": 0,
                "temp": 50, "power_w": 400.0, "pids": [[CHILD_PID, 1000]]} for i in range(60)]
    gpu = {"cuda_ordinal": 0, "name": card, "uuid": "GPU-fake", "pci_bus_id": None,
           "cuda_visible_devices": "GPU-fake", "nvml_index": 0, "nvml_uuid": "GPU-fake", "max_sm_clock": 1980}
    rows = [{"config": " ".join(f"{k}={v}" for k, v in shape.items()), "shape": shape, "dtype": shape["dtype"]}
            for shape in shapes]
    return {"times_ms": times, "started": t0, "finished": t0 + 1.2, "pid": CHILD_PID, "gpu": gpu,
            "gpu_samples": samples, "gpu_watch_error": None, "rows": rows}


@dataclass
class FakeGpu:
    """The measuring child on a GPU that follows `speed`, each call's time with 1 % noise, and
    `outcome`. It loads a configuration's build from `workspace`'s build/tune/ (asserting it is
    there), and records (op, label) of every request. A `confirm` (the confirmation, then the
    re-confirm) reads every configuration and the baseline in a quiet window; `reads` makes
    the n-th one read some configurations at other speeds."""

    workspace: Path | None = None
    delay_s: float = 0.0
    """How long each timing takes: a GPU is busy while it measures."""
    seed: int = 0
    base_ms: tuple[float, ...] = (0.5, 2.0)
    restarts: int = 0
    calls: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    reads: list[dict[KnobSetting, float]] = field(default_factory=list)
    """Per `confirm`, in order: configurations read at these speeds (x SDPA) instead of `speed`'s."""
    confirms: int = 0
    card: str = "NVIDIA H100 80GB HBM3"
    """The card as torch and NVML name it, in a `confirm`'s window."""

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        op = message["op"]
        if op == "baseline":
            return {"times_ms": self._times(1.0, 30)}
        if op == "confirm":
            return self._confirm(message["configs"], message["shapes"])
        config = self._loaded(message["config"])
        name = label(TILES, config)
        what = outcome(config)
        if op == "check":
            self.calls.append(("check", name))
            if what == "incorrect":
                return {"ok": False, "detail": "FAILS at B3 H5 S17 D64 fp16: rel L2 3.1e-01 > 0.01"}
            return {"ok": True, "detail": f"{len(message['shapes'])} shapes correct"}
        self.calls.append(("short" if message["short"] else "full", name))
        time.sleep(self.delay_s)
        if what == "crashed":
            raise MeasureCrashed("an illegal memory access was encountered")
        if what == "failed":
            raise MeasureFailed("ours did not run on B4 H16 S1024 D64 fp16 (see the log)")
        return {"times_ms": self._times(speed(config), 10 if message["short"] else 30)}

    def _loaded(self, request: dict[str, Any]) -> KnobSetting:
        """The configuration a request names, its build asserted in this box's build/tune/."""
        if self.workspace is not None:
            built = build_dir(self.workspace, BUILD_NAME, request["variant"]["key"])
            assert built.is_dir(), f"{built} was never built on this box"
        return tuple(request["knobs"][n] for n in NAMES)

    def _confirm(self, configs: dict[str, Any], shapes: list[dict[str, Any]]) -> dict[str, Any]:
        read = self.reads[self.confirms] if self.confirms < len(self.reads) else {}
        self.confirms += 1
        times = {}
        for name, request in configs.items():
            config = self._loaded(request)
            self.calls.append(("confirm", label(TILES, config)))
            times[name] = self._times(read.get(config, speed(config)), 30)
        return quiet_window(times | {"baseline": self._times(1.0, 30)}, shapes, self.card)

    def _times(self, x: float, n: int) -> list[list[float]]:
        with self.lock:
            rng = random.Random(self.seed)
            self.seed += 1
        return [[ms / x * (1 + rng.gauss(0, 0.01)) for _ in range(n)] for ms in self.base_ms]

    def restart(self) -> None:
        self.restarts += 1

    def close(self) -> None:
        pass
