"""After a knob search: confirm each group's best configurations on one GPU, keep or revert, record.

The confirmation re-measures the current configuration, the `confirm_top` best of the search and
the baseline reference, interleaved in the bench gate's blocks, in one watched window; when it
names a winner, the winner, the runner-up and the current values are measured once more by the
same child (the re-confirm). How each group is judged, and how sure that is (regret, tie, held):
cockpit/tune/verdict.py.

Keep writes the winners into the workload's tuned file (per GPU architecture and group), which the
engineer commits with the kernel as any kept change; the confirmation is a bench result of the
workload, journaled with the decision in `tune_finished`, so the next bench gate's keep/revert
compares with the tuned kernel (gates/bench/past.py). Revert writes nothing.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from cockpit.analysis.keep import KeepResult
from cockpit.config import Config
from cockpit.errors import CockpitError
from cockpit.gates.bench.result import SCHEMA, BenchResult
from cockpit.gates.bench.validity import BenchValidity
from cockpit.gates.bench.validity_rules import judge_probe_window
from cockpit.tune.confidence import ConfidenceJson
from cockpit.tune.header import render, write_header
from cockpit.tune.measure import ProbeMeasurer
from cockpit.tune.plan import GroupPlan, KnobPlan
from cockpit.tune.search import open_study, request_for, store_of
from cockpit.tune.space import KnobSetting, as_dict, label
from cockpit.tune.storage import Store
from cockpit.tune.verdict import BASELINE, CURRENT, Contender, GroupVerdict, judge, reconfirmed, verdict_lines
from cockpit.tune.worker import measurer_for
from cockpit.workload.probe_wire import ConfirmReply
from cockpit.workload.tuned import KnobValues, TunedFileError, Winner, merged, read_winners, write_winners


class ContenderJson(TypedDict):
    name: str
    knobs: KnobValues
    vs_current: dict[str, float]
    vs_baseline: dict[str, float]


class ConfirmationJson(TypedDict):
    group: str
    winner: str | None
    why: str
    validity: Mapping[str, Any]
    contenders: list[ContenderJson]


class TuneResult(TypedDict):
    """What a search ends with: `cockpit tune --json` prints it."""

    run: str
    target: str
    workload: str
    keep: dict[str, object]
    """The decision, as `KeepResult.to_json()` writes it (the journal's `tune_finished` and
    `decision` carry it)."""
    lines: list[str]
    bench: dict[str, object] | None
    """The confirmation as a bench result, if any group was confirmed: `tune_finished` journals it."""
    confirmations: list[ConfirmationJson]
    confidence: list[ConfidenceJson]
    """Per group, the regret, the tie and the re-confirm (cockpit/tune/confidence.py):
    `tune_finished` journals it."""


def top_configurations(plan: KnobPlan, group: GroupPlan, where: Path | Store, k: int) -> list[KnobSetting]:
    """The `k` best distinct timed configurations of a group (every box's, in a shared store), the
    current one aside."""
    import optuna

    study = open_study(plan, group, where)
    done = sorted(
        (
            t
            for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
            if t.value is not None
        ),
        key=lambda t: t.value or 0.0,
        reverse=True,
    )
    out: list[KnobSetting] = []
    for t in done:
        config = tuple(t.params.get(kn.name) for kn in plan.knobs)
        if config != group.current and config not in out:
            out.append(config)
    return out[:k]


def finish_run(
    config: Config,
    workspace: Path,
    plan: KnobPlan,
    gpu_uuid: str,
    say: Callable[[str], None],
    python: str = sys.executable,
) -> TuneResult:
    """`python`: the gates' interpreter (the one with the CUDA torch), which measures."""
    import os

    measurer = measurer_for(
        plan,
        workspace,
        workspace / plan.run_dir / "confirm.log",
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=gpu_uuid),
        python=python,
    )
    try:
        return confirm_groups(config, workspace, plan, measurer, say)
    finally:
        measurer.close()


def confirm_groups(
    config: Config, workspace: Path, plan: KnobPlan, measurer: ProbeMeasurer, say: Callable[[str], None]
) -> TuneResult:
    """Each group confirmed (and its winner re-confirmed) by one measuring child, then keep or revert."""
    store = store_of(workspace, plan, config.tune)
    verdicts = [_confirm(config, plan, group, store, measurer, say) for group in plan.groups]
    return decide(config, workspace, plan, verdicts)


