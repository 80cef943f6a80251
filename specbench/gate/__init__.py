"""The CI regression gate: save a baseline from a results directory, compare a new one to it.

`snapshot` aggregates a results directory per cell (mean and spread over repeats),
`baseline` stores that snapshot with its provenance as versioned JSON, `rules` holds the
per-metric tolerances, `compare` decides each cell × metric (`verdict`: one row, by the
t test of `stats.significance` at its Bonferroni level; `baseline_power`: whether a
baseline is large enough for its tolerances, by `stats.power`), and `junit` / `markdown` render
the decision for CI systems. `run` ties them together for the CLI.
"""
