"""The one place the CLI builds its rich consoles, so every command follows one width rule.

Width, first that applies:
1. `SPECBENCH_CONSOLE_WIDTH=N` (a whole number >= 40): exactly N columns, terminal or not.
   The test suite sets it so that no assertion depends on where rich wraps a line (which
   otherwise varies with the terminal the tests run from and the length of printed paths).
2. rich's own rule: `COLUMNS`, else the size of the terminal.
3. When the output is not a terminal (a log file, a pipe, CI), at least `UNATTENDED_WIDTH`
   columns: wide rows rather than rich's 80-column default with wrapped table cells.

`--help` follows the same rule, and is never narrower than `HELP_MIN_WIDTH` columns, where
every option's name fits (`help_width`).
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console

from specbench.common.errors import SpecbenchError

WIDTH_ENV = "SPECBENCH_CONSOLE_WIDTH"
#: Columns of a console whose output is not a terminal, unless the terminal rule gives more.
UNATTENDED_WIDTH = 200
#: The narrowest width `SPECBENCH_CONSOLE_WIDTH` accepts.
MIN_WIDTH = 40
#: The narrowest `--help`: its panels are laid out to show every option's name at 80.
HELP_MIN_WIDTH = 80


def env_width() -> int | None:
    """`SPECBENCH_CONSOLE_WIDTH` as columns; None when unset or empty.

    Raises SpecbenchError (one line: the variable and what is allowed) for any other value.
    """
    value = os.environ.get(WIDTH_ENV, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < MIN_WIDTH:
        raise SpecbenchError(
            f"{WIDTH_ENV}={value!r}: allowed: a whole number of columns >= {MIN_WIDTH}"
        )
    return int(value)


def make_console(*, stderr: bool = False, **kwargs: Any) -> Console:
    """A rich Console on stdout (or stderr) with the CLI's width rule (module docstring).

    An invalid `SPECBENCH_CONSOLE_WIDTH` is ignored here (consoles are built at import
    time); `specbench.cli.main.main` reports it as a one-line error before any command runs.
    """
    console = Console(stderr=stderr, **kwargs)
    try:
        width = env_width()
    except SpecbenchError:
        width = None
    if width is not None:
        console.width = width
    elif not console.is_terminal:
        console.width = max(console.width, UNATTENDED_WIDTH)
    return console


def help_width() -> int:
    """Columns of `--help` on stdout: the console rule (module docstring), at least
    `HELP_MIN_WIDTH`."""
    return max(make_console().width, HELP_MIN_WIDTH)
