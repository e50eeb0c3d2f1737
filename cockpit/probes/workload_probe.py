"""Any workload through the gates, in a CHILD python (the one with the user's CUDA torch).

    python workload_probe.py describe    --workspace DIR --workload SRC            (no GPU needed)
    python workload_probe.py jit         --workspace DIR --workload SRC --out R.json
    python workload_probe.py correctness --workspace DIR --workload SRC --out R.json
    python workload_probe.py bench       --workspace DIR --workload SRC --out R.json [--reps N ...]
    python workload_probe.py profile     --workspace DIR --workload SRC [--iters N]
    python workload_probe.py sanitize    --workspace DIR --workload SRC --out R.json [--shapes K]
    python workload_probe.py space       --workspace DIR --workload SRC --limits JSON  (no GPU needed)
    python workload_probe.py serve       --workspace DIR --workload SRC [--reps N ...]  (the tuner's child)

SRC is what cockpit.toml's [workload] names: a module (path or dotted) or gpumode:DIR (then
--task names a file of its task.yml as JSON, read by the cockpit). `describe` prints the manifest as one
line `MANIFEST {...}`; `jit` runs every candidate once on the smallest test shape (a Triton or
load_inline kernel compiles at its first call); `correctness` checks the test grid and the bench
grid's smallest and largest shapes against the oracle, then calls each candidate once with its
kernel a no-op (ghost replay, probes/workload/ghost.py); `bench` times the bench grid against the
timed references, the GPU watched through NVML by UUID; `profile` runs the profile shape for ncu;
`sanitize` calls every candidate once on the K smallest test shapes for compute-sanitizer;
`space` prints the knob combinations the workload's rule allows on those limits (`SPACE {...}`);
`serve` is the tuner's measuring child (probes/workload/tune_serve.py). Knob values kept by
`cockpit tune` (the workload's tuned file, cockpit/workload/tuned.py) are applied on the GPU
architecture they were tuned on: kwargs per shape, defines in the build.
Exit 0 ok, 1 a shape failed, 2 it could not run (the last line says why).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:  # python -m, or imported (tests); mypy reads this
    from cockpit.probes.workload_build import build, tuned_for
    from cockpit.probes.workload_load import (
        WorkloadLoadError,
        first_line,
        load_workload,
        manifest_json,
        space,
    )
else:  # run by path, as the gates do: this folder is sys.path[0]
    from workload_build import build, tuned_for
    from workload_load import WorkloadLoadError, first_line, load_workload, manifest_json, space

from cockpit.probes import guarded, guards_identity
from cockpit.workload.guards import UnknownGuard
from cockpit.workload.result_wire import WIRE, WIRE_KEY, BenchPartJson, CheckPartJson
from cockpit.workload.tuned import Tuned, TunedFileError, WinnerJson

KnobsFor = Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""shape -> the kwarg knobs of a candidate's call on it."""
HELD_MODES = ("correctness", "bench", "serve")
"""The modes whose timer and checks are held to what they were before the workload was imported."""
MANIFEST_LINE = "MANIFEST "
SPACE_LINE = "SPACE "


def say(text: str) -> None:
    print(text, flush=True)


