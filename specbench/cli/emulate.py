"""`specbench emulate`: serve a fake vLLM 0.32 (no model, no GPU) for tests and demos."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command(name="emulate")(emulate)


def emulate(
    port: Annotated[int, typer.Option(help="TCP port to listen on.")],
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    model: Annotated[
        str, typer.Option(help="Served model name (also the model_name metric label).")
    ] = "specbench-emulator",
    num_speculative_tokens: Annotated[
        int, typer.Option(help="Draft tokens K per request per decode step.")
    ] = 3,
    acceptance: Annotated[
        str | None,
        typer.Option(
            help=(
                "Conditional acceptance per draft position, comma-separated, K values in "
                "[0, 1]; default 0.8,0.75,0.7 (then -0.05 per further position)."
            )
        ),
    ] = None,
    no_spec: Annotated[
        bool, typer.Option("--no-spec", help="No speculative decoding (no spec-decode series).")
    ] = False,
    prefill_ms: Annotated[
        float, typer.Option(help="Duration of a step that prefills new requests (TTFT at c=1).")
    ] = 20.0,
    step_ms: Annotated[
        float, typer.Option(help="Duration of a decode step holding one request.")
    ] = 10.0,
    per_request_step_ms: Annotated[
        float, typer.Option(help="Extra step duration per request in the step beyond the first.")
    ] = 0.2,
    max_model_len: Annotated[
        int, typer.Option(help="Context limit in fake tokens (prompt + output).")
    ] = 4096,
    seed: Annotated[int, typer.Option(help="Seed of acceptance draws and corruption.")] = 0,
    corrupt_rate: Annotated[
        float,
        typer.Option(help="Fraction of prompts whose output token ids are altered (faults)."),
    ] = 0.0,
    per_request_spec_metrics: Annotated[
        bool,
        typer.Option(
            "--per-request-spec-metrics/--no-per-request-spec-metrics",
            help="Attach metrics.speculative_decoding to responses (vLLM's summary level).",
        ),
    ] = True,
    continuous_usage_stats: Annotated[
        bool,
        typer.Option(
            "--continuous-usage-stats/--no-continuous-usage-stats",
            help="Honour stream_options.continuous_usage_stats (off: usage on the last chunk).",
        ),
    ] = True,
    dev_mode: Annotated[
        bool,
        typer.Option(
            "--dev-mode/--no-dev-mode",
            envvar="VLLM_SERVER_DEV_MODE",
            help="Serve POST /reset_prefix_cache (vLLM's dev mode); else it answers 404.",
        ),
    ] = False,
    prompt_log: Annotated[
        str | None,
        typer.Option(help="Append each request's messages or prompt to this JSONL file."),
    ] = None,
    per_request_spec_decode_metrics: Annotated[
        str | None,
        typer.Option(
            help=(
                "As vLLM's flag: none, summary or detailed (adds per_step_accepted and "
                "per_step_drafted); overrides --per-request-spec-metrics when given."
            )
        ),
    ] = None,
    reasoning_tokens: Annotated[
        int,
        typer.Option(
            help=(
                "Thinking span at the start of every answer, in tokens, <think> and </think> "
                "included; 0 = no reasoning."
            )
        ),
    ] = 0,
    reasoning_acceptance: Annotated[
        str | None,
        typer.Option(
            help="Conditional acceptance of steps starting in the thinking span (K values)."
        ),
    ] = None,
    reasoning_output: Annotated[
        str,
        typer.Option(
            help=(
                "How thinking is streamed: reasoning (delta.reasoning, vLLM 0.32), "
                "reasoning_content (older servers) or inline (<think> tags in the content)."
            )
        ),
    ] = "reasoning",
    acceptance_decay: Annotated[
        float,
        typer.Option(help="Acceptance factor per --acceptance-decay-tokens of output position."),
    ] = 1.0,
    acceptance_decay_tokens: Annotated[
        int, typer.Option(help="Output tokens per acceptance decay interval.")
    ] = 256,
) -> None:
    """Serve a deterministic vLLM-compatible emulator until SIGINT/SIGTERM."""
    import logging

    from specbench.common.errors import SpecbenchError
    from specbench.emulator import make_emulator_config, parse_acceptance, serve_emulator

    per_step_spec_metrics = False
    if per_request_spec_decode_metrics is not None:
        if per_request_spec_decode_metrics not in ("none", "summary", "detailed"):
            raise SpecbenchError(
                f"--per-request-spec-decode-metrics {per_request_spec_decode_metrics!r}: "
                "expected none, summary or detailed"
            )
        per_request_spec_metrics = per_request_spec_decode_metrics != "none"
        per_step_spec_metrics = per_request_spec_decode_metrics == "detailed"
    config = make_emulator_config(
        host=host,
        port=port,
        model=model,
        speculative=not no_spec,
        num_speculative_tokens=num_speculative_tokens,
        acceptance=parse_acceptance(acceptance) if acceptance is not None else None,
        prefill_ms=prefill_ms,
        step_ms=step_ms,
        per_request_step_ms=per_request_step_ms,
        max_model_len=max_model_len,
        seed=seed,
        corrupt_rate=corrupt_rate,
        per_request_spec_metrics=per_request_spec_metrics,
        continuous_usage_stats=continuous_usage_stats,
        dev_mode=dev_mode,
        prompt_log=prompt_log,
        per_step_spec_metrics=per_step_spec_metrics,
        reasoning_tokens=reasoning_tokens,
        reasoning_acceptance=(
            parse_acceptance(reasoning_acceptance, "--reasoning-acceptance")
            if reasoning_acceptance is not None
            else None
        ),
        reasoning_output=reasoning_output,
        acceptance_decay=acceptance_decay,
        acceptance_decay_tokens=acceptance_decay_tokens,
    )
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    serve_emulator(config)
