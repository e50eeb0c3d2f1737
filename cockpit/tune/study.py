"""The search, in Optuna's terms: one study per head dim, in the session folder or a shared database.

- Storage (storage.py): Optuna's JournalStorage on a JournalFileBackend in the session
  (`sessions/<ID>/tune/journal.log`), Optuna's own multi-process storage: every worker (one per GPU)
  shares the study through it, and a crash or an SSH drop leaves a log that `cockpit tune --resume`
  replays; a write cut off mid-line is cut back to the last whole line before the study is opened
  again. Or, with `[tune] storage = "postgresql://..."`, a database the workers of several boxes
  share, under a name every box derives alike, with a heartbeat that tells a dead box's trials
  from a live one's.
- Seed (tune/seeds.py orders it: the current configuration, other archs' kept tiles, its
  neighbours first), filled with a Latin hypercube over the tunables' value indices,
  each point moved to the nearest configuration the limits let through, enqueued as fixed
  trials. Not Optuna's QMCSampler: it samples the whole box, and most of the box is rejected
  by the limits, so its seed trials would be spent on configurations never compiled.
  scipy.stats.qmc's LatinHypercube (centered-discrepancy optimised) when scipy imports, else a
  plain Latin hypercube drawn here.
- Then TPE, multivariate (the tunables interact: tile sizes and warps set the registers) with
  the constant liar, so parallel workers do not all ask for the same configuration.
- Pruning: after the short first measurement, a configuration whose interval lies wholly more
  than `prune_slower` below the best so far is stopped (`SlowerThanBest`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.config.tune import TuneConfig, Value
from cockpit.tune.space import TUNABLE_NAMES, KernelParams
from cockpit.tune.storage import Store, as_store, for_run, open_named
from cockpit.tune.trials import fail_interrupted as fail_dead

if TYPE_CHECKING:
    import optuna

    from cockpit.tune.runplan import HeadDimPlan, RunPlan


def study_name(head_dim: int) -> str:
    return f"attn-d{head_dim}"


def cut_torn_tail(path: Path) -> int:
    """Truncate a journal whose last write was cut off mid-line; returns the bytes dropped."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    if not data or data.endswith(b"\n"):
        return 0
    keep = data.rfind(b"\n") + 1
    with path.open("r+b") as f:
        f.truncate(keep)
    return len(data) - keep


def storage(where: Path | Store) -> optuna.storages.BaseStorage:
    """The studies' storage: the journal file at a path, or the store cockpit.toml names."""
    return as_store(where).storage()


def run_store(plan: RunPlan, tune: TuneConfig | None = None, fresh: bool = False) -> Store:
    """Where a search's studies are: `[tune] storage` of the workspace that holds its csrc/."""
    workspace = plan.csrc.parent
    if tune is None:
        from cockpit.config import load_config

        tune = load_config(workspace).tune
    return for_run(tune, workspace, plan.run_dir, plan.journal, fresh)


def choices(space: Mapping[str, Sequence[Value]], current: KernelParams) -> dict[str, tuple[Value, ...]]:
    """Each tunable's values as the sampler sees them: the space's, plus the current one's."""
    out = {}
    for name in TUNABLE_NAMES:
        values = list(space[name])
        if getattr(current, name) not in values:
            values.append(getattr(current, name))
        out[name] = tuple(values)
    return out


def open_study(where: Path | Store, head_dim: int, space: Mapping[str, Sequence[Value]],
               current: KernelParams, n_seed: int, prune_slower: float, seed: int = 0,
               shapes: Sequence[Mapping[str, Any]] = (), arch: str = "") -> optuna.Study:
    """A head dim's study; in a shared store its name and digest come from the arch, the shapes and
    the values the sampler offers (storage.py)."""
    import optuna

    store = as_store(where)
    sampler = optuna.samplers.TPESampler(multivariate=True, constant_liar=True, n_startup_trials=n_seed,
                                         seed=store.sampler_seed(seed + head_dim))
    first = shapes[0] if shapes else {}
    title = " ".join(str(p) for p in (study_name(head_dim), arch, first.get("dtype"),
                                      "causal" if first.get("causal") else None) if p)
    facts = {"kernel": "attention tiles", "arch": arch, "head_dim": head_dim,
             "shapes": [dict(s) for s in shapes], "options": {k: list(v) for k, v in space.items()}}
    return open_named(store, study_name(head_dim), title, facts, TUNABLE_NAMES, sampler,
                      slower_than_best(prune_slower))