def _confirm(
    config: Config, plan: KnobPlan, group: GroupPlan, store: Store, measurer: ProbeMeasurer,
    say: Callable[[str], None],
) -> tuple[GroupVerdict, ConfirmReply]:
    """The current values, the search's best and the baseline interleaved; then, when that names a
    winner, the winner, the runner-up and the current values once more."""
    best = top_configurations(plan, group, store, config.tune.confirm_top)
    configs = {CURRENT: group.current} | {f"top{i + 1}": c for i, c in enumerate(best)}
    say(
        f"{group.label}: confirming {', '.join(label(plan.knobs, c) for c in configs.values())} "
        f"against {plan.baseline}, interleaved"
    )
    reply = _measure(measurer, plan, group, configs)
    validity = judge_probe_window({**reply, "compared": []}, config.thresholds)
    verdict = judge(group, configs, reply["times_ms"], config.tune.keep_improvement, validity, plan)
    if verdict.winner is None:
        return verdict, reply
    again = {n: configs[n] for n in (CURRENT, *(c.name for c in verdict.contenders[:2]))}
    say(f"{group.label}: re-confirming {', '.join(label(plan.knobs, c) for c in again.values())} once more, "
        "interleaved")
    second = _measure(measurer, plan, group, again)
    window = judge_probe_window({**second, "compared": []}, config.thresholds)
    return reconfirmed(verdict, second["times_ms"], window, plan), reply


def _measure(
    measurer: ProbeMeasurer, plan: KnobPlan, group: GroupPlan, configs: Mapping[str, KnobSetting]
) -> ConfirmReply:
    requests = {name: request_for(plan, group, c) for name, c in configs.items()}
    return measurer.request({"op": "confirm", "configs": requests, "shapes": list(group.group.bench)})


def decide(
    config: Config, workspace: Path, plan: KnobPlan, verdicts: Sequence[tuple[GroupVerdict, ConfirmReply]]
) -> TuneResult:
    """Keep or revert on the groups' verdicts: the tuned file (and header) written on a keep, the
    confirmation a bench result either way."""
    lines = [line for v, _ in verdicts for line in verdict_lines(v, plan)]
    won = [(v, v.winner) for v, _ in verdicts if v.winner is not None]
    if won and plan.tuned_file:
        keep, written = _keep_winners(workspace, plan, plan.tuned_file, won)
        lines.append(f"{keep.summary}\nwritten: {', '.join(written)} (commit with the kernel to keep it)")
    else:
        keep = KeepResult("revert", _revert_summary(verdicts))
        lines.append(keep.summary + (f"; {plan.tuned_file} is unchanged" if plan.tuned_file else ""))
    return {
        "run": plan.run,
        "target": plan.target,
        "workload": plan.workload,
        "keep": keep.to_json(),
        "lines": lines,
        "bench": _confirmed_bench(plan, verdicts),
        "confirmations": [_confirmation(v, plan) for v, _ in verdicts],
        "confidence": [v.confidence.to_json() for v, _ in verdicts],
    }


def _revert_summary(verdicts: Sequence[tuple[GroupVerdict, ConfirmReply]]) -> str:
    """Nothing kept, and the groups whose winner a re-confirm took back."""
    lost = [v.group.label for v, _ in verdicts if v.reconfirm is not None and not v.reconfirm.held
            and v.winner is None]
    return "REVERT: nothing beat the current knob values beyond the noise and the bar" + (
        f" ({', '.join(lost)}: the winner did not hold on a re-confirm)" if lost else "")


