"""What a tuning run on a GPU box measured, from what it left behind: the session journal's tune
events, `cockpit tune --json`'s result, and an NVML recording taken during the search.

    python3 bench/tune_report.py --session DIR --result tune.json --telemetry nvml.jsonl [--check check.json]

Prints a table and writes --out (JSON): configurations measured and rejected (by the workload's
rule, or after building), build time per configuration, the GPUs' idle fraction during the search,
trials per minute, and the confirmation per group of shapes (a head dim, say) with CIs against the
current knob values and the workload's baseline reference, and how sure it is (the search's regret
against its finalists, ties, whether the winner held on a re-confirm); `--bar 1.15` also checks
that the kept configuration is at least that many times the current one (the issue's "keeps
BM128 BN64 4w at D=128, >= 1.15x the L4 tile").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cockpit.session.journal import read_journal  # noqa: E402
from cockpit.telemetry.recording import read_recording  # noqa: E402
from cockpit.tune.confidence import confidence_lines, read_confidence  # noqa: E402


def search_window(events: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]], float, float]:
    """The last search's start event, its trials, and the window from its start to its last trial."""
    starts = [e for e in events if e["type"] == "tune_started"]
    if not starts:
        raise SystemExit("no tune_started event in the journal: did `cockpit tune` run?")
    start = starts[-1]
    trials = [e for e in events if e["type"] == "tune_trial" and e.get("run") == start["run"]]
    end = max([start["t"], *(t["t"] for t in trials)])
    return start, trials, float(start["t"]), float(end)


def idle_fraction(recording: Path, t0: float, t1: float, uuids: list[str]) -> dict[str, Any]:
    """Per GPU of the search (by UUID), the share of NVML samples in [t0, t1] with no kernel running."""
    rec = read_recording(recording)
    index = {g.uuid: g.index for g in rec.gpus if g.uuid}
    out: dict[str, Any] = {}
    for uuid in uuids:
        i = index.get(uuid)
        utils = [s.util_gpu for snap in rec.snapshots if t0 <= snap.t <= t1 for s in snap.samples
                 if s.index == i and s.util_gpu is not None]
        idle = sum(1 for u in utils if u == 0) / len(utils) if utils else None
        out[uuid] = {"nvml_index": i, "samples": len(utils),
                     "idle_fraction": round(idle, 3) if idle is not None else None,
                     "mean_util": round(statistics.fmean(utils), 1) if utils else None}
    return out


def compile_times(trials: list[dict[str, Any]]) -> dict[str, Any]:
    fresh = sorted(float(t["compile_s"]) for t in trials if not t.get("cached") and t.get("compile_s"))
    if not fresh:
        return {"compiled": 0}
    return {"compiled": len(fresh), "cached": sum(1 for t in trials if t.get("cached")),
            "median_s": round(statistics.median(fresh), 2), "mean_s": round(statistics.fmean(fresh), 2),
            "p90_s": round(fresh[int(0.9 * (len(fresh) - 1))], 2), "max_s": round(fresh[-1], 2)}


def summarize(session: Path, result: dict[str, Any] | None, telemetry: Path | None,
              check: dict[str, Any] | None = None, bar: float = 1.0) -> dict[str, Any]:
    events = list(read_journal(session / "journal.jsonl").events)
    start, trials, t0, t1 = search_window(events)
    outcomes: dict[str, int] = {}
    for t in trials:
        outcomes[t["outcome"]] = outcomes.get(t["outcome"], 0) + 1
    measured = sum(outcomes.get(k, 0) for k in ("timed", "pruned", "incorrect", "crashed", "failed"))
    rejected = {}
    for space in start.get("spaces", []):
        for limit, n in space.get("rejected_by", {}).items():
            rejected[limit] = rejected.get(limit, 0) + n
    for t in trials:
        if t["outcome"] == "rejected":
            key = f"{t.get('limit')} (after building)"
            rejected[key] = rejected.get(key, 0) + 1
    summary: dict[str, Any] = {
        "run": start["run"], "workload": start.get("workload"), "target": start.get("target"),
        "gpus": start.get("gpus"), "baseline": start.get("baseline"),
        "budget_min": round(start.get("budget_s", 0) / 60, 2), "search_s": round(t1 - t0, 1),
        "space": start.get("spaces"), "measured": measured, "outcomes": outcomes, "rejected": rejected,
        "trials_per_min": round(measured / ((t1 - t0) / 60), 2) if t1 > t0 else None,
        "compile": compile_times(trials),
        "idle": idle_fraction(telemetry, t0, t1, list(start.get("gpus", []))) if telemetry else None,
        "check": check,
    }
    if result is not None:
        summary["keep"] = result.get("keep")
        summary["confirmations"] = [_confirmation(c, bar) for c in result.get("confirmations", [])]
        if "confidence" in result:  # a result from before it: "not recorded"
            summary["confidence"] = result["confidence"]
    return summary


