"""The tuner's measuring child for any workload: one process per GPU holds the CUDA context, the
workload and its oracle's inputs for many configurations (torch's import is paid once).

One JSON request per line on stdin, one JSON reply per line on stdout (the bench's own lines go to
stderr, the log). A configuration is `{"knobs": {...}, "variant": null | {"key", "flags"}}`: its
kwarg knobs reach the candidate's call, its define knobs were compiled beforehand into the
variant's own extension (`spec.Extension.with_flags`), which the workload's `KERNEL.load()`
returns while that configuration runs (`spec.use_variant`).

  {"op": "hello"}                                    -> the device, its arch and UUID
  {"op": "check", "config": C, "shapes": [...]}      -> {"ok", "detail"}: the workload's check
       against its oracle, output poisoned with NaN, smallest shape first
  {"op": "time", "config": C, "shapes": [...], "short": b} -> {"times_ms": [[...] per shape]}
  {"op": "baseline", "shapes": [...]}                -> the same for the workload's baseline reference
  {"op": "confirm", "configs": {name: C}, "shapes": [...]} -> every configuration and the baseline
       interleaved (the bench gate's blocks), per-call times, and the NVML window for validity
A CUDA error poisons the context: the reply says "fatal" and the child exits 3.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TextIO

import torch

from cockpit.probes.block_watch import BlockJudge
from cockpit.probes.gpu_watch import GpuWatch
from cockpit.probes.workload.check import call, correctness
from cockpit.probes.workload.timing import Bind, Run, bench, impl_id
from cockpit.probes.workload_load import first_line
from cockpit.workload.probe_wire import CheckReply, ConfigJson, Reply, ShapeJson
from cockpit.workload.result_wire import BenchRowJson
from cockpit.workload.spec import Extension, Workload, use_variant
from cockpit.workload.tuned import Tuned

BASELINE = "baseline"


class Server:
    def __init__(
        self, w: Workload, tuned: Tuned, settings: Mapping[str, Any], say: Callable[[str], None]
    ) -> None:
        self.w = w
        self.tuned = tuned
        self.settings = settings
        self.say = say
        self.ours_name, self.ours = next(iter(w.candidates.items()))
        self.base = w.build if isinstance(w.build, Extension) else None
        self.kwarg_names = {k.name for k in w.knobs if k.via == "kwarg"}

    def variant(self, config: ConfigJson) -> Extension | None:
        spec = config.get("variant")
        if not spec:
            return None
        if self.base is None:
            raise ValueError(f"define knobs need an Extension build; {self.w.name} is {self.w.build.kind}")
        return self.base.with_flags(str(spec["key"]), [str(f) for f in spec["flags"]])

    def bind(self, config: ConfigJson) -> Bind:
        """The candidate's call per shape under this configuration."""
        ext = self.variant(config)
        if self.base is not None:
            use_variant(self.base, ext)  # loads it now: a variant that does not import fails here
        base, fn = self.base, self.ours
        knobs = {k: v for k, v in dict(config.get("knobs", {})).items() if k in self.kwarg_names}

        def on(shape: Mapping[str, Any]) -> Run:
            values = {**self.tuned.kwargs(shape), **knobs}
            if base is None:
                return lambda inputs, buf: call(fn, inputs, buf, values)

            def run(inputs: Sequence[Any], buf: Any) -> Any:
                use_variant(base, ext)  # two dict writes: configurations interleave in a confirmation
                return call(fn, inputs, buf, values)

            return run

        return on

    def handle(self, req: Mapping[str, Any]) -> Reply:
        """One request (probe_wire.Request, as JSON) answered."""
        op = req["op"]
        if op == "hello":
            props = torch.cuda.get_device_properties(0)
            return {
                "device": props.name,
                "arch": f"sm_{props.major}{props.minor}",
                "uuid": str(getattr(props, "uuid", "")),
                "pid": os.getpid(),
            }
        shapes = [dict(s) for s in req.get("shapes", [])]
        if op == "check":
            return self.check(req["config"], shapes)
        if op == "time":
            rows = self.rows({"ours": self.bind(req["config"])}, shapes, bool(req.get("short")))
            return {"times_ms": times(rows, ["ours"])["ours"]}
        if op == BASELINE:
            rows = self.rows({BASELINE: self.baseline()}, shapes, False)
            return {"times_ms": times(rows, [BASELINE])[BASELINE]}
        if op == "confirm":
            impls = {name: self.bind(config) for name, config in req["configs"].items()}
            started = time.time()
            with GpuWatch(torch.cuda.current_device()) as watch:
                rows = self.rows({**impls, BASELINE: self.baseline()}, shapes, False, BlockJudge(watch))
            return {
                "times_ms": times(rows, [*impls, BASELINE]),
                "started": started,
                "finished": time.time(),
                "pid": os.getpid(),
                "gpu": getattr(watch, "gpu", None),
                "gpu_samples": watch.samples,
                "gpu_watch_error": watch.error,
                "rows": [{k: v for k, v in r.items() if k != "impl"} | {"impl": _medians(r)} for r in rows],
            }
        raise ValueError(f"unknown op {op!r}")

    def baseline(self) -> Bind:
        ref = self.w.baseline
        if ref is None:
            raise ValueError(f"{self.w.name} declares no timed reference to tune against")
        fn = ref.fn
        return lambda shape: lambda inputs, buf: fn(*inputs)

    def check(self, config: ConfigJson, shapes: list[ShapeJson]) -> CheckReply:
        self.bind(config)  # the configuration's variant is what KERNEL.load() returns now
        knobs = {k: v for k, v in dict(config.get("knobs", {})).items() if k in self.kwarg_names}
        alone = replace(self.w, candidates={self.ours_name: self.ours})
        rows, ok = correctness(alone, shapes, lambda s: {**self.tuned.kwargs(s), **knobs}, self.say)
        if ok:
            return {"ok": True, "detail": f"{len(shapes)} shapes correct"}
        bad = rows[-1]
        why = bad.get("what") or (
            f"{bad['nonfinite']} NaN/Inf"
            if bad.get("nonfinite")
            else f"rel L2 {bad.get('rel_l2', 0):.2e} > {bad.get('tolerance')}"
        )
        return {"ok": False, "detail": f"FAILS at {bad['config']}: {why}"}

    def rows(
        self, impls: Mapping[str, Bind], shapes: list[ShapeJson], short: bool, judge: BlockJudge | None = None
    ) -> list[BenchRowJson]:
        """The trial's times (`judge`: the confirmation's blocks checked against its watch and timed
        again when the card slowed them, as the bench gate's are). Every configuration writes
        outputs of its own, NaN-poisoned, and its timed outputs are checked (guards
        "poisoned-trial-outputs", "timed-outputs"): one that writes nothing, or something wrong,
        never hides behind another configuration's answer left in a shared buffer."""
        s = self.settings
        checked = [name for name in impls if name != BASELINE]
        if short:  # the first look the pruner decides on: one block per shape, a third of the calls
            return bench(
                self.w,
                impls,
                max(5, s["reps"] // 3),
                2,
                s["input_sets"],
                self.say,
                budget_s=0.1,
                settle_ms=s["settle_ms"],
                rounds=1,
                shapes=shapes,
                keep_times=True,
                checked=checked,
            )
        return bench(
            self.w,
            impls,
            s["reps"],
            s["warmup"],
            s["input_sets"],
            self.say,
            settle_ms=s["settle_ms"],
            rounds=s["rounds"],
            shapes=shapes,
            keep_times=True,
            judge=judge,
            checked=checked,
        )


def times(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> dict[str, list[list[float]]]:
    for row in rows:
        missing = [name for name in names if name not in row["impl"]]
        if missing:
            raise RuntimeError(f"{', '.join(missing)} did not run on {row['config']} (see the log)")
    return {name: [list(row["impl"][name]["times_ms"]) for row in rows] for name in names}


def _medians(row: Mapping[str, Any]) -> dict[str, dict[str, object]]:
    return {impl: {k: v for k, v in cell.items() if k != "times_ms"} for impl, cell in row["impl"].items()}


def fatal(exc: BaseException) -> bool:
    """A CUDA error leaves the context unusable: only a fresh process can go on."""
    return "CUDA error" in str(exc) or type(exc).__name__ == "AcceleratorError"


def serve(w: Workload, tuned: Tuned, settings: Mapping[str, Any], requests: TextIO = sys.stdin) -> int:
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr  # the bench's own lines go to the log, never into a reply
    if not torch.cuda.is_available():
        from cockpit.probes.gpu_watch import no_cuda_device

        replies.write(json.dumps({"fatal": True, "error": no_cuda_device()}) + "\n")
        return 2
    server = Server(w, tuned, settings, lambda text: print(text, file=sys.stderr, flush=True))
    for line in requests:
        if not line.strip():
            continue
        try:
            reply = server.handle(json.loads(line))
        except Exception as exc:
            traceback.print_exc()
            replies.write(json.dumps({"error": first_line(exc), "fatal": fatal(exc)}) + "\n")
            if fatal(exc):
                return 3
            continue
        replies.write(json.dumps(reply) + "\n")
    return 0


__all__ = ["BASELINE", "Server", "impl_id", "serve"]
