"""The `specbench` console script: one typer app, each command registered from its own module.

Heavy imports (pandas, matplotlib, datasets, aiohttp) happen inside commands so that
`specbench --help` stays instant.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable
from typing import Annotated

import typer

from specbench import __version__
from specbench.cli.console import env_width, help_width, make_console
from specbench.cli.lines import line
from specbench.common import interrupt
from specbench.common.errors import RegressionDetected, SpecbenchError, describe_os_error

app = typer.Typer(
    name="specbench",
    help="Measure speculative decoding on vLLM with SPEED-Bench.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

try:  # typer >= 0.2x carries its own copy of click
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover (older typer uses click itself)
    from click import exceptions as click_errors  # type: ignore[no-redef]

err_console = make_console(stderr=True, highlight=False)
#: click's "no arguments: show the help" (click >= 8.2): raised only by a command group
#: called alone (`specbench`, `specbench data`), which prints its help and exits 0.
_NO_ARGS = getattr(click_errors, "NoArgsIsHelpError", ())


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"specbench {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Options of `specbench` itself, before the command."""


# Each command module adds its commands to `app`, in the order `--help` lists them; the
# modules import only typer at the top, so `specbench --help` stays instant.
from specbench.cli import (  # noqa: E402
    advise,
    bench,
    data,
    emulate,
    estimate,
    export,
    gate,
    lossless,
    report,
    run,
    serve,
    status,
)

for _module in (
    run,
    estimate,
    bench,
    serve,
    emulate,
    data,
    report,
    advise,
    export,
    lossless,
    gate,
    status,
):
    _module.register(app)


def say(label: str, style: str, message: object) -> None:
    """One line on stderr: a styled label, then the message as plain text (never markup)."""
    err_console.print(line(label, style, message), soft_wrap=True)


#: What an interrupted run keeps and how it resumes.
_KEPT = "completed cells are kept; a rerun measures the rest"


def main() -> None:
    """Run the CLI, turning the project's errors and stop signals into one line and a code."""
    try:
        env_width()  # a bad SPECBENCH_CONSOLE_WIDTH: one line and exit 2, before any command
        _help_follows_the_console()
        with interrupt.stop_on_signals():
            # Not standalone: click's usage errors come here, to be printed as one line.
            code = app(standalone_mode=False)
    except BaseException as error:  # noqa: BLE001 (unknown ones are raised again)
        sys.exit(report_error(error))
    sys.exit(code if isinstance(code, int) else 0)  # typer.Exit(code) and --help end here


def _help_follows_the_console() -> None:
    """typer prints `--help` on a console of its own, at rich's width (80 in a pipe): give
    it the CLI's width rule, unless typer's own `TERMINAL_WIDTH` sets one."""
    import os

    from typer import rich_utils

    if not os.environ.get("TERMINAL_WIDTH"):
        rich_utils.MAX_WIDTH = help_width()


def report_error(error: BaseException) -> int:
    """Print one line for a known error and return its exit code; raise any other again."""
    while isinstance(error, BaseExceptionGroup):  # a TaskGroup wraps what its tasks raised
        stops = [e for e in error.exceptions if isinstance(e, interrupt.Interrupted)]
        error = stops[0] if stops else error.exceptions[0]
    if isinstance(error, _NO_ARGS):
        typer.echo(error.format_message())  # the help, as `--help` prints it: stdout
        return 0
    if isinstance(error, click_errors.ClickException):
        say("error:", "bold red", usage_error(error))
        return int(error.exit_code)
    if isinstance(error, SpecbenchError):
        say("error:", "bold red", error)
        return error.exit_code
    if isinstance(error, RegressionDetected):
        say("regression:", "bold red", error)
        return error.exit_code
    if isinstance(error, OSError):
        say("error:", "bold red", describe_os_error(error))
        return 2
    if isinstance(error, interrupt.Interrupted):
        say("interrupted:", "yellow", f"{error}; {_KEPT}")
        return error.exit_code
    if isinstance(error, KeyboardInterrupt | typer.Abort):
        say("interrupted:", "yellow", f"by SIGINT; {_KEPT}")
        return 130
    raise error


def usage_error(error: click_errors.ClickException) -> str:
    """Click's message on one line, with the command whose --help lists what is allowed.

    An unknown option names the shown options nearest to it (click's close matches, less
    the hidden ones), or else the nearest one: never "no such option" alone."""
    context = getattr(error, "ctx", None)
    if isinstance(error, click_errors.NoSuchOption) and context is not None:
        shown = shown_options(context.command.get_params(context))
        close = [name for name in error.possibilities or () if name in shown]
        error.possibilities = close or nearest(error.option_name, shown)
    message = " ".join(error.format_message().split())
    if context is not None:
        message += f" (see `{context.command_path} --help`)"
    return message


def shown_options(params: Iterable[object]) -> list[str]:
    """The option names `--help` shows (hidden ones left out)."""
    return [
        name
        for param in params
        if not getattr(param, "hidden", False)
        for name in [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]
        if name.startswith("-")
    ]


def nearest(name: str, options: list[str]) -> list[str]:
    """The one of `options` that reads most like `name` (none when there are none)."""

    def likeness(option: str) -> float:
        return difflib.SequenceMatcher(None, name, option).ratio()

    return [max(options, key=likeness)] if options else []


if __name__ == "__main__":
    main()
