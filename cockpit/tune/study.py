"""The search's pieces in Optuna's terms that do not depend on the workload.

- Storage (storage.py): Optuna's JournalStorage on a JournalFileBackend in the session
  (`sessions/<ID>/tune/journal.log`), shared by the workers of every GPU; a crash or an SSH drop
  leaves a log that `cockpit tune --resume` replays, a write cut off mid-line cut back to the last
  whole line first (`cut_torn_tail`). Or, with `[tune] storage = "postgresql://..."`, a database the
  workers of several boxes share.
- Seed (seeds.py): the current configuration, other archs' winners, its neighbours, then a Latin
  hypercube over the knobs' value indices (`latin_hypercube`). Not Optuna's QMCSampler: it samples
  the whole box, and most of the box may be rejected by the workload's rule, so its seed trials
  would be spent on configurations never built. scipy.stats.qmc's LatinHypercube
  (centered-discrepancy optimised) when scipy imports, else a plain Latin hypercube drawn here.
- Then TPE, multivariate (knobs interact: tile sizes and warps set the registers) with the constant
  liar, so parallel workers do not all ask for the same configuration.
- Pruning: after the short first measurement, a configuration whose interval lies wholly more than
  `prune_slower` below the best so far is stopped (`slower_than_best`).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import optuna


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


def cut_off(trial: optuna.trial.FrozenTrial) -> bool:
    """A trial a dead run left behind, failed by `fail_interrupted`: it has no outcome (every trial
    a search ends itself has one), and its configuration is queued again, so it counts as unseen."""
    import optuna

    return trial.state == optuna.trial.TrialState.FAIL and "outcome" not in trial.user_attrs
