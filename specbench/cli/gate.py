"""`specbench gate` (CI regression gate) and `specbench baseline save`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from specbench.cli import options as o

baseline_app = typer.Typer(
    name="baseline",
    help="Save the metrics of a results directory as a baseline.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.command(name="gate")(gate)
    baseline_app.command(name="save")(save)
    app.add_typer(baseline_app, name="baseline")


def save(
    results_dir: Annotated[Path, typer.Argument(help="Results directory (specbench run).")],
    out: Annotated[Path, typer.Option(help="Baseline JSON to write, e.g. baselines/NAME.json.")],
    rules: o.GateRules = None,
) -> None:
    """Store per-cell metrics with their errors, spread over repeats and the provenance."""
    from specbench.cli.console import make_console
    from specbench.cli.lines import line
    from specbench.gate.baseline import save_baseline
    from specbench.gate.baseline_power import baseline_warnings
    from specbench.gate.rules import load_rules

    gate_rules = load_rules(rules)
    baseline = save_baseline(results_dir, out)
    metrics = sum(len(cell.metrics) for cell in baseline.cells.values())
    make_console(highlight=False).print(
        f"baseline of {len(baseline.cells)} cells ({metrics} metrics) from {results_dir} "
        f"written to {out}",
        markup=False,
    )
    warnings = make_console(stderr=True, highlight=False)
    for warning in baseline_warnings(baseline, gate_rules):
        warnings.print(line("warning:", "yellow", warning), soft_wrap=True)


def gate(
    results_dir: Annotated[Path, typer.Argument(help="Results directory to judge.")],
    baseline: Annotated[Path, typer.Option(help="Baseline JSON (specbench baseline save).")],
    rules: o.GateRules = None,
    junit: Annotated[
        Path | None, typer.Option(help="Write JUnit XML: one test case per cell × metric.")
    ] = None,
    summary: Annotated[
        Path | None,
        typer.Option(help="Write the markdown summary here (else append to $GITHUB_STEP_SUMMARY)."),
    ] = None,
    strict_suite: Annotated[
        bool, typer.Option(help="Also fail (exit 2) when server settings differ from the baseline.")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(help="Write the verdict as one HTML page (`report --gate` embeds it)."),
    ] = None,
    json_file: Annotated[
        Path | None,
        typer.Option("--json", help="Write every check as JSON: verdict, rule, values compared."),
    ] = None,
) -> None:
    """Compare results with a baseline: exit 0 pass, 1 regression, 2 bad or missing input."""
    from specbench.cli.console import make_console
    from specbench.common.errors import RegressionDetected, SpecbenchError
    from specbench.gate.display import verdict
    from specbench.gate.run import GateOptions, run_gate, summary_target
    from specbench.render.verdict import verdict_terminal

    options = GateOptions(
        results_dir=results_dir,
        baseline=baseline,
        rules=rules,
        junit=junit,
        summary=summary,
        strict_suite=strict_suite,
        html=html,
        json=json_file,
    )
    report = run_gate(options)
    console = make_console()  # the findings and the verdict are the results: stdout
    full = [str(path) for path in (summary_target(options)[0], json_file, html, junit) if path]
    for part in verdict_terminal(verdict(report), console.width, full):
        console.print(part, highlight=False)
    missing = report.missing_cells
    if missing:
        raise SpecbenchError(
            f"{len(missing)} baseline cell(s) missing from {results_dir} (failed or not run): "
            + ", ".join(missing)
        )
    regressions = report.with_verdict("regression", "missing")
    if regressions:
        raise RegressionDetected(
            f"{len(regressions)} finding(s) (cell × metric), each a row of the table on stdout"
        )
