"""`cockpit workload show [--json]`: what the workspace's workload declares, asked of the gates'
child Python (no GPU needed): build, candidates, references, grids, FLOP/byte model, knobs. The
first time on a box that child waits on a torch import (15-40 s): stderr says at once what it does
and in which Python, then the time so far; stdout holds the answer alone."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from cockpit.cli.parser import workspace_of
from cockpit.cli.waiting import said_while
from cockpit.config import load_config
from cockpit.errors import CockpitError
from cockpit.gates.interpreter import ask_torch, gates_python
from cockpit.session.trust import require_trust
from cockpit.workload.describe import workload_manifest
from cockpit.workload.manifest import GridShape, Manifest, manifest_to_json
from cockpit.workload.spec import Check
from cockpit.workload.tuned import TunedFileError, Winner, group_label, read_winners, tuned_path


def workload(args: argparse.Namespace) -> int:
    """`cockpit workload show`."""
    ws = workspace_of(args)
    config = load_config(ws.root)
    require_trust(ws.root, config)  # its workload is code: imported by the gates' child
    python = gates_python(config.gates, ws.root, asker=asked_aloud)
    child = (f" in {python.describe()}: a child that imports torch and the workload, 15-40 s the first "
             "time, then kept until a file it reads changes")
    manifest = workload_manifest(ws.root, config, python.path, use_cache=not args.fresh,
                                 watch=lambda doing: said_while(doing, child))
    path = tuned_path(ws.root, manifest.source)
    try:
        winners = read_winners(path)
    except TunedFileError as exc:  # a damaged tuned file stops the gates: said here too, in one line
        raise CockpitError(str(exc)) from exc
    if args.json:
        print(json.dumps({**manifest_to_json(manifest), "tuned": [w.as_json() for w in winners]}))
    else:
        print("\n".join(describe_lines(manifest) + tuned_lines(winners, path, ws.root)))
    return 0


def asked_aloud(python: str) -> str | None:
    """The gates' question to one interpreter (does torch import there?), said while it waits:
    each is asked once, then its answer is kept."""
    with said_while(f"finding the gates' Python: asking {python} whether torch imports",
                    " (once: the answer is kept in your cache)"):
        return ask_torch(python)


def tuned_lines(winners: Sequence[Winner], path: Path | None, root: Path) -> list[str]:
    """What `cockpit tune` kept, per GPU architecture and group: what the gates apply."""
    if path is None or not winners:
        return []
    lines = [f"tuned      {len(winners)} kept in {path.relative_to(root)} (applied on that arch only)"]
    lines += [f"  {w.arch} {group_label(w.group):<12} "
              + " ".join(f"{k}={v}" for k, v in w.knobs.items()) + (f"  ({w.note})" if w.note else "")
              for w in winners]
    return lines


def describe_lines(m: Manifest) -> list[str]:
    """The declaration in a dozen lines a kernel engineer checks before the first gate."""
    b = m.build
    build = {"extension": f"torch extension {b.name} from {', '.join(b.sources)}",
             "inline": f"load_inline {b.name} (compiled at its first call)",
             "triton": "Triton (compiled at its first call: the build gate runs the smallest test shape)",
             "callable": "nothing to build (a plain callable)"}[b.kind]
    oracle = m.oracle
    lines = [f"workload   {m.name}  ({m.source})", f"build      {build}",
             f"candidates {', '.join(m.candidates)}",
             "references " + ", ".join(_ref(r.name, r.baseline, r.optional) for r in m.timed_references)
             + (f"; oracle {oracle.name} (never timed)" if oracle
                else "; NO ORACLE: correctness cannot run"),
             f"check      {_check_line(m)}"
             + ("; output buffer poisoned with NaN" if m.writes_output
                else "; candidates return their output"),
             f"test grid  {len(m.test_grid)} shapes: {_span(m.test_grid)}",
             f"bench grid {len(m.bench_grid)} shapes: {_span(m.bench_grid)}",
             f"correctness checks {len(m.correctness_grid())} shapes (the test grid and the bench "
             "grid's ends)",
             f"model      {_model(m)}"]
    if m.modes != ("forward",):
        grads = (f" (gradients of input {', '.join(f'#{i}' for i in m.grad_inputs)}"
                 " and any made with requires_grad)" if m.grad_inputs else
                 " (gradients of the inputs make_inputs makes with requires_grad)")
        lines.append(f"modes      {', '.join(m.modes)}{grads if set(m.modes) - {'forward'} else ''}")
    lines.append(f"profile    {_profile(m)}")
    if m.knobs:
        left = "" if m.knob_allowed is None else f", {m.knob_allowed} left after the rule"
        lines.append(f"knobs      {m.knob_combinations} combinations{left}; kept per "
                     f"{', '.join(m.keep_per) or 'workload'}")
        lines += [f"  {k.name:<14} {k.via:<6} {list(k.values)} (untuned "
                  f"{'in the source' if k.start is None else k.start})" for k in m.knobs]
    else:
        lines.append("knobs      none")
    return lines


def _ref(name: str, baseline: bool, optional: bool) -> str:
    return name + (" (baseline)" if baseline else "") + (" (optional)" if optional else "")


def is_gpumode(m: Manifest) -> bool:
    """A GPU MODE problem folder: declared by its files and cockpit.toml, not by a module."""
    return m.source.startswith("gpumode:")


def _profile(m: Manifest) -> str:
    """What the profile gate runs under ncu; a suggestion only where the workload can take one."""
    p = m.profile
    if p is None:
        if is_gpumode(m):  # a folder's profile is the loader's, never something to add to it
            return "none (this folder's loader declares none: `cockpit workload show --fresh`)"
        return "none declared (add profile=Profile(kernel=..., shape=...) to the module's Workload)"
    if not p.kernel:
        return f"every kernel of one call of {p.candidate} on {p.shape.name} (ncu over that call only)"
    return f"kernels matching /{p.kernel}/ of {p.candidate} on {p.shape.name}"


def _check_line(m: Manifest) -> str:
    if is_gpumode(m) and m.check.get("kind") == "custom":
        return "check_implementation (the folder's own reference.py)"
    return check_text(m.check)


def check_text(check: object) -> str:
    """The check as `workload show` says it: `allclose (atol 1e-05, rtol 0)`, `rel_l2 (fp16 0.01)`."""
    c = check if isinstance(check, dict) else {}
    kind = str(c.get("kind", "?"))
    tol = _numbers(c.get("tolerance"))
    if kind == "allclose":
        rule = Check("allclose", tol, _numbers(c.get("atol")))
        dtypes = list(dict.fromkeys([*rule.atol, *tol])) or ["*"]
        per = "; ".join(("" if d == "*" else f"{d}: ")
                        + f"atol {rule.atol_for(d):g}, rtol {rule.tolerance_for(d):g}" for d in dtypes)
        return f"allclose ({per})"
    per = ", ".join(f"{v:g}" if k == "*" else f"{k} {v:g}" for k, v in tol.items())
    return kind + (f" ({per})" if per else "")


def _numbers(value: object) -> dict[str, float]:
    if not isinstance(value, dict):
        return {}
    return {str(k): float(v) for k, v in value.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _span(grid: tuple[GridShape, ...]) -> str:
    if not grid:
        return "none"
    return grid[0].name if len(grid) == 1 else f"{grid[0].name} … {grid[-1].name}"


def _model(m: Manifest) -> str:
    shapes = m.bench_grid
    flops = any(s.flops for s in shapes)
    nbytes = any(s.bytes for s in shapes)
    if not flops and not nbytes:
        if is_gpumode(m):  # the folder stays as GPU MODE ships it: the model is cockpit.toml's
            keys = ", ".join(dict.fromkeys(k for s in shapes for k in s.shape)) or "its keys"
            return ("no FLOP or byte count: times only (for GB/s and TFLOP/s, set [workload] bytes "
                    f"and flops in cockpit.toml: formulas over the shape's {keys}, e.g. "
                    '"3 * size * size * 2")')
        return "no FLOP or byte count: times only (no TFLOP/s, GB/s, % of peak)"
    counts = " and ".join(w for w, has in (("FLOPs", flops), ("bytes", nbytes)) if has)
    rates = ", ".join(w for w, has in (("TFLOP/s", flops), ("GB/s", nbytes)) if has)
    return f"{counts} per shape: {rates} and % of the GPU's peak"