def open_run_study(where: Path | Store, plan: RunPlan, head: HeadDimPlan) -> optuna.Study:
    return open_study(where, head.head_dim, head.options, head.current, len(head.seeds), plan.prune_slower,
                      shapes=head.shapes, arch=plan.arch)


def suggest(trial: optuna.Trial, options: Mapping[str, Sequence[Value]]) -> KernelParams:
    return KernelParams.from_dict({name: trial.suggest_categorical(name, list(options[name]))
                                   for name in TUNABLE_NAMES})


def seed_configurations(feasible: Sequence[KernelParams], options: Mapping[str, Sequence[Value]],
                        current: KernelParams, n: int, seed: int = 0) -> tuple[list[KernelParams], str]:
    """`n` configurations spread over the space, the current one first; and how they were drawn."""
    points, how = latin_hypercube(max(0, n - 1), len(TUNABLE_NAMES), seed)
    chosen = [current]
    coords = {p: _coords(p, options) for p in feasible}
    for point in points:
        free = [p for p in feasible if p not in chosen]
        if not free:
            break
        chosen.append(min(free, key=lambda p: math.dist(coords[p], point)))
    return chosen, how


def _coords(params: KernelParams, options: Mapping[str, Sequence[Value]]) -> tuple[float, ...]:
    out = []
    for name in TUNABLE_NAMES:
        values = list(options[name])
        ordered = sorted(values, key=float)
        out.append((ordered.index(getattr(params, name)) + 0.5) / len(ordered))
    return tuple(out)


def latin_hypercube(n: int, dims: int, seed: int) -> tuple[list[tuple[float, ...]], str]:
    if n == 0:
        return [], "no seed beyond the current configuration"
    try:
        from scipy.stats import qmc
    except ImportError:
        rng = random.Random(seed)
        columns = []
        for _ in range(dims):
            strata = list(range(n))
            rng.shuffle(strata)
            columns.append([(s + rng.random()) / n for s in strata])
        return [tuple(c[i] for c in columns) for i in range(n)], "Latin hypercube (plain, scipy absent)"
    try:
        sampler = qmc.LatinHypercube(d=dims, optimization="random-cd", rng=seed)
    except TypeError:  # scipy < 1.15 names it `seed`
        sampler = qmc.LatinHypercube(d=dims, optimization="random-cd", seed=seed)
    sample = sampler.random(n)
    return [tuple(float(x) for x in row) for row in sample], \
        "Latin hypercube (scipy.stats.qmc, centered-discrepancy optimised)"


def slower_than_best(margin: float) -> optuna.pruners.BasePruner:
    import optuna

    class SlowerThanBest(optuna.pruners.BasePruner):
        """Prunes a trial whose short measurement's interval top (user attr `short_hi`) is more
        than `margin` below the best value so far."""

        def prune(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> bool:
            from cockpit.analysis.stats import Estimate, clearly_slower

            short = trial.user_attrs.get("short")
            done = [t.value for t in study.get_trials(deepcopy=False,
                                                      states=(optuna.trial.TrialState.COMPLETE,))
                    if t.value is not None]
            if not short or not done:
                return False
            return clearly_slower(Estimate(**short), max(done), margin)

    return SlowerThanBest()


def measured(trials: Sequence[optuna.trial.FrozenTrial]) -> list[optuna.trial.FrozenTrial]:
    """Trials that cost GPU time (timed, pruned, incorrect or crashed), not the rejected ones."""
    return [t for t in trials if t.user_attrs.get("measured")]


def params_of(trial: optuna.trial.FrozenTrial) -> KernelParams | None:
    try:
        return KernelParams.from_dict(trial.params)
    except KeyError:
        return None


def cut_off(trial: optuna.trial.FrozenTrial) -> bool:
    """A trial a dead run left behind, failed by `fail_interrupted`: it has no outcome (every trial
    a search ends itself has one), and its configuration is queued again, so it counts as unseen."""
    import optuna

    return trial.state == optuna.trial.TrialState.FAIL and "outcome" not in trial.user_attrs


def fail_interrupted(study: optuna.Study, store: Path | Store | None = None) -> list[KernelParams]:
    """A run that died leaves its trials RUNNING: mark them failed and enqueue their configurations
    again, so the resumed run measures them. In a shared store only the run's own trials (its
    owner) and stale ones (no heartbeat for the grace period): another box's live trials stay."""
    # Not Optuna's skip_if_exists: it counts the failed trial itself as the configuration
    # existing, and nothing would be queued. Skipped only when another trial measured it, holds it
    # or already waits for it.
    again = fail_dead(study, as_store(store) if store is not None else Store(), TUNABLE_NAMES)
    return [KernelParams.from_dict(c) for c in again]
