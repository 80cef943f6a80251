"""`specbench data inspect`: summarize a dataset per category before benchmarking it."""

from __future__ import annotations

from typing import Annotated

import typer

data_app = typer.Typer(
    name="data",
    help="Inspect the datasets specbench can send (SPEED-Bench, MT-Bench, custom JSONL).",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")


@data_app.command(name="inspect")
def inspect(
    dataset: Annotated[
        str,
        typer.Argument(
            help="speed-bench:CONFIG, speed-bench:CONFIG:PATH, mt-bench[:PATH], or a JSONL path."
        ),
    ],
    tokenizer: Annotated[
        str | None,
        typer.Option(help="Hugging Face tokenizer folder for token counts (needs transformers)."),
    ] = None,
    dataset_revision: Annotated[
        str | None,
        typer.Option(help="Hub revision of nvidia/SPEED-Bench (default: the pinned commit)."),
    ] = None,
    category: Annotated[
        list[str] | None,
        typer.Option(help="Only this category (repeatable)."),
    ] = None,
) -> None:
    """Rows, multi-turn share, placeholder count and prompt lengths, per category."""
    from specbench.cli.console import make_console
    from specbench.cli.lines import line
    from specbench.data.inspect import (
        inspect_dataset,
        report_heading,
        report_notes,
        report_table,
    )

    report = inspect_dataset(
        dataset, revision=dataset_revision, categories=category or (), tokenizer=tokenizer
    )
    console = make_console()
    # Heading and notes hold paths: never wrapped, so a path stays one piece to copy.
    console.print(report_heading(report), soft_wrap=True, markup=False, highlight=False)
    console.print(report_table(report))
    for note in report_notes(report):
        console.print(note, soft_wrap=True, markup=False, highlight=False)
    for warning in report.warnings:
        console.print(line("warning:", "yellow", warning), soft_wrap=True)
