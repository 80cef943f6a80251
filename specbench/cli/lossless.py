"""`specbench lossless`: are speculative outputs identical to the baseline's at temperature 0?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from specbench.cli import options as o


def register(app: typer.Typer) -> None:
    app.command(name="lossless")(lossless)


def lossless(
    results_dir: Annotated[
        Path, typer.Argument(help="Results directory of a run with saved outputs.")
    ],
    baseline: o.BaselineLabel = None,
    speculative: o.SpeculativeLabel = None,
    min_match_rate: Annotated[
        float,
        typer.Option(help="Exit 1 when a cell's exact-match rate is below this fraction."),
    ] = 1.0,
    out: Annotated[
        Path | None, typer.Option(help="Folder for lossless.json/.md; default RESULTS_DIR.")
    ] = None,
) -> None:
    """Compare outputs with the baseline's request by request; report the three ALs.

    Exit code 0: every compared cell reached --min-match-rate; 1: some cell did not;
    2: bad input, or no pair of outputs could be compared.
    """
    from specbench.cli.console import make_console
    from specbench.common.errors import SpecbenchError
    from specbench.lossless import write_lossless
    from specbench.lossless.render import summary_lines

    report, paths = write_lossless(
        results_dir,
        out=out,
        baseline=baseline,
        speculative=speculative,
        min_match_rate=min_match_rate,
    )
    console = make_console(highlight=False, soft_wrap=True)
    for line in summary_lines(report):
        console.print(line, markup=False)
    console.print(f"written: {', '.join(map(str, paths))}", markup=False)
    if not any(cell.passed is not None for cell in report.cells):
        reasons = [c.skipped for c in report.cells if c.skipped] + report.unpaired
        raise SpecbenchError(
            f"{results_dir}: no pair of outputs could be compared"
            + (f" ({reasons[0]})" if reasons else "")
        )
    if not report.passed:
        raise typer.Exit(1)