def _keep_winners(
    workspace: Path, plan: KnobPlan, tuned_file: str, won: list[tuple[GroupVerdict, Contender]]
) -> tuple[KeepResult, list[str]]:
    """The winners merged into the tuned file (and its header rendered before anything is
    written, so a file that cannot take them is left as it was), and the keep that says so."""
    path = workspace / tuned_file
    fresh = [
        Winner(
            plan.arch,
            dict(v.group.group.key),
            as_dict(plan.knobs, w.config),
            plan.run,
            f"{w.vs_current.value:.2f}x [{w.vs_current.lo:.2f}, "
            f"{w.vs_current.hi:.2f}] the values before it, "
            f"{w.vs_baseline.value:.2f}x {plan.baseline} on {plan.target}",
        )
        for v, w in won
    ]
    try:
        every = merged(read_winners(path), fresh)
        header = plan.build.tuned_header
        text = render(plan.knobs, every, tuned_file) if header else ""  # before anything is written
    except (TunedFileError, KeyError) as exc:
        raise CockpitError(f"{tuned_file}: the winners cannot be kept ({exc}); restore it from git "
                           "and run `cockpit tune --resume`, which confirms them again") from exc
    write_winners(path, plan.workload, plan.keep_per, every)
    written = [tuned_file]
    if header:
        write_header(workspace / header, text)
        written.append(header)
    summary = "KEEP: " + "; ".join(
        f"{v.group.label} {label(plan.knobs, w.config)} "
        f"{w.vs_current.value:.2f}x vs current, "
        f"{w.vs_baseline.value:.2f}x {plan.baseline}"
        + (f" (a tie with {v.tie.other})" if v.tie is not None else "")
        for v, w in won
    )
    least = min((w.vs_current for _, w in won), key=lambda c: c.value)  # the gain the keep claims
    keep = KeepResult(
        "keep",
        summary,
        least.value - 1,
        commit_message=f"{plan.workload}: knob values tuned by {plan.run} on {plan.target} "
        f"({summary.removeprefix('KEEP: ')})",
        paths=tuple(written),
        header=tuned_file,
        interval=(least.lo, least.hi),
    )
    return keep, written


def _confirmation(v: GroupVerdict, plan: KnobPlan) -> ConfirmationJson:
    """One group's confirmation as tune.json keeps it: the winner (if any), why, and each
    contender's knobs and speedups against the current values and the baseline."""
    return {
        "group": v.group.label,
        "winner": v.winner.name if v.winner else None,
        "why": v.why,
        "validity": v.validity,
        "contenders": [
            {
                "name": c.name,
                "knobs": as_dict(plan.knobs, c.config),
                "vs_current": c.vs_current.as_dict(),
                "vs_baseline": c.vs_baseline.as_dict(),
            }
            for c in (v.current, *v.contenders)
        ],
    }


def _confirmed_bench(
    plan: KnobPlan, verdicts: Sequence[tuple[GroupVerdict, ConfirmReply]]
) -> dict[str, object] | None:
    """The confirmation as a bench result of the workload: ours = the kept configuration per shape,
    valid when every group's window was."""
    if not verdicts:
        return None
    rows = [row for v, reply in verdicts for row in _record_rows(v, reply, plan)]
    valid = all(v.validity["valid"] for v, _ in verdicts)
    validity = BenchValidity.from_json({"valid": valid, "per_group": [v.validity for v, _ in verdicts]})
    return BenchResult(schema=SCHEMA, workload=plan.workload, ours="ours", candidates=("ours",),
                       baseline=plan.baseline.lower(), labels={}, speedup=None, configs=None, vs={},
                       validity=validity, source="tune", raw_rows=tuple(rows)).to_json()


def _record_rows(v: GroupVerdict, reply: ConfirmReply, plan: KnobPlan) -> list[dict[str, Any]]:
    """One group's shapes as bench rows: the kept configuration (the winner, else the current
    values) as ours, its median against the baseline's."""
    ours = v.winner.name if v.winner is not None else CURRENT
    rows = []
    for i, row in enumerate(reply.get("rows", [])):
        medians = {
            name: statistics.median(reply["times_ms"][key][i])
            for name, key in (("ours", ours), (plan.baseline.lower(), BASELINE))
        }
        impl = {name: {"median_ms": ms} for name, ms in medians.items()}
        rows.append(
            {k: row[k] for k in ("config", "shape", "dtype", "flops", "bytes") if k in row}
            | {
                "impl": impl,
                f"speedup_vs_{plan.baseline.lower()}": medians[plan.baseline.lower()] / medians["ours"],
            }
        )
    return rows