def write_result(out: Path, result: Mapping[str, Any]) -> None:
    tmp = out.with_suffix(".tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(result))
    os.replace(tmp, out)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    os.environ.setdefault("COCKPIT_WORKSPACE", str(args.workspace))
    # kineto's switch, read when a profiler session ends: without it torch's profiler leaves CUPTI's
    # callbacks on after its first session (the bench's kernel-records audit, the is-reference flag)
    # and every later launch in this process pays for them. On an H200 (bench/device/cupti_after.py)
    # SDPA at B4 H16 S32 D64 went from 19.8 to 51.5 us of host time a call; the attention grid took
    # 144 s with every check on against 107 s without, its eager times read up to 1.8x. Torn down, a
    # later session starts again in 0.02 s.
    os.environ["TEARDOWN_CUPTI"] = "1"
    try:
        guarded.start(os.environ)  # before the workload is imported: it cannot turn a guard off
    except UnknownGuard as exc:
        say(str(exc))
        return 2
    if args.mode in HELD_MODES:  # the timer and the checks as they are before the workload can touch them
        guards_identity.start(sys.modules[__name__])
    try:
        task = json.loads((args.workspace / args.task).read_text(encoding="utf-8")) if args.task else None
    except (OSError, ValueError) as exc:
        say(f"{args.task}: cannot read the GPU MODE task the cockpit wrote ({exc}); run the gate again")
        return 2
    try:
        w = load_workload(args.workload, args.workspace, task, json.loads(args.candidates))
    except WorkloadLoadError as exc:
        say(str(exc))
        return 2
    if args.mode in ("describe", "space"):
        return describe(w, args)
    if args.mode == "build":
        code = build(w, args)
        if code is not None:
            return code
        args.mode = "jit"  # Triton, load_inline, a callable: compiled (or checked) by a first call
    return run_on_gpu(w, args)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("mode", choices=("describe", "build", "jit", "correctness", "bench", "profile", "sanitize",
                                    "space", "serve"))
    p.add_argument("--workspace", type=Path, required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--task", default=None, help="a file (workspace-relative) holding a GPU MODE folder's "
                   "task.yml as JSON")
    p.add_argument("--candidates", default="[]")
    p.add_argument("--out", type=Path)
    p.add_argument("--limits", default="{}", help="the target GPU's limits, for the knob rule")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--input-sets", type=int, default=4)
    p.add_argument("--settle-ms", type=float, default=100.0)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--tolerate", default="[]",
                   help="bench: JSON list of clock-event words a timed block may show and stay clean")
    p.add_argument("--iters", type=int, default=5, help="profile: calls of the candidate (ncu skips some)")
    p.add_argument("--shapes", type=int, default=3, help="sanitize: the smallest test shapes called")
    p.add_argument("--variant", default=None, help="build: a tuner's configuration, its own module name")
    p.add_argument("--defines", default="[]", help="build --variant: JSON list of -D flags")
    return p


def describe(w: Any, args: argparse.Namespace) -> int:
    """`describe` prints the manifest, `space` the knob combinations the rule allows, each as one
    line; a rule or knob_defaults that raises is one line naming it."""
    try:
        if args.mode == "describe":
            say(MANIFEST_LINE + json.dumps(manifest_json(w, args.workload, json.loads(args.limits))))
        else:
            say(SPACE_LINE + json.dumps(space(w, json.loads(args.limits))))
    except WorkloadLoadError as exc:
        say(str(exc))
        return 2
    return 0


def run_on_gpu(w: Any, args: argparse.Namespace) -> int:
    try:
        import torch
    except ImportError as missing:
        say(f"torch does not import in {sys.executable} ({missing}): install torch's CUDA build in this "
            "python, or start the cockpit from the environment that has it")
        return 2
    from cockpit.probes.gpu_watch import GpuWatch, device_identity, no_cuda_device

    if not torch.cuda.is_available():
        say(("profile_target: cannot run: " if args.mode == "profile" else "") + no_cuda_device())
        return 2
    major, minor = torch.cuda.get_device_capability()
    try:
        tuned = tuned_for(w, args, f"sm_{major}{minor}")
    except TunedFileError as exc:
        say(str(exc))
        return 2
    knobs = tuned.kwargs
    if args.mode == "serve":
        from cockpit.probes.workload.tune_serve import serve

        return serve(w, tuned, {"reps": args.reps, "warmup": args.warmup, "input_sets": args.input_sets,
                                "settle_ms": args.settle_ms, "rounds": args.rounds})
    if args.mode == "profile":
        return profile_target(w, knobs, args.iters)
    started = time.time()
    gpu = device_identity(torch.cuda.current_device())
    result: dict[str, object] = {WIRE_KEY: WIRE, "mode": args.mode, "workload": w.name,
                                 "source": args.workload, "device": gpu["name"], "gpu": gpu,
                                 "torch": torch.__version__, "started": started, "pid": os.getpid(),
                                 "tuned": kept_here(tuned)}
    if guarded.off():
        result["guards_off"] = sorted(guarded.off())
    try:
        with GpuWatch(torch.cuda.current_device()) as watch:
            ok = run_mode(w, knobs, args, result, watch)
    except (RuntimeError, ValueError, FileNotFoundError, ImportError) as exc:
        say(f"{args.mode} could not run: {first_line(exc)}")
        return 2
    result.update(gpu=watch.gpu, gpu_samples=watch.samples, gpu_watch_error=watch.error,
                  finished=time.time())
    if args.out is not None:
        write_result(args.out, result)
    return 0 if ok else 1


