"""`specbench bench`: measure a running server at a list of concurrencies, cell by cell.

The pipeline for one endpoint: load the workload, check the endpoint (model, `/metrics`),
then for each concurrency × repeat measure a cell into its own folder. A cell whose
`summary.json` exists is skipped, so a rerun resumes where a crash or Ctrl-C stopped.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from specbench import store
from specbench.client.control import discover_model, scrape, server_version
from specbench.client.sender import AiohttpSender, Api, Client, RequestSettings, Sender
from specbench.common.errors import ServerError, SpecbenchError
from specbench.data.context import check_context_fit
from specbench.data.loader import Workload, load_workload
from specbench.measure.cell import CellOutcome, CellProgress, CellSpec, run_cell, utc_now
from specbench.measure.loop import run_event_loop
from specbench.store.manifest import update_manifest
from specbench.store.summary import CellSummary


@dataclass(frozen=True)
class BenchOptions:
    """Everything `specbench bench` was asked to do."""

    endpoint: str
    dataset: str
    concurrencies: tuple[int, ...]
    output: Path
    model: str | None = None
    num_prompts: int | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    warmup: int = 2
    repeats: int = 1
    gpus: int = 1
    label: str = "default"
    api_key: str | None = None
    api: Api = "chat"
    client: Client = "aiohttp"
    ignore_eos: bool = False
    save_outputs: bool | None = None
    request_timeout_s: float = 600.0
    seed: int = 0
    categories: tuple[str, ...] = ()
    entropy_tiers: tuple[str, ...] = ()
    dataset_revision: str | None = None
    tokenizer: str | None = None
    strict: bool = False
    force: bool = False
    extra_body: dict[str, object] = field(default_factory=dict)

    def validate(self) -> None:
        if not self.concurrencies:
            raise SpecbenchError("--concurrency: give at least one level, e.g. 1,4,16")
        bad = [c for c in self.concurrencies if c <= 0]
        if bad:
            raise SpecbenchError(f"--concurrency: levels must be positive integers, got {bad[0]}")
        for name, value in (
            ("--repeats", self.repeats),
            ("--gpus", self.gpus),
            ("--max-tokens", self.max_tokens),
        ):
            if value <= 0:
                raise SpecbenchError(f"{name} must be a positive integer, got {value}")
        if self.warmup < 0:
            raise SpecbenchError(f"--warmup must be ≥ 0, got {self.warmup}")
        if self.temperature < 0:
            raise SpecbenchError(f"--temperature must be ≥ 0, got {self.temperature}")
        if not self.endpoint.startswith(("http://", "https://")):
            raise SpecbenchError(f"--endpoint must be an http(s) URL, got {self.endpoint!r}")


def parse_concurrencies(text: str) -> tuple[int, ...]:
    """`1,4,16` → (1, 4, 16); anything else is a one-line error naming --concurrency."""
    try:
        levels = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise SpecbenchError(
            f"--concurrency: expected comma-separated integers like 1,4,16, got {text!r}"
        ) from None
    return levels


ProgressFactory = Callable[[], CellProgress]
Warn = Callable[[str], None]
CellDone = Callable[[CellSpec, CellOutcome], None]


async def bench_workload(
    options: BenchOptions,
    workload: Workload,
    *,
    progress: ProgressFactory = CellProgress,
    on_cell: CellDone | None = None,
    warn: Warn | None = None,
) -> list[CellSummary]:
    """Measure every cell of one endpoint × workload; skipped (complete) cells are read back."""
    base_url = options.endpoint.rstrip("/")
    save_outputs = (
        options.temperature == 0 if options.save_outputs is None else options.save_outputs
    )
    connector = aiohttp.TCPConnector(limit=max(options.concurrencies) + 8, limit_per_host=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        # Without /metrics there is no acceptance: fail before any request is sent.
        await scrape(session, base_url, options.api_key)
        served = await discover_model(session, base_url, options.api_key)
        model = options.model or str(served["id"])
        for message in context_warnings(
            workload, served.get("max_model_len"), options.max_tokens, options.tokenizer
        ):
            (warn or (lambda _m: None))(message)
        version = await server_version(session, base_url, options.api_key)
        update_manifest(
            options.output,
            created_at=utc_now(),
            servers={
                options.label: {
                    "endpoint": base_url,
                    "model": model,
                    "vllm_version": version,
                    "gpus": options.gpus,
                }
            },
            runs=[
                {
                    "command": "bench",
                    "argv": sys.argv,
                    "started_at": utc_now(),
                    "label": options.label,
                    "dataset": workload.spec,
                    "dataset_source": workload.source,
                    "dataset_revision": workload.revision,
                    "num_conversations": len(workload.conversations),
                    "concurrencies": list(options.concurrencies),
                    "repeats": options.repeats,
                    "max_tokens": options.max_tokens,
                    "temperature": options.temperature,
                    "api": options.api,
                    "client": options.client,
                    "ignore_eos": options.ignore_eos,
                }
            ],
        )
        settings = RequestSettings(
            model=model,
            api=options.api,
            max_tokens=options.max_tokens,
            temperature=options.temperature,
            ignore_eos=options.ignore_eos,
            return_token_ids=True,
            extra_body=dict(options.extra_body),
        )
        sender = make_sender(
            options.client,
            session,
            base_url,
            settings,
            api_key=options.api_key,
            request_timeout_s=options.request_timeout_s,
            max_connections=max(options.concurrencies) + 8,
        )
        summaries: list[CellSummary] = []
        failures: list[str] = []
        try:
            for concurrency in options.concurrencies:
                for repeat in range(options.repeats):
                    spec = CellSpec(
                        label=options.label,
                        dataset=workload.spec,
                        category=_single_category(workload),
                        concurrency=concurrency,
                        repeat=repeat,
                        gpus=options.gpus,
                        model=model,
                        endpoint=base_url,
                        api=options.api,
                        client=options.client,
                        max_tokens=options.max_tokens,
                        temperature=options.temperature,
                        warmup=options.warmup,
                        save_outputs=save_outputs,
                    )
                    directory = store.cell_dir(
                        options.output,
                        options.label,
                        store.dataset_dir_name(
                            options.dataset, options.categories, options.entropy_tiers
                        ),
                        concurrency,
                        repeat,
                    )
                    outcome = await run_cell(
                        spec,
                        workload.conversations,
                        session,
                        sender,
                        directory,
                        force=options.force,
                        api_key=options.api_key,
                        progress=progress(),
                    )
                    if outcome.summary:
                        summaries.append(outcome.summary)
                    else:
                        failures.append(f"c{concurrency}/r{repeat}: {outcome.error}")
                    if on_cell:
                        on_cell(spec, outcome)
        finally:
            close = getattr(sender, "close", None)
            if close:
                await close()
    if failures:
        raise ServerError(f"{len(failures)} cell(s) failed (see failure.json): {failures[0]}")
    return summaries


def context_warnings(
    workload: Workload, max_model_len: object, max_tokens: int, tokenizer: str | None
) -> list[str]:
    """The workload's own warnings, plus a context-length check when the server states its limit."""
    messages = list(workload.warnings)
    if isinstance(max_model_len, int) and max_model_len > 0:
        messages += check_context_fit(
            workload, max_model_len=max_model_len, max_tokens=max_tokens, tokenizer=tokenizer
        )
    return messages


