"""Processes under test, shared by every test: one home for each.

- `harness.cli`: the `specbench` CLI as a subprocess (run, background) or in process.
- `harness.emulator`: `specbench emulate` on a free port, or its app in process; processes
  found by their tag.
- `harness.proxy`: a fault-injecting HTTP proxy whose upstream can switch mid-run.
- `harness.disk`: a small tmpfs (a real full or read-only disk) and a filler.
- `harness.suite`: emulator suites (TOML) and prompt datasets.
- `harness.waiting`: waiting for a condition; what a results folder holds mid-run.

tests/ is on pytest's pythonpath (pyproject.toml), so tests import it as `harness`; a tool
run by hand that needs it puts tests/ on its own path (tools/gate_noise_experiment.py).
"""

from harness.cli import (
    CLI,
    CONSOLE_ENV,
    DEEP_CHECKOUT,
    REPO,
    UNSET_CONSOLE_ENV,
    Outcome,
    assert_fits_any_checkout,
    background_cli,
    cli_env,
    invoke_main,
    is_stopped,
    one_line,
    paused,
    popen_cli,
    run_cli,
    run_on_terminal,
)
from harness.disk import fill, small_disk
from harness.emulator import (
    emulator_process,
    free_port,
    in_process_emulator,
    pids_of,
    running_emulator,
    server_pids,
)
from harness.proxy import PROXY_FAULTS, FaultProxy, fault_proxy
from harness.suite import (
    ACCEPTANCE,
    CATEGORIES,
    DATA,
    GATE_TIMINGS,
    bench_argv,
    campaign_timings,
    run_suite,
    suite_toml,
    workload,
    write_campaign_suite,
    write_conversations,
    write_fixed_suite,
    write_prompt_suite,
    write_prompts,
)
from harness.waiting import in_flight, summary_bytes, summary_paths, wait_for, wait_until

__all__ = [
    "ACCEPTANCE",
    "CATEGORIES",
    "CLI",
    "CONSOLE_ENV",
    "DATA",
    "DEEP_CHECKOUT",
    "GATE_TIMINGS",
    "PROXY_FAULTS",
    "REPO",
    "UNSET_CONSOLE_ENV",
    "FaultProxy",
    "Outcome",
    "assert_fits_any_checkout",
    "background_cli",
    "bench_argv",
    "campaign_timings",
    "cli_env",
    "emulator_process",
    "fault_proxy",
    "fill",
    "free_port",
    "in_flight",
    "in_process_emulator",
    "invoke_main",
    "is_stopped",
    "one_line",
    "paused",
    "pids_of",
    "popen_cli",
    "run_cli",
    "run_on_terminal",
    "run_suite",
    "running_emulator",
    "server_pids",
    "small_disk",
    "suite_toml",
    "summary_bytes",
    "summary_paths",
    "wait_for",
    "wait_until",
    "workload",
    "write_campaign_suite",
    "write_conversations",
    "write_fixed_suite",
    "write_prompt_suite",
    "write_prompts",
]
