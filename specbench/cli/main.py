"""The `specbench` console script: one typer app, each command registered from its own module.

Heavy imports (pandas, matplotlib, datasets, aiohttp) happen inside commands so that
`specbench --help` stays instant.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from specbench.cli.lines import line
from specbench.common import interrupt
from specbench.common.errors import RegressionDetected, SpecbenchError

app = typer.Typer(
    name="specbench",
    help="Measure speculative decoding on vLLM with SPEED-Bench.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

err_console = Console(stderr=True, highlight=False)

# Each command module adds its commands to `app`, in the order `--help` lists them; the
# modules import only typer at the top, so `specbench --help` stays instant.
from specbench.cli import (  # noqa: E402
    bench,
    data,
    emulate,
    gate,
    lossless,
    report,
    run,
    serve,
    status,
)

for _module in (run, bench, serve, emulate, data, report, lossless, gate, status):
    _module.register(app)


_KEPT = "completed cells are kept; a rerun measures the rest"


def say(label: str, style: str, message: object) -> None:
    """One line on stderr: a styled label, then the message as plain text (never markup)."""
    err_console.print(line(label, style, message), soft_wrap=True)


def main() -> None:
    """Run the CLI, turning the project's errors and stop signals into one line and a code."""
    try:
        with interrupt.stop_on_signals():
            app()
    except SpecbenchError as error:
        say("error:", "bold red", error)
        sys.exit(error.exit_code)
    except RegressionDetected as error:
        say("regression:", "bold red", error)
        sys.exit(error.exit_code)
    except interrupt.Interrupted as stop:
        say(
            "interrupted:", "yellow", f"{stop}; completed cells are kept, a rerun measures the rest"
        )
        sys.exit(stop.exit_code)
    except KeyboardInterrupt:
        say(
            "interrupted:",
            "yellow",
            "by SIGINT; completed cells are kept, a rerun measures the rest",
        )
        sys.exit(130)


if __name__ == "__main__":
    main()
