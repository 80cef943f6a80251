"""`specbench report`: model-card tables and figures from results directories (offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from specbench.cli import options as o

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
        typer.Option(
            "--format", help="Comma-separated: md, csv, json, png, svg, html, vllm-bench."
        ),
    ] = "md,csv,json,png,svg,html",
    concurrency: Annotated[
        int | None,
        typer.Option(help="Concurrency of the serving table; default 48 if run, else highest."),
    ] = None,
    baseline: o.BaselineLabel = None,
    speculative: o.SpeculativeLabel = None,
    al_definition: Annotated[
        str,
        typer.Option(
            "--al-definition",
            help="AL printed first in the card tables: official (SPEED-Bench, specdec_bench's "
            "definition) or step-weighted (vLLM's counters); the other is printed beside it.",
        ),
    ] = "official",
    gate_page: Annotated[
        Path | None,
        typer.Option(
            "--gate",
            help="Show this gate verdict in report.html (the page `gate --html` wrote).",
        ),
    ] = None,
    variance_from: Annotated[
        Path | None,
        typer.Option(
            "--variance-from",
            help="An earlier campaign of the same suite and target model with ≥ 3 launches: "
            "its between-launch variance widens one-launch intervals (kind calibrated).",
        ),
    ] = None,
    slo: o.SloBounds = None,
) -> None:
    """Aggregate summaries into model-card tables, figures, report.md and report.html (offline)."""
    from specbench.cli.console import make_console
    from specbench.common.errors import SpecbenchError
    from specbench.render.outcome import ReportOptions, parse_formats
    from specbench.render.report import build_report

    definitions = {"official": "official", "step-weighted": "step_weighted"}
    if al_definition not in definitions:
        raise SpecbenchError(f"--al-definition {al_definition!r}: allowed: official, step-weighted")
    options = ReportOptions(
        results_dirs=tuple(results_dirs),
        out=out,
        formats=parse_formats(formats),
        concurrency=concurrency,
        baseline=baseline,
        speculative=speculative,
        al_definition=definitions[al_definition],
        gate_page=gate_page,
        variance_from=variance_from,
        slo=o.slo_of(slo),
    )
    try:
        build_report(options, console=make_console(), warnings=make_console(stderr=True))
    except OSError as error:  # a failed write names no file: name the report's folder
        if error.filename is None:
            folder = out or results_dirs[0] / "report"
            raise OSError(error.errno, error.strerror or str(error), str(folder)) from None
        raise
