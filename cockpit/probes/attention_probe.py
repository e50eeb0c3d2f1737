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
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

try:
    import torch
    import torch.nn.functional as F
except ImportError as missing:  # the traceback stays in the gate's log; its last line says what to do
    traceback.print_exc()
    print(f"torch does not import in {sys.executable} ({missing}): install torch's CUDA build in this "
          "python, or start the cockpit from the environment that has it", flush=True)
    raise SystemExit(2) from None

Impl = Callable[..., torch.Tensor]
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


# rel L2 against the float32 reference that a correct kernel stays under, per dtype.
TOLERANCE = {"fp16": 0.01, "bf16": 0.01}


def say(text: str) -> None:
    print(text, flush=True)


def config_name(cfg: dict[str, Any]) -> str:
    causal = "causal" if cfg["causal"] else "full"
    return f"B{cfg['B']} H{cfg['H']} S{cfg['S']} D{cfg['D']} {cfg['dtype']} {causal}"


def flops(cfg: dict[str, Any]) -> float:
    """4·B·H·S²·D (QKᵀ and PV), half of it for causal."""
    f = 4.0 * cfg["B"] * cfg["H"] * cfg["S"] ** 2 * cfg["D"]
    return f / 2 if cfg["causal"] else f


def make_inputs(cfg: dict[str, Any], device: str, seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator(device=device).manual_seed(seed)  # on the GPU: 8k-token inputs in ms
    shape = (cfg["B"], cfg["H"], cfg["S"], cfg["D"])
    return tuple(torch.randn(shape, generator=g, device=device).to(DTYPES[cfg["dtype"]])
                 for _ in range(3))


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
              chunk: int = 1024) -> torch.Tensor:
    """Exact attention in float32, a block of query rows at a time (bounded memory)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    qf, kf, vf = q.float(), k.float(), v.float()
    out = torch.empty_like(qf)
    s = q.shape[-2]
    for lo in range(0, s, chunk):
        hi = min(s, lo + chunk)
        scores = qf[..., lo:hi, :] @ kf.transpose(-1, -2) * scale
        if causal:
            rows = torch.arange(lo, hi, device=q.device)[:, None]
            cols = torch.arange(s, device=q.device)[None, :]
            scores = scores.masked_fill(cols > rows, float("-inf"))
        out[..., lo:hi, :] = torch.softmax(scores, dim=-1) @ vf
    return out


def compare(out: torch.Tensor, ref: torch.Tensor) -> dict[str, float]:
    o = out.float()
    nonfinite = int((~torch.isfinite(o)).sum().item())
    diff = (o - ref).nan_to_num(nan=float("inf"))
    max_abs = float(diff.abs().max().item()) if diff.numel() else 0.0
    rel = float(diff.norm().item() / max(ref.norm().item(), 1e-30))
    return {"max_abs": max_abs, "rel_l2": rel, "nonfinite": nonfinite}


def run_poisoned(impl: Impl, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                 causal: bool) -> torch.Tensor:
    """Call `impl` writing into a NaN-filled buffer, so elements it never writes show up."""
    out = torch.full_like(q, float("nan"))
    result = impl(q, k, v, causal, out)
    return out if result is None else result


def correctness(impl: Impl, configs: Sequence[dict[str, Any]], device: str,
                tolerance: dict[str, float]) -> tuple[list[dict[str, Any]], bool]:
    """Smallest config first; stops at the first that fails."""
    rows: list[dict[str, Any]] = []
    for index, cfg in enumerate(sorted(configs, key=lambda c: (c["B"] * c["H"] * c["S"], c["D"]))):
        q, k, v = make_inputs(cfg, device, seed=1000 + index)
        out = run_poisoned(impl, q, k, v, cfg["causal"])
        if device == "cuda":
            torch.cuda.synchronize()
        stats = compare(out, reference(q, k, v, cfg["causal"]))
        tol = tolerance.get(cfg["dtype"], 1e-2)
        ok = stats["nonfinite"] == 0 and stats["rel_l2"] <= tol
        rows.append({"config": config_name(cfg), **cfg, **stats, "tolerance": tol, "ok": ok})
        say(f"{'PASS' if ok else 'FAIL'}  {config_name(cfg):<36} max|Δ| {stats['max_abs']:.3e}  "
            f"rel L2 {stats['rel_l2']:.3e}  non-finite {stats['nonfinite']}")
        if not ok:
            return rows, False
        del q, k, v, out
    return rows, True


# Benchmark -----------------------------------------------------------------------------------


def sdpa_impls() -> dict[str, Impl]:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def backend(b: Any) -> Impl:
        def run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                out: torch.Tensor | None = None) -> torch.Tensor:
            with sdpa_kernel(b):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return run

    def default(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                out: torch.Tensor | None = None) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return {"sdpa": default, "flash": backend(SDPBackend.FLASH_ATTENTION),
            "cudnn": backend(SDPBackend.CUDNN_ATTENTION),
            "efficient": backend(SDPBackend.EFFICIENT_ATTENTION)}


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * p
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def block_plan(call_ms: dict[str, float], n: int, rounds: int, settle_ms: float,
               config_index: int, max_settle_calls: int = 5000) -> list[tuple[str, int, int]]:
    """The timed blocks of one config, in the order they run: (implementation, untimed calls
    first, timed calls). Each implementation gets `n` timed calls split over `rounds` blocks;
    before each block it runs `settle_ms` of calls untimed, so its timed calls see the clock its
    own power draw settles at (a power-capped GPU needs ~100 ms after a lighter kernel; timing it
    right after one reads up to 9 % fast). The order alternates round by round and config by
    config, so slow drift (temperature) falls on every implementation alike."""
    names = list(call_ms)
    per_round = [n // rounds + (1 if r < n % rounds else 0) for r in range(rounds)]
    plan = []
    for r in range(rounds):
        order = names if (config_index + r) % 2 == 0 else names[::-1]
        for name in order:
            settle = min(max_settle_calls, math.ceil(settle_ms / max(call_ms[name], 1e-3)))
            if plan and plan[-1][0] == name:
                settle = 0  # it just ran: already at its own clock
            if per_round[r]:
                plan.append((name, settle, per_round[r]))
    return plan


def bench(impls: dict[str, Impl], configs: Sequence[dict[str, Any]], reps: int, warmup: int,
          input_sets: int, budget_s: float = 0.5, settle_ms: float = 100.0,
          rounds: int = 2, keep_times: bool = False) -> list[dict[str, Any]]:
    """Time every implementation on every config, in blocks interleaved by implementation.

    No host sync inside a block: events are recorded in stream order and read at the end, so the
    GPU runs back to back as it does in real use (a sync after each call leaves it idle between
    calls, and an idle GPU boosts above its power-capped steady state). Timed calls get at least
    `reps` and grow for short kernels up to `budget_s` of GPU time per config; see `block_plan`
    for the order and the untimed settling before each block. `keep_times`: every call's time
    too (`times_ms`), for confidence intervals (the tune gate bootstraps them).
    """
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")  # > any L2 (50 MB H100)
    flush_ms = _flush_ms(flush)
    rows = []
    for index, cfg in enumerate(configs):
        sets = [make_inputs(cfg, "cuda", seed=2000 + 10 * index + i) for i in range(input_sets)]
        runnable: dict[str, Impl] = {}
        estimate_ms: dict[str, float] = {}
        for name, fn in impls.items():
            try:
                for i in range(warmup):
                    q, k, v = sets[i % input_sets]
                    fn(q, k, v, cfg["causal"])
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(*sets[0], cfg["causal"])
                end.record()
                end.synchronize()
                estimate_ms[name] = start.elapsed_time(end)
                runnable[name] = fn
            except RuntimeError as exc:  # a backend that does not support this config
                say(f"  {name}: not available for {config_name(cfg)} ({str(exc).splitlines()[0][:80]})")
        n = max(reps, min(1000, int(budget_s * 1000 / max(sum(estimate_ms.values()), 1e-3))))
        call_ms = {name: ms + flush_ms for name, ms in estimate_ms.items()}
        events: dict[str, list[tuple[Any, Any]]] = {name: [] for name in runnable}
        # The GPU's timeline in wall-clock time: an event the host waited for, and the time then.
        anchor = torch.cuda.Event(enable_timing=True)
        anchor.record()
        anchor.synchronize()
        anchor_t = time.time()
        spans: list[tuple[str, Any, Any, int]] = []
        rep = 0
        for name, settle, timed in block_plan(call_ms, n, rounds, settle_ms, index):
            fn = runnable[name]
            first = len(events[name])
            for i in range(settle + timed):
                q, k, v = sets[rep % input_sets]
                rep += 1
                flush.zero_()  # outside the events: every call starts with a cold L2
                if i < settle:
                    fn(q, k, v, cfg["causal"])
                    continue
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(q, k, v, cfg["causal"])
                end.record()
                events[name].append((start, end))
            spans.append((name, events[name][first][0], events[name][-1][1], timed))
        torch.cuda.synchronize()
        row: dict[str, Any] = {"config": config_name(cfg), **cfg, "flops": flops(cfg), "impl": {}}
        row["blocks"] = block_spans(anchor, anchor_t, spans)
        for name, pairs in events.items():
            samples = [s.elapsed_time(e) for s, e in pairs]
            median = statistics.median(samples)
            row["impl"][name] = {"median_ms": median, "p20_ms": percentile(samples, 0.2),
                                 "p80_ms": percentile(samples, 0.8),
                                 "tflops": flops(cfg) / (median * 1e-3) / 1e12, "samples": len(samples)}
            if keep_times:
                row["impl"][name]["times_ms"] = samples
        ours = row["impl"].get("ours")
        for base in ("sdpa", "flash"):
            if ours and base in row["impl"]:
                row[f"speedup_vs_{base}"] = row["impl"][base]["median_ms"] / ours["median_ms"]
        cells = "  ".join(f"{impl} {r['median_ms']:.3f} ms ({r['tflops']:.0f} TF/s)"
                          for impl, r in row["impl"].items())
        say(f"{config_name(cfg):<36} {cells}  speedup vs sdpa {row.get('speedup_vs_sdpa', 0):.2f}x")
        rows.append(row)
        del sets
    return rows


def block_spans(anchor: Any, anchor_t: float, spans: Sequence[tuple[str, Any, Any, int]]
                ) -> list[dict[str, Any]]:
    """When each timed block ran, in wall-clock seconds, so the NVML samples inside it tell the
    clock it ran at: (implementation, its first start event, its last end event, timed calls),
    placed on the GPU's timeline by `anchor`, an event the host saw complete at `anchor_t`."""
    return [{"impl": name, "t0": round(anchor_t + anchor.elapsed_time(start) / 1e3, 4),
             "t1": round(anchor_t + anchor.elapsed_time(end) / 1e3, 4), "calls": timed}
            for name, start, end, timed in spans]


