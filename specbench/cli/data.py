"""`specbench data`: inspect a dataset; prepare, verify and diff SPEED-Bench's resolved text."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from specbench.cli import options as o

data_app = typer.Typer(
    name="data",
    help="Inspect datasets; prepare, verify and diff SPEED-Bench with its placeholders filled.",
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
    dataset_revision: o.DatasetRevision = None,
    category: o.Category = None,
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
    # Warnings are not the report: stderr, so that stdout holds the table and its notes only.
    warnings = make_console(stderr=True)
    for warning in report.warnings:
        warnings.print(line("warning:", "yellow", warning), soft_wrap=True)


@data_app.command(name="prepare")
def prepare(
    config: Annotated[
        list[str] | None,
        typer.Argument(
            help="SPEED-Bench configs to prepare (qualitative, throughput_1k, ...) or all."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            help="Folder to write (speed/<config>/test.parquet, <config>.jsonl, prepared.json)."
        ),
    ] = None,
    mirror: Annotated[
        Path | None,
        typer.Option(
            help="Read upstream repos from DIR/<owner>/<name>/, URLs from DIR/urls/<host>/<path>; "
            "no network."
        ),
    ] = None,
    dataset_revision: o.DatasetRevision = None,
    skip_gated: Annotated[
        bool,
        typer.Option(
            help="Leave out the rows of gated sources (cais/hle); the config is marked partial."
        ),
    ] = False,
    flavour: Annotated[
        str,
        typer.Option(
            help="Whose resolvers: model-optimizer (specdec_bench, the model cards) or "
            "nemo-skills (vllm bench serve, SGLang, AIPerf)."
        ),
    ] = "model-optimizer",
    list_sources: Annotated[
        bool,
        typer.Option(
            help="Print every source's repo, revision, files and download command; write nothing."
        ),
    ] = False,
) -> None:
    """Fill SPEED-Bench's placeholder rows from their upstream sources, as NVIDIA's code does."""
    from specbench.cli.console import make_console
    from specbench.common.errors import SpecbenchError
    from specbench.data.prepare.pipeline import expand_configs
    from specbench.data.speed_bench import DEFAULT_REVISION

    configs = expand_configs(config or (["all"] if list_sources else []))
    revision = dataset_revision or DEFAULT_REVISION
    if list_sources:
        _print_sources(configs, mirror, revision)
        return
    if output is None:
        raise SpecbenchError("--output DIR is required (the folder to write)")
    from specbench.cli.progress import config_bars
    from specbench.data.prepare.pipeline import prepare as run_prepare

    with config_bars() as progress:
        content = run_prepare(configs, output, mirror, revision, skip_gated, progress, flavour)
    console = make_console()
    for name, entry in content["configs"].items():
        partial = f", partial: {len(entry['missing'])} rows left out" if entry["partial"] else ""
        console.print(f"{name}: {entry['rows']} rows{partial}", markup=False, highlight=False)
    from specbench.data.prepare.upstream import NOT_RECORDED

    unchecked = [repo for repo, revision in content["sources"].items() if revision == NOT_RECORDED]
    if unchecked:
        console.print(
            f"note: the mirror recorded no revision for {', '.join(unchecked)}: not checked "
            f"against the pins; prepared.json says {NOT_RECORDED!r} (fill them with "
            "`huggingface-cli download --revision REV --local-dir`, see --list-sources)",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
    console.print(
        f"wrote {output} (prepared.json, speed/<config>/test.parquet, <config>.jsonl); "
        f"use it with `specbench run SUITE --data-dir {output}`",
        soft_wrap=True,
        markup=False,
        highlight=False,
    )


def _print_sources(configs: list[str], mirror: Path | None, revision: str) -> None:
    """`data prepare --list-sources`: every source's repo, revision, files and command."""
    from specbench.cli.console import make_console
    from specbench.data.prepare.listing import list_sources

    console = make_console()
    listed, note = list_sources(configs, mirror, revision)
    for item in listed:
        console.print(
            f"{item.source}: {item.repo} @ {item.revision}; files: {item.files}\n  {item.command}",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
    if note:
        console.print(note, soft_wrap=True, markup=False, highlight=False)


@data_app.command(name="verify")
def verify(
    folder: Annotated[Path, typer.Argument(help="A folder `data prepare` wrote.")],
    recorded_counts: Annotated[
        bool,
        typer.Option(
            help="Check row counts against prepared.json, not SPEED-Bench's published ones "
            "(and skip the token-length check)."
        ),
    ] = False,
    max_problems: Annotated[
        int,
        typer.Option(min=0, help="Print at most this many problems, then how many more (0: all)."),
    ] = 20,
) -> None:
    """No placeholder, the expected rows per category, every row's text as recorded; else exit 1."""
    from specbench.cli.console import make_console
    from specbench.data.prepare.verify import verify as check

    problems = check(folder, published=not recorded_counts)
    console = make_console()
    for text in describe_problems(problems, max_problems, published=not recorded_counts):
        console.print(text, soft_wrap=True, markup=False, highlight=False)
    if problems:
        raise typer.Exit(1)
    console.print(f"{folder}: verified", markup=False, highlight=False)


def describe_problems(problems: list[str], shown: int, *, published: bool) -> list[str]:
    """The first `shown` problems (0: all), `and N more`, then one summary line."""
    if not problems:
        return []
    lines = problems[:shown] if shown else list(problems)
    if len(problems) > len(lines):
        lines.append(f"and {len(problems) - len(lines)} more (--max-problems 0 shows all)")
    from specbench.data.prepare.verify import is_count_problem

    configs = len({problem.split(":", 1)[0] for problem in problems})
    summary = f"{len(problems)} problem(s) in {configs} config(s)"
    counts = sum(map(is_count_problem, problems))
    if published and counts:
        summary += (
            f"; {counts} are row counts against SPEED-Bench's published ones: a folder "
            "prepared from a partial mirror or a subset checks against its own prepared.json "
            "with --recorded-counts"
        )
    return [*lines, summary]


@data_app.command(name="diff")
def diff(
    a: Annotated[
        Path,
        typer.Argument(
            help="A prepared set: a `data prepare` folder, Model-Optimizer's output folder or "
            "parquet, NeMo-Skills' JSONL."
        ),
    ],
    b: Annotated[Path, typer.Argument(help="The other prepared set.")],
    config: Annotated[
        list[str] | None, typer.Option(help="Configs to compare (default: every config A holds).")
    ] = None,
    show: Annotated[int, typer.Option(help="Differing rows to print per config.")] = 10,
) -> None:
    """Row by row by question_id: identical rows; per differing row, its column and text."""
    from specbench.cli.console import make_console
    from specbench.data.prepare.diff import configs_in, diff_config

    console = make_console()
    different = False
    for name in config or configs_in(a):
        result = diff_config(name, a, b)
        console.print(
            f"{name}: {result.identical}/{result.compared} rows identical; "
            f"{len(result.only_a)} only in A, {len(result.only_b)} only in B",
            markup=False,
            highlight=False,
        )
        for qid, column, left, right in result.changed[:show]:
            console.print(
                f"  {qid} {column}: A {left!r} | B {right!r}",
                soft_wrap=True,
                markup=False,
                highlight=False,
            )
        different |= bool(result.changed or result.only_a or result.only_b)
    if different:
        raise typer.Exit(1)