def kept_here(tuned: Tuned) -> list[WinnerJson]:
    """The knob values `cockpit tune` kept for this GPU's architecture, as the result records them."""
    return [wn.as_json() for wn in tuned.winners if wn.arch == tuned.arch]


def run_mode(w: Any, knobs: KnobsFor, args: argparse.Namespace, result: dict[str, object],
             watch: Any) -> bool:
    """The mode's work on the GPU, watched: compile by calling, check, sanitize, or time."""
    if args.mode == "jit":
        return jit(w, knobs, result)
    if args.mode == "correctness":
        return check_all(w, knobs, result)
    if args.mode == "sanitize":
        from cockpit.probes.workload.sanitize import sanitized_calls

        return sanitized_calls(w, knobs, args.shapes, result, say)
    return bench_all(w, knobs, args, result, watch)


def jit(w: Any, knobs: KnobsFor, result: dict[str, object]) -> bool:
    """Compile by calling: every candidate once on the smallest test shape, timed."""
    import torch

    from cockpit.probes.workload.check import call

    shape = w.smallest_first(list(w.test_grid) or list(w.bench_grid))[0]
    inputs = w.make_inputs(1000, **shape)
    compiled: list[dict[str, object]] = []
    for name, fn in w.candidates.items():
        out = w.make_output(*inputs, **shape) if w.make_output is not None else None
        t0 = time.monotonic()
        call(fn, inputs, out, knobs(shape))
        torch.cuda.synchronize()
        seconds = time.monotonic() - t0
        say(f"[{len(compiled) + 1}/{len(w.candidates)}] {name}: first call on {w.shape_name(shape)} "
            f"took {seconds:.2f} s (compile included)")
        compiled.append({"candidate": name, "shape": w.shape_name(shape), "first_call_s": round(seconds, 3)})
    result.update(rows=compiled, ok=True)
    return True


def check_all(w: Any, knobs: KnobsFor, result: dict[str, object]) -> bool:
    from cockpit.probes.workload.check import checked_shapes, correctness

    shapes = checked_shapes(w)
    grads = " and their gradients" if w.grad_modes else ""
    say(f"checking {len(shapes)} shapes x {len(w.candidates)} candidate(s){grads} against "
        f"{w.oracle.name if w.oracle else 'no oracle'}, smallest first")
    warnings: list[str] = []
    rows, ok = correctness(w, shapes, knobs, say, notes=warnings, identity=guards_identity.taken())
    if ok:  # its answers are right: are they its kernel's?
        from cockpit.probes.workload.ghost import ghost_replay

        unchanged = ghost_replay(w, knobs, say)
        rows, ok = rows + unchanged, not unchanged
    part: CheckPartJson = {"rows": rows, "ok": ok,
                           "planned": len(shapes) * len(w.candidates) * (2 if w.grad_modes else 1),
                           "oracle": w.oracle.name if w.oracle else None, "warnings": warnings}
    if w.grad_modes:
        part["modes"] = list(w.modes)
    result.update(part)
    return ok