def _label(knobs: dict[str, Any]) -> str:
    return " ".join(f"{k}={'src' if v is None else v}" for k, v in knobs.items())


def _confirmation(c: dict[str, Any], bar: float) -> dict[str, Any]:
    """One group's confirmation as `cockpit tune --json` gives it (cockpit/tune/finish.py `decide`):
    the winner kept, else the current values."""
    current = next(k for k in c["contenders"] if k["name"] == "current")
    kept = next((k for k in c["contenders"] if k["name"] == c["winner"]), current)
    return {"group": c["group"], "winner": c["winner"], "why": c["why"], "kept": _label(kept["knobs"]),
            "current": _label(current["knobs"]), "vs_current": kept["vs_current"],
            "vs_baseline": kept["vs_baseline"], "bar": bar,
            "target_met": c["winner"] is not None and kept["vs_current"]["value"] >= bar,
            "valid": c.get("validity", {}).get("valid")}


def table(summary: dict[str, Any]) -> list[str]:
    def ci(e: dict[str, float]) -> str:
        return f"{e['value']:.3f}x [{e['lo']:.3f}, {e['hi']:.3f}]"

    lines = [f"run {summary['run']} ({summary.get('workload')}) on {summary['target']}, "
             f"GPUs {summary['gpus']}",
             f"budget {summary['budget_min']} min; search took {summary['search_s']} s; "
             f"{summary['measured']} configurations measured ({summary['trials_per_min']} per minute); "
             f"outcomes {summary['outcomes']}",
             f"rejected: {summary['rejected']}",
             f"build per configuration: {summary['compile']}"]
    for uuid, idle in (summary.get("idle") or {}).items():
        lines.append(f"GPU {uuid[:16]}: idle {idle['idle_fraction']} of {idle['samples']} NVML samples "
                     f"during the search (mean util {idle['mean_util']} %)")
    if summary.get("check"):
        check = summary["check"]
        lines.append(f"correctness sweep: {check['passed']}/{check['total']} configurations correct on every "
                     f"check shape" + (f"; FAILED: {check['failed']}" if check["failed"] else ""))
    baseline = summary.get("baseline") or "the baseline"
    for c in summary.get("confirmations", []):
        lines.append(f"{c['group']}: kept {c['kept']} ({'winner' if c['winner'] else 'current'}; was "
                     f"{c['current']}); vs current {ci(c['vs_current'])}; "
                     f"vs {baseline} {ci(c['vs_baseline'])}; "
                     f"valid {c['valid']}; target: a winner >= {c['bar']:.2f}x the current values: "
                     f"{'MET' if c['target_met'] else 'NOT MET'}")
    if summary.get("keep"):
        lines += confidence_lines(read_confidence(summary))
        lines.append(summary["keep"]["summary"])
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--session", type=Path, required=True, help="sessions/<ID> of the run")
    p.add_argument("--result", type=Path, help="cockpit tune --json's output")
    p.add_argument("--telemetry", type=Path, help="cockpit telemetry record's JSONL during the search")
    p.add_argument("--check", type=Path, help="tune_run.py's correctness sweep (JSON)")
    p.add_argument("--bar", type=float, default=1.0, help="the kept winner's least speedup over the current "
                   "values that meets the target (1.15: the issue's attention tune)")
    p.add_argument("--out", type=Path, help="write the summary here (JSON)")
    args = p.parse_args(argv)
    result = _load(args.result)
    summary = summarize(args.session, result, args.telemetry if args.telemetry and args.telemetry.exists()
                        else None, _load(args.check), args.bar)
    print("\n".join(table(summary)))
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1))
    return 0


def _load(path: Path | None) -> dict[str, Any] | None:
    if path is None or not path.exists() or not path.read_text().strip():
        return None
    data: dict[str, Any] = json.loads(path.read_text())
    return data


if __name__ == "__main__":
    sys.exit(main())
