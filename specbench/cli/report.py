"""`specbench report`: model-card tables and figures from results directories (offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

RESULTS_HELP = "Results directories (several are merged; colliding labels get the dir name)."


def register(app: typer.Typer) -> None:
    app.command(name="report")(report)


def report(
    results_dirs: Annotated[
        list[Path], typer.Argument(help=RESULTS_HELP, show_default=False, metavar="RESULTS_DIR")
    ],
    out: Annotated[
        Path | None,
        typer.Option(help="Output folder; default RESULTS_DIR/report (required for several)."),
    ] = None,
    formats: Annotated[
        str,
        typer.Option("--format", help="Comma-separated: md, csv, json, png, svg, vllm-bench."),
    ] = "md,csv,json,png,svg",
    concurrency: Annotated[
        int | None,
        typer.Option(help="Concurrency of the serving table; default 48 if run, else highest."),
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(help="Baseline label; default: the manifest's baseline.")
    ] = None,
    speculative: Annotated[
        str | None, typer.Option(help="Only this speculative label; default: all of them.")
    ] = None,
) -> None:
    """Aggregate summaries into model-card tables, figures and report.md (never the network)."""
    from rich.console import Console

    from specbench.analysis.report import ReportOptions, build_report, parse_formats

    options = ReportOptions(
        results_dirs=tuple(results_dirs),
        out=out,
        formats=parse_formats(formats),
        concurrency=concurrency,
        baseline=baseline,
        speculative=speculative,
    )
    try:
        build_report(options, console=Console())
    except OSError as error:  # a failed write names no file: name the report's folder
        if error.filename is None:
            folder = out or results_dirs[0] / "report"
            raise OSError(error.errno, error.strerror or str(error), str(folder)) from None
        raise
