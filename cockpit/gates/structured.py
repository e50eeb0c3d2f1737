"""A replaced gate command's own result, judged like the cockpit's: the structured-result protocol.

A command that `[gates.correctness] command` or `[gates.bench] command` puts in place of the
cockpit's probe hands back one JSON document, either written to the file named by
`$COCKPIT_RESULT` or printed as its last line after `cockpit-result: ` (docs/workloads.md):

    {"cockpit_result": 1, "gate": "bench", "workload": "my-softmax", "device": "NVIDIA H100 80GB HBM3",
     "baseline": "torch.softmax",
     "rows": [{"config": "M=4096 N=1024 fp16", "ours_ms": 0.0123, "ref_ms": {"torch.softmax": 0.0151}}]}

A bench row may add "bytes", "flops" and "dtype": its rates are shown, and a time the card cannot
reach is refused (cockpit/analysis/speed_of_light.py).

    {"cockpit_result": 1, "gate": "correctness",
     "rows": [{"config": "M=1 N=31 fp16", "ok": true, "rel_l2": 0.0012}]}

The cockpit then judges it as its own gates' results: the speedup class against the baseline,
keep or revert, history. It did not watch the GPU while an outside harness timed it, so such a
bench is "unwatched" (never "valid") unless the document carries the NVML samples of its run
(`gpu_samples`, `started`, `finished`, `pid`, as the cockpit's probes write them). A replaced
correctness or bench command that hands back nothing is NOT JUDGED: its exit code says it ran, not
that the kernel is right or fast. A replaced build command hands back its log: it is read as the
cockpit's own build's (gates/build/gate.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from cockpit.errors import CockpitError
from cockpit.gates.gate import GateContext, Verdict
from cockpit.gates.result import NotJudged
from cockpit.json_fields import JsonObject, as_number, obj, whole
from cockpit.session.results import read_result_json
from cockpit.workload.result_wire import CheckRowJson

PROTOCOL = 1
LAST_LINE = "cockpit-result: "
ENV = "COCKPIT_RESULT"
JUDGED_GATES = ("correctness", "bench")


def find_document(ctx: GateContext, tail: Sequence[str]) -> JsonObject | None:
    """The command's result document: the $COCKPIT_RESULT file, else a `cockpit-result:` line."""
    try:
        data = read_result_json(ctx.result_path)
        if isinstance(data, dict) and "cockpit_result" in data:
            return obj(data)
    except (OSError, ValueError):
        pass
    for line in reversed(tail):
        if line.startswith(LAST_LINE):
            try:
                data = json.loads(line[len(LAST_LINE):])
            except ValueError as exc:
                raise CockpitError(f"the command's `{LAST_LINE.strip()}` line is not JSON ({exc})") from exc
            return obj(data) if isinstance(data, dict) else None
    return None


def judge_replaced(gate: str, ctx: GateContext, exit_code: int, tail: Sequence[str]) -> Verdict | None:
    """The verdict on a replaced correctness, bench or build command; None for the other gates
    (their exit code is their verdict)."""
    if gate == "build":
        from cockpit.gates.build.gate import judge_replaced_build

        return judge_replaced_build(ctx, exit_code)
    if gate not in JUDGED_GATES:
        return None
    doc = find_document(ctx, tail)
    last = next((line.strip() for line in reversed(tail) if line.strip()), "")
    if doc is None:
        return Verdict("warn", f"not judged: the replaced command exited {exit_code} without a cockpit "
                       f"result ({ENV} file or a `{LAST_LINE.strip()}` line; docs/workloads.md)"
                       + (f"; it said: {last[:120]}" if last else ""), NotJudged(exit_code))
    if doc.get("cockpit_result") != PROTOCOL:
        raise CockpitError(f"cockpit_result {doc.get('cockpit_result')!r}: this cockpit reads version "
                           f"{PROTOCOL}")
    rows = doc.get("rows")
    if not isinstance(rows, list) or not rows:
        raise CockpitError("the command's cockpit result has no rows")
    if gate == "correctness":
        from cockpit.gates.correctness.gate import judge_correctness
        from cockpit.gates.correctness.result import read_checked

        return judge_correctness(read_checked({"rows": [_check_row(obj(r)) for r in rows],
                                               "workload": doc.get("workload")}))
    return _judge_bench(ctx, doc, rows)


def _check_row(r: JsonObject) -> CheckRowJson:
    return {"config": str(r.get("config", "?")), "ok": r.get("ok") is True,
            "rel_l2": as_number(r.get("rel_l2")), "max_abs": as_number(r.get("max_abs")),
            "tolerance": as_number(r.get("tolerance")), "nonfinite": int(whole(r.get("nonfinite")) or 0),
            "what": str(r.get("what") or "")}


def bench_data(doc: JsonObject, rows: Sequence[object]) -> dict[str, object]:
    """The document as the cockpit's own bench probe writes its result (result_wire's shape)."""
    baseline = str(doc.get("baseline") or "baseline")
    out_rows: list[dict[str, object]] = []
    refs: dict[str, None] = {}
    for r in (obj(row) for row in rows):
        ours = as_number(r.get("ours_ms"))
        if ours is None or ours <= 0:
            continue
        impl: dict[str, dict[str, object]] = {"ours": {"median_ms": ours, "samples": None}}
        cells: dict[str, object] = {"config": str(r.get("config", "?")), "impl": impl}
        for count in ("bytes", "flops"):  # declared: GB/s, TFLOP/s and the speed-of-light check apply
            if (n := as_number(r.get(count))) is not None and n > 0:
                cells[count] = n
        if isinstance(r.get("dtype"), str):
            cells["dtype"] = r["dtype"]
        for name, ms in obj(r.get("ref_ms")).items():
            value = as_number(ms)
            if value is not None and value > 0:
                ref = name.lower()
                refs[ref] = None
                impl[ref] = {"median_ms": value, "samples": None}
                cells[f"speedup_vs_{ref}"] = value / ours
        out_rows.append(cells)
    base = baseline.lower()
    labels = {"ours": "ours", base: baseline, **{ref: ref for ref in refs if ref != base}}
    return {"rows": out_rows, "workload": doc.get("workload"), "device": doc.get("device"),
            "baseline": base, "labels": labels,
            "candidates": ["ours"], "compared": [baseline.lower()],
            **{k: doc[k] for k in ("gpu_samples", "started", "finished", "pid", "gpu") if k in doc}}


def _judge_bench(ctx: GateContext, doc: JsonObject, rows: Sequence[object]) -> Verdict:
    from cockpit.gates.bench.gate import judge_measured
    from cockpit.gates.bench.measured import read_measured

    data = bench_data(doc, rows)
    if not data["rows"]:
        raise CockpitError("the command's cockpit result has no row with ours_ms > 0")
    return judge_measured(ctx, read_measured(data), harness="replaced command")
