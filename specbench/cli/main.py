"""The `specbench` console script: one typer app, each command registered from its own module.

Heavy imports (pandas, matplotlib, datasets, aiohttp) happen inside commands so that
`specbench --help` stays instant.
"""

from __future__ import annotations

import sys

import typer

from specbench.cli.console import env_width, make_console
from specbench.common.errors import RegressionDetected, SpecbenchError

app = typer.Typer(
    name="specbench",
    help="Measure speculative decoding on vLLM with SPEED-Bench.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

err_console = make_console(stderr=True, highlight=False)

# Each command module adds its commands to `app`, in the order `--help` lists them; the
# modules import only typer at the top, so `specbench --help` stays instant.
from specbench.cli import (  # noqa: E402
    bench,
    data,
    emulate,
    export,
    gate,
    lossless,
    report,
    run,
    serve,
    status,
)

for _module in (run, bench, serve, emulate, data, report, export, lossless, gate, status):
    _module.register(app)


def main() -> None:
    """Run the CLI, turning the project's errors into one line and an exit code."""
    try:
        env_width()  # a bad SPECBENCH_CONSOLE_WIDTH: one line and exit 2, before any command
        app()
    except SpecbenchError as error:
        err_console.print(f"[bold red]error:[/] {error}", soft_wrap=True)
        sys.exit(error.exit_code)
    except RegressionDetected as error:
        err_console.print(f"[bold red]regression:[/] {error}", soft_wrap=True)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]")
        sys.exit(130)


if __name__ == "__main__":
    main()