def make_sender(
    client: Client,
    session: aiohttp.ClientSession,
    base_url: str,
    settings: RequestSettings,
    *,
    api_key: str | None,
    request_timeout_s: float,
    max_connections: int,
) -> Sender:
    """The aiohttp hot path, or the official openai SDK (`--client openai`)."""
    if client == "openai":
        from specbench.client.openai_sender import OpenAISender

        return OpenAISender(
            base_url,
            settings,
            api_key=api_key,
            request_timeout_s=request_timeout_s,
            max_connections=max_connections,
        )
    return AiohttpSender(
        session, base_url, settings, api_key=api_key, request_timeout_s=request_timeout_s
    )


def _single_category(workload: Workload) -> str | None:
    categories = workload.categories
    return categories[0] if len(categories) == 1 else None


def run_bench(
    options: BenchOptions,
    *,
    progress: ProgressFactory = CellProgress,
    on_cell: CellDone | None = None,
    warn: Warn | None = None,
) -> list[CellSummary]:
    """Validate, load the dataset, and measure every cell (blocking)."""
    options.validate()
    workload = load_workload(
        options.dataset,
        revision=options.dataset_revision,
        categories=options.categories,
        entropy_tiers=options.entropy_tiers,
        num_prompts=options.num_prompts,
        seed=options.seed,
        strict=options.strict,
    )
    return run_event_loop(
        bench_workload(options, workload, progress=progress, on_cell=on_cell, warn=warn)
    )
