"""Analysis: benchmark statistics and decisions, ncu verdicts. Pure functions, no Textual."""
