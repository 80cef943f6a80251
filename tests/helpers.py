"""Moved to harness.cli and harness.emulator (tools/harness/); an alias for old imports."""

from harness.cli import (
    CLI,
    CONSOLE_ENV,
    REPO,
    UNSET_CONSOLE_ENV,
    background_cli,
    cli_env,
    popen_cli,
    run_cli,
)
from harness.emulator import running_emulator

__all__ = [
    "CLI",
    "CONSOLE_ENV",
    "REPO",
    "UNSET_CONSOLE_ENV",
    "background_cli",
    "cli_env",
    "popen_cli",
    "run_cli",
    "running_emulator",
]
