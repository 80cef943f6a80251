"""`specbench bench`: measure a running OpenAI-compatible vLLM endpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from specbench.cli import options as o
from specbench.common import defaults
from specbench.common.errors import CellsFailed
from specbench.run import options_help as text


def register(app: typer.Typer) -> None:
    app.command(name="bench", cls=o.Command)(bench)


def bench(
    dataset: Annotated[
        str,
        typer.Option(
            metavar="SPEC",
            help="speed-bench:CONFIG, mt-bench, or a JSONL path.",
            rich_help_panel=o.WHAT,
        ),
    ],
    output: Annotated[
        Path, typer.Option(metavar="DIR", help=text.OUTPUT, rich_help_panel=o.RESULTS)
    ],
    endpoint: Annotated[
        str,
        typer.Option(
            metavar="URL",
            help="Base URL of the server, e.g. http://127.0.0.1:8000.",
            rich_help_panel=o.SERVERS,
        ),
    ],
    concurrency: Annotated[
        str,
        typer.Option(
            metavar="LEVELS",
            help="Comma-separated concurrency levels, e.g. 1,4,16.",
            rich_help_panel=o.WHAT,
        ),
    ] = "1",
    repeats: Annotated[
        int,
        typer.Option(
            min=1, metavar="N", help="Repeats of each concurrency level.", rich_help_panel=o.WHAT
        ),
    ] = 1,
    label: Annotated[
        str,
        typer.Option(
            metavar="NAME",
            help="Name of this server configuration in the results.",
            rich_help_panel=o.RESULTS,
        ),
    ] = "default",
    workload_name: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Results folder of this workload; default: the dataset selection.",
            rich_help_panel=o.RESULTS,
        ),
    ] = None,
    force: o.Force = False,
    save_outputs: o.SaveOutputs = None,
    model: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Served model name; default: from /v1/models.",
            rich_help_panel=o.SERVERS,
        ),
    ] = None,
    gpus: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="GPUs serving (TP × PP × DP): divisor of tok/s/GPU. Without it, throughput "
            "is reported per server, never divided by a guess.",
            rich_help_panel=o.SERVERS,
        ),
    ] = None,
    api_key_env: o.ApiKeyEnv = None,
    num_prompts: o.NumPrompts = None,
    category: o.Category = None,
    entropy_tier: o.EntropyTier = None,
    dataset_revision: o.DatasetRevision = None,
    tokenizer: o.Tokenizer = None,
    seed: o.Seed = 0,
    strict: o.Strict = False,
    max_tokens: o.MaxTokens = defaults.BENCH_MAX_TOKENS,
    temperature: o.Temperature = 0.0,
    warmup: o.Warmup = defaults.BENCH_WARMUP,
    api: o.Api = "chat",
    client: o.Client = "aiohttp",
    ignore_eos: o.IgnoreEos = False,
    request_timeout: o.RequestTimeout = o.REQUEST_TIMEOUT_S,
) -> None:
    """Measure AL, acceptance, TTFT, TPOT, E2E and tok/s/GPU against a running server."""
    from specbench.cli.progress import campaign_progress, cells_table, results_console
    from specbench.run.orchestrator import run_plan
    from specbench.run.plan import RunOptions, parse_concurrencies, plan_endpoint
    from specbench.suite.load import workload_from_options

    workload = workload_from_options(
        name=workload_name,
        dataset=dataset,
        categories=category or None,
        entropy_tiers=entropy_tier or None,
        num_prompts=num_prompts,
        concurrency=parse_concurrencies(concurrency),
        max_tokens=max_tokens,
        temperature=temperature,
        warmup=warmup,
        api=api,
        client=client,
        ignore_eos=ignore_eos,
        seed=seed,
        dataset_revision=dataset_revision,
        tokenizer=tokenizer,
        strict=strict,
        save_outputs=save_outputs,
        request_timeout_s=request_timeout,
    )
    options = RunOptions(output=output, force=force, api_key_env=api_key_env)
    plan = plan_endpoint(endpoint, workload, label=label, model=model, gpus=gpus, repeats=repeats)
    with campaign_progress(campaign_bar=False) as progress:
        result = run_plan(plan, options, progress)
    summaries = [o.summary for o in result.outcomes.values() if o.summary is not None]
    results_console.print(cells_table(summaries))
    results_console.print(f"results in {output}", markup=False)
    if result.failed:
        first = result.outcomes[result.failed[0]].error
        # As `run`: cells were measured and some failed (1); bad input and an unreachable
        # endpoint are refused before any cell (2).
        raise CellsFailed(f"{len(result.failed)} cell(s) failed (see failure.json): {first}")
