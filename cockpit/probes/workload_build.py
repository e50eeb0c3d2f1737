"""The workload probe's `build` mode (probes/workload_probe.py): the workload's Extension built
with the knob values `cockpit tune` kept for this GPU, each reference's own build beside it, and a
tuner's variant built with its defines (or relinked against the base build's other objects).
Standard library only: build_probe.py runs the build, relink.py the relinking."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.workload.tuned import KnobDecl, Tuned, TunedFileError, read_winners, sm_arch, tuned_path


def say(text: str) -> None:
    print(text, flush=True)


def knob_decls(w: Any) -> tuple[KnobDecl, ...]:
    """The knobs as the tuned file knows them; a define knob's untuned value is the source's own
    #ifndef default unless the workload gives one."""
    return tuple(KnobDecl(k.name, k.via, k.macro or k.name, k.default if k.via == "define" else k.start)
                 for k in w.knobs)


def tuned_for(w: Any, args: argparse.Namespace, arch: str | None) -> Tuned:
    """The kept winners for this GPU architecture (none on an unknown one: the declared values)."""
    path = tuned_path(args.workspace, args.workload) if w.knobs else None
    return Tuned(knob_decls(w), tuple(w.keep_per), arch or "", read_winners(path) if arch else ())


def build_arch() -> str | None:
    """What the build compiles for: TORCH_CUDA_ARCH_LIST when it names one arch, else the GPU."""
    listed = os.environ.get("TORCH_CUDA_ARCH_LIST", "").replace(";", " ").split()
    if len(listed) == 1:
        return sm_arch(listed[0])
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return f"sm_{major}{minor}"
    except ImportError:
        pass
    return None


def build(w: Any, args: argparse.Namespace) -> int | None:
    """The build gate's build: a tuner's variant, or the workload's Extension with the kept knob
    values and every reference's own build; None when the workload has nothing to build (its
    kernels compile at their first call: the caller runs `jit`)."""
    if args.variant is not None:
        return build_variant(w, args)
    try:
        defines = tuned_for(w, args, build_arch()).defines()
    except TunedFileError as exc:
        say(str(exc))
        return 2
    if defines and w.build.kind == "extension":
        say(f"knob values cockpit tune kept for this GPU: {' '.join(defines)}")
        w = replace(w, build=replace(w.build, cuda_flags=(*w.build.cuda_flags, *defines)))
    code = build_extension(w.build, args) if w.build.kind == "extension" else None
    return build_references(w, args, code)


def build_references(w: Any, args: argparse.Namespace, code: int | None) -> int | None:
    """Each reference's own build beside the workload's; the worst exit of those that must build
    (or `code`, the workload's own, when none does worse)."""
    for ref in (r for r in w.references if r.build is not None):
        built = build_beside(ref.build, args)
        if not ref.optional:  # an optional earlier version that does not build is said, not fatal
            code = max(code or 0, built)
    return code


def build_variant(w: Any, args: argparse.Namespace) -> int:
    """A tuner's configuration built as its own module: compiled with its defines, or relinked."""
    if w.build.kind != "extension":
        say(f"define knobs are compiled into an Extension build; {w.name} is {w.build.kind}")
        return 2
    flags = json.loads(args.defines)
    if w.build.variant_build == "relink":
        return relink_variant(w.build, flags, args)
    return build_extension(w.build.with_flags(args.variant, flags), args)


def build_extension(build: Any, args: argparse.Namespace) -> int:
    """The build gate's ninja build of an Extension (progress, ptxas, the import check)."""
    if TYPE_CHECKING or __package__:
        from cockpit.probes import build_probe
    else:
        import build_probe
    argv = ["--workspace", str(args.workspace), "--name", build.module_name,
            "--sources", json.dumps(list(build.sources)),
            "--include-dirs", json.dumps(list(build.include_dirs)),
            "--cuda-flags", json.dumps(list(build.cuda_flags)),
            "--build-dir", str(build.build_dir(args.workspace))]
    if args.out is not None:
        argv += ["--out", str(args.out)]
    return int(build_probe.main(argv))


def relink_variant(build: Any, flags: list[str], args: argparse.Namespace) -> int:
    """A variant's .cu objects rebuilt with `flags` and linked with the base build's other objects."""
    if TYPE_CHECKING or __package__:
        from cockpit.probes import build_probe, relink
    else:
        import build_probe
        import relink

    def make_base(folder: Path) -> int:
        say(f"cockpit-build: the base build for relinked variants, {folder}")
        return int(build_probe.main([
            "--workspace", str(args.workspace), "--name", build.name, "--out", str(folder / "build.json"),
            "--sources", json.dumps(list(build.sources)),
            "--include-dirs", json.dumps(list(build.include_dirs)),
            "--cuda-flags", json.dumps(list(build.cuda_flags)), "--build-dir", str(folder)]))

    code = relink.ensure_base(args.workspace, build.name, make_base)
    if code != 0:
        say(f"cockpit-build: the base build failed (exit {code}): the variant cannot be relinked")
        return code
    folder = build.with_flags(args.variant, flags).build_dir(args.workspace)
    with relink.locked(folder):  # two GPUs' workers may ask for one variant: one builds it
        try:
            relink.prepare(relink.base_dir(args.workspace, build.name), folder, flags)
        except (OSError, ValueError) as exc:
            say(f"cockpit-build: cannot relink in {folder}: {exc}")
            return 2
        say(f"cockpit-build: relinking {build.name} with {' '.join(flags)} in {folder}")
        return int(build_probe.run_ninja(folder, int(os.environ.get("MAX_JOBS") or 2)))


def build_beside(build: Any, args: argparse.Namespace) -> int:
    """A reference's own build (an earlier version of the kernel) in a child of its own, its log in
    its build folder so the gate's table stays the current kernel's; one line here says how it went."""
    import subprocess

    log = build.build_dir(args.workspace) / "build.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(Path(__file__).resolve().parent / "build_probe.py"),
            "--workspace", str(args.workspace), "--name", build.module_name,
            "--out", str(log.with_suffix(".json")), "--sources", json.dumps(list(build.sources)),
            "--include-dirs", json.dumps(list(build.include_dirs)),
            "--cuda-flags", json.dumps(list(build.cuda_flags))]
    if build.revision:
        argv += ["--revision", build.revision]
    with log.open("w") as f:
        code = subprocess.call(argv, stdout=f, stderr=subprocess.STDOUT)
    say(f"cockpit-build: {build.module_name} ({build.revision or 'as is'}) "
        f"{'built' if code == 0 else f'FAILED (exit {code})'}: {log}")
    return code
