"""Moved to harness.suite (tools/harness/suite.py); this alias keeps old imports working."""

from harness.suite import (
    ACCEPTANCE,
    CATEGORIES,
    GATE_TIMINGS,
    campaign_timings,
    suite_toml,
    workload,
    write_prompt_suite,
    write_prompts,
)

__all__ = [
    "ACCEPTANCE",
    "CATEGORIES",
    "GATE_TIMINGS",
    "campaign_timings",
    "suite_toml",
    "workload",
    "write_prompt_suite",
    "write_prompts",
]
