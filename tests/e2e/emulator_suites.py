"""Moved to harness.suite, harness.emulator and harness.waiting (tools/harness/); an alias
for old imports."""

from harness.cli import one_line
from harness.emulator import server_pids
from harness.suite import DATA, run_suite, write_campaign_suite
from harness.waiting import in_flight, summary_bytes, summary_paths, wait_for

__all__ = [
    "DATA",
    "in_flight",
    "one_line",
    "run_suite",
    "server_pids",
    "summary_bytes",
    "summary_paths",
    "wait_for",
    "write_campaign_suite",
]
