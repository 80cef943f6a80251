"""The suite the run tests plan: an emulator target, a baseline and an EAGLE3 server."""

from __future__ import annotations


def suite_text(name: str, workloads: str, *, top: str = "", target: str = "") -> str:
    """Suite `name`: the emulator serving "m", servers `baseline` and `eagle3` (draft "d",
    3 tokens), then `workloads` (its `[[workloads]]` tables).

    `top`: further top-level lines (after the name); `target`: further `[target]` lines.
    """
    return f"""
name = "{name}"
{top}[target]
engine = "emulator"
model = "m"
{target}[servers.baseline]
baseline = true
[servers.eagle3]
speculative = {{ method = "eagle3", model = "d", num_speculative_tokens = 3 }}
{workloads}"""
