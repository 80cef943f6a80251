"""`specbench bench`: measure a running OpenAI-compatible vLLM endpoint."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from specbench.common.errors import SpecbenchError


def register(app: typer.Typer) -> None:
    app.command(name="bench")(bench)


def bench(
    endpoint: Annotated[
        str, typer.Option(help="Base URL of the server, e.g. http://127.0.0.1:8000.")
    ],
    dataset: Annotated[str, typer.Option(help="speed-bench:CONFIG, mt-bench, or a JSONL path.")],
    output: Annotated[Path, typer.Option(help="Results directory (created; resumable).")],
    concurrency: Annotated[
        str, typer.Option(help="Comma-separated concurrency levels, e.g. 1,4,16.")
    ] = "1",
    model: Annotated[
        str | None, typer.Option(help="Served model name; default: from /v1/models.")
    ] = None,
    num_prompts: Annotated[
        int | None, typer.Option(help="Conversations per cell (stratified by category).")
    ] = None,
    max_tokens: Annotated[int, typer.Option(help="Output cap per request.")] = 256,
    temperature: Annotated[
        float, typer.Option(help="Sampling temperature (SPEED-Bench uses 0).")
    ] = 0.0,
    warmup: Annotated[
        int, typer.Option(help="Warmup conversations before each cell (not measured).")
    ] = 2,
    repeats: Annotated[int, typer.Option(help="Repeats of each concurrency level.")] = 1,
    gpus: Annotated[int, typer.Option(help="GPUs serving (TP × DP): divisor of tok/s/GPU.")] = 1,
    label: Annotated[
        str, typer.Option(help="Name of this server configuration in the results.")
    ] = "default",
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key.")
    ] = None,
    api: Annotated[str, typer.Option(help="chat (default) or completions (raw prompts).")] = "chat",
    client: Annotated[
        str, typer.Option(help="aiohttp (default) or openai (the official SDK).")
    ] = "aiohttp",
    ignore_eos: Annotated[
        bool, typer.Option(help="Ask the server to ignore EOS (fixed output lengths).")
    ] = False,
    save_outputs: Annotated[
        bool | None,
        typer.Option(
            "--save-outputs/--no-save-outputs",
            help="Keep output text and token ids; default on at temperature 0.",
        ),
    ] = None,
    category: Annotated[
        list[str] | None, typer.Option(help="Keep only this category (repeatable).")
    ] = None,
    entropy_tier: Annotated[
        list[str] | None, typer.Option(help="Throughput splits: keep this tier (repeatable).")
    ] = None,
    dataset_revision: Annotated[
        str | None, typer.Option(help="Hub revision of SPEED-Bench.")
    ] = None,
    tokenizer: Annotated[
        str | None, typer.Option(help="Tokenizer folder for an exact context-length check.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the stratified prompt selection.")] = 0,
    request_timeout: Annotated[
        float, typer.Option(help="Seconds without data before a request fails.")
    ] = 600.0,
    strict: Annotated[
        bool, typer.Option(help="Fail when --num-prompts exceeds the rows (default: use all).")
    ] = False,
    force: Annotated[bool, typer.Option(help="Measure cells again even when complete.")] = False,
) -> None:
    """Measure AL, acceptance, TTFT, TPOT, E2E and tok/s/GPU against a running server."""
    from specbench.cli.progress import RichCellProgress, cells_table, console
    from specbench.measure.cell import CellOutcome, CellSpec
    from specbench.run.bench import BenchOptions, parse_concurrencies, run_bench

    api_key = None
    if api_key_env:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise SpecbenchError(f"--api-key-env: environment variable {api_key_env} is not set")
    if api not in ("chat", "completions"):
        raise SpecbenchError(f"--api must be chat or completions, got {api!r}")
    if client not in ("aiohttp", "openai"):
        raise SpecbenchError(f"--client must be aiohttp or openai, got {client!r}")
    options = BenchOptions(
        endpoint=endpoint,
        dataset=dataset,
        concurrencies=parse_concurrencies(concurrency),
        output=output,
        model=model,
        num_prompts=num_prompts,
        max_tokens=max_tokens,
        temperature=temperature,
        warmup=warmup,
        repeats=repeats,
        gpus=gpus,
        label=label,
        api_key=api_key,
        api=api,  # type: ignore[arg-type]
        client=client,  # type: ignore[arg-type]
        ignore_eos=ignore_eos,
        save_outputs=save_outputs,
        request_timeout_s=request_timeout,
        seed=seed,
        categories=tuple(category or ()),
        entropy_tiers=tuple(entropy_tier or ()),
        dataset_revision=dataset_revision,
        tokenizer=tokenizer,
        strict=strict,
        force=force,
    )

    def on_cell(spec: CellSpec, outcome: CellOutcome) -> None:
        where = f"{spec.label} c={spec.concurrency} r={spec.repeat}"
        if outcome.skipped:
            console.print(f"[dim]skip {where}: already complete[/]")
        elif outcome.error:
            console.print(f"[red]failed[/] {where}: {outcome.error}")

    summaries = run_bench(
        options,
        progress=RichCellProgress,
        on_cell=on_cell,
        warn=lambda message: console.print(f"[yellow]warning:[/] {message}"),
    )
    console.print(cells_table(summaries))
    console.print(f"results in {output}")
