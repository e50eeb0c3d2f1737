"""The tune gate: search the kernel's compile-time configurations within the target GPU's hard
limits, resumably and on every GPU of the box, then confirm the winner against the baseline.

space → feasibility → plan (what is searched) → compile (cached, in the background) → study
(Optuna: Latin-hypercube seed, TPE, pruning) ← worker (one per GPU, measuring in a child probe)
→ confirm (interleaved re-measurement, bootstrap CIs, keep/revert) → progress (the panel's view).
"""