def _flush_ms(flush: torch.Tensor) -> float:
    """What one L2 flush costs on the GPU, so settling is sized in GPU time, flushes included."""
    for _ in range(3):
        flush.zero_()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        flush.zero_()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 10


def device_identity(ordinal: int) -> dict[str, Any]:
    """The GPU behind CUDA ordinal `ordinal`, named so NVML finds it: UUID and PCI bus id."""
    props = torch.cuda.get_device_properties(ordinal)
    raw = str(getattr(props, "uuid", "") or "")
    uuid = raw if raw.startswith(("GPU-", "MIG-")) or not raw else f"GPU-{raw}"
    pci = None
    if hasattr(props, "pci_bus_id"):  # "00000000:1B:00.0", as NVML writes it
        pci = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    return {"cuda_ordinal": ordinal, "name": props.name, "uuid": uuid, "pci_bus_id": pci,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_handle(nv: Any, gpu: dict[str, Any]) -> Any:
    """NVML's handle for the GPU torch runs on: by UUID, else by PCI bus id; never by ordinal
    (with CUDA_VISIBLE_DEVICES=1, torch's cuda:0 is NVML's GPU 1). A MIG slice is watched
    through its GPU."""
    uuid, pci = gpu.get("uuid"), gpu.get("pci_bus_id")
    handle = None
    tried = []
    for name in ([uuid, "MIG-" + uuid[4:]] if uuid and uuid.startswith("GPU-") else [uuid]):
        if name and handle is None:
            try:
                handle = nv.nvmlDeviceGetHandleByUUID(name)
            except nv.NVMLError as exc:
                tried.append(f"UUID {name}: {exc}")
    if handle is None and pci:
        try:
            handle = nv.nvmlDeviceGetHandleByPciBusId(pci)
        except nv.NVMLError as exc:
            tried.append(f"PCI bus id {pci}: {exc}")
    if handle is None:
        raise LookupError("NVML does not know the GPU torch runs on (" + "; ".join(tried) + ")")
    try:
        mig = nv.nvmlDeviceIsMigDeviceHandle(handle)
    except nv.NVMLError:  # a driver without MIG: no slices to unwrap
        mig = False
    return nv.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle) if mig else handle