def bench_all(w: Any, knobs: KnobsFor, args: argparse.Namespace, result: dict[str, object],
              watch: Any) -> bool:
    """Every shape timed (probes/workload/timing.py); a crash at one shape keeps the rows before it
    and names the shape and the implementation (`crash`); a guard that caught a candidate (a timed
    output wrong, work the timer did not see) is `caught`, with its line."""
    from cockpit.analysis.block_validity import BlockRules
    from cockpit.probes.block_watch import BlockJudge
    from cockpit.probes.workload.caught import BenchCaught
    from cockpit.probes.workload.timing import BenchCrash, bench, impl_id, implementations

    impls = implementations(w, knobs)
    optional = frozenset(impl_id(r.name) for r in w.references if r.optional)
    baseline = w.baseline
    labels = impl_labels(w)
    in_modes = f" in {', '.join(w.modes)}" if w.modes != ("forward",) else ""
    say(f"timing {len(w.bench_grid)} shapes{in_modes}: {', '.join(labels.values())}; {args.reps}+ reps in "
        f"{args.rounds} blocks per implementation, each after {args.settle_ms:g} ms untimed; "
        f"{args.warmup} warm-up, {args.input_sets} input sets, L2 flushed before each call")
    rules = BlockRules(tolerated=frozenset(json.loads(args.tolerate)))
    judge = BlockJudge(watch, rules)
    crashed: BenchCrash | None = None
    caught: BenchCaught | None = None
    try:
        rows = bench(w, impls, args.reps, args.warmup, args.input_sets, say, settle_ms=args.settle_ms,
                     rounds=args.rounds, optional=optional, judge=judge, modes=w.modes)
    except BenchCrash as crash:
        say(str(crash))
        rows, crashed = crash.rows, crash
    except BenchCaught as hit:
        say(f"{hit.impl}: {hit.line}")
        rows, caught = hit.rows, hit
    others = [impl_id(n) for n in list(w.candidates)[1:]]
    part: BenchPartJson = {"rows": rows, "ok": crashed is None and caught is None, "ours": "ours",
                           "candidates": ["ours", *others], "block_check": rules.as_json(),
                           "baseline": impl_id(baseline.name) if baseline else None, "labels": labels,
                           "compared": compared_with(w)}
    if crashed is not None:
        part["crash"] = crashed.as_json()
    if caught is not None:
        part["caught"] = caught.as_json()
    if w.oracle is None and guarded.on("timed-outputs"):
        part["timed_unchecked"] = "the workload declares no oracle (Reference(..., oracle=True))"
        say(f"timed outputs not checked: {part['timed_unchecked']}")
    if w.modes != ("forward",):
        part["modes"] = list(w.modes)
    result.update(part)
    return crashed is None and caught is None


def impl_labels(w: Any) -> dict[str, str]:
    """Each timed implementation's id -> its name: the first candidate is "ours"."""
    from cockpit.probes.workload.timing import impl_id

    labels = {"ours": next(iter(w.candidates))}
    labels.update({impl_id(n): n for n in list(w.candidates)[1:]})
    labels.update({impl_id(r.name): r.name for r in w.references if not r.oracle})
    return labels


def compared_with(w: Any) -> list[str]:
    """The references ours is compared with: every timed one but an optional one with no build of
    its own (the baseline always)."""
    from cockpit.probes.workload.timing import impl_id

    baseline = w.baseline
    return [impl_id(r.name) for r in w.references if not r.oracle
            and (r is baseline or not r.optional or r.build is not None)]


def profile_target(w: Any, knobs: KnobsFor, iters: int) -> int:
    """The profile shape's candidate, called `iters` times (ncu skips the first launches), the last
    call alone inside the CUDA profiler's range (cudaProfilerStart/Stop): what ncu profiles when it
    starts with profiling off, as for a workload that names no kernel (every kernel of that call)."""
    import torch

    from cockpit.probes.workload.check import call

    if w.profile is None:
        say(f"profile_target: cannot run: workload {w.name!r} declares no profile=Profile(kernel, shape)")
        return 2
    name = w.profile.candidate or next(iter(w.candidates))
    fn = w.candidates.get(name)
    if fn is None:
        say(f"profile_target: cannot run: no candidate {name!r} (the workload's: {', '.join(w.candidates)})")
        return 2
    shape = w.profile.shape
    inputs = w.make_inputs(3000, **shape)
    out = w.make_output(*inputs, **shape) if w.make_output is not None else None
    for _ in range(iters - 1):
        call(fn, inputs, out, knobs(shape))
    torch.cuda.synchronize()
    with torch.cuda.profiler.profile():  # the inputs' kernels and the warm-up calls stay outside
        call(fn, inputs, out, knobs(shape))
        torch.cuda.synchronize()
    say(f"profile_target: {iters} calls of {name} on {w.shape_name(shape)}, the last in the profiler range")
    return 0


if __name__ == "__main__":
    sys.exit(main())
