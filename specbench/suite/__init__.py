"""Suites: which server configs run which workloads, at which concurrencies, how often."""

from specbench.suite.describe import (
    describe_schedules,
    describe_suite,
    describe_sweeps,
    server_command,
)
from specbench.suite.load import load_suite, parse_override
from specbench.suite.model import Cell, SlurmSettings, Suite, WorkloadSpec

__all__ = [
    "Cell",
    "SlurmSettings",
    "Suite",
    "WorkloadSpec",
    "describe_schedules",
    "describe_suite",
    "describe_sweeps",
    "load_suite",
    "parse_override",
    "server_command",
]