class GpuWatch:
    """NVML samples every 50 ms in a thread, of the GPU behind CUDA ordinal `ordinal` (found in
    NVML by UUID): clocks, throttle reasons, utilization, processes. `gpu` names it, NVML's
    index and UUID added once the watch has found it."""

    def __init__(self, ordinal: int, every_s: float = 0.05) -> None:
        self.samples: list[dict[str, Any]] = []
        self.error: str | None = None
        self.gpu = device_identity(ordinal)
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> GpuWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        try:
            import pynvml as nv

            nv.nvmlInit()
            h = nvml_handle(nv, self.gpu)
            max_sm = nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)
            self.gpu.update(nvml_index=int(nv.nvmlDeviceGetIndex(h)),
                            nvml_uuid=_text(nv.nvmlDeviceGetUUID(h)), max_sm_clock=max_sm)
        except Exception as exc:  # no NVML, or no such GPU: the verdict says it was not watched
            self.error = f"{type(exc).__name__}: {exc}"
            return
        while not self._stop.wait(self._every_s):
            try:
                procs = nv.nvmlDeviceGetComputeRunningProcesses(h)
                self.samples.append({
                    "t": time.time(), "util": nv.nvmlDeviceGetUtilizationRates(h).gpu,
                    "sm_clock": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM), "max_sm_clock": max_sm,
                    "throttle": int(nv.nvmlDeviceGetCurrentClocksEventReasons(h)),
                    "temp": nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
                    "power_w": nv.nvmlDeviceGetPowerUsage(h) / 1000,
                    "pids": [[p.pid, (p.usedGpuMemory or 0) // (1 << 20)] for p in procs],
                })
            except Exception as exc:
                self.error = f"{type(exc).__name__}: {exc}"


def no_cuda_device() -> str:
    """One line: why torch sees no GPU, and what to do."""
    if torch.version.cuda is None:
        return (f"no CUDA device: torch {torch.__version__} is a CPU-only build; install torch's CUDA "
                "build in this python (`cockpit gate env` checks the rest)")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    mask = f"CUDA_VISIBLE_DEVICES = {visible!r}" if visible is not None else "CUDA_VISIBLE_DEVICES unset"
    return (f"no CUDA device: torch {torch.__version__} (CUDA {torch.version.cuda}) sees none; `nvidia-smi` "
            f"must list the GPU ({mask}; `cockpit gate env` says why)")


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
        return ext.forward(q, k, v, causal, None, out)  # type: ignore[no-any-return]
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
