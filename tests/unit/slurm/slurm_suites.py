"""The suites of the Slurm unit tests: the emulator serving "m", a `base` and a `spec` server."""

from __future__ import annotations

from harness import DATA


def suite_head(name: str) -> str:
    """Suite `name` up to its workloads: the emulator target, `base` (the baseline) and
    `spec` (n-gram, 2 tokens)."""
    return f"""
name = "{name}"
[target]
engine = "emulator"
model = "m"
[servers.base]
baseline = true
[servers.spec]
speculative = {{ method = "ngram", num_speculative_tokens = 2 }}
"""


def suite_text(slurm: str = "", workloads: int = 2) -> str:
    """Suite "units": `workloads` workloads on DATA, one category each (chat, code, math),
    then `slurm` (a `[slurm]` table, say)."""
    body = suite_head("units")
    for index in range(workloads):
        body += f"""
[[workloads]]
dataset = "{DATA}"
categories = ["{["chat", "code", "math"][index]}"]
concurrency = [1, 2]
max_tokens = 8
"""
    return body + slurm
