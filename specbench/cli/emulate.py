"""`specbench emulate`: serve a fake vLLM 0.32 (no model, no GPU) for tests and demos.

The options that pass through to `EmulatorConfig` unchanged come from its option table
(`common/emulator_settings.py`), one `--option` per row; the five the CLI parses first are
declared here.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from specbench.common.emulator_settings import OPTIONS, EmulatorOption


def register(app: typer.Typer) -> None:
    app.command(name="emulate")(emulate)


def emulate(
    *,
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
    per_request_spec_decode_metrics: Annotated[
        str | None,
        typer.Option(
            help=(
                "As vLLM's flag: none, summary or detailed (adds per_step_accepted and "
                "per_step_drafted); overrides --per-request-spec-metrics when given."
            )
        ),
    ] = None,
    num_speculative_tokens_per_batch_size: Annotated[
        str | None,
        typer.Option(
            help=(
                "vLLM's dynamic K as JSON, e.g. '[[1,4,5],[5,16,3],[17,1024,1]]': inclusive "
                "ranges of the requests in a step (prefills included), from 1, sorted, "
                "non-overlapping; gaps and the tail repeat the previous K; each K clamped to "
                "--num-speculative-tokens; K = 0 still pays one --draft-step-ms."
            )
        ),
    ] = None,
    reasoning_acceptance: Annotated[
        str | None,
        typer.Option(
            help="Conditional acceptance of steps starting in the thinking span (K values)."
        ),
    ] = None,
    **settings: Any,
) -> None:
    """Serve a deterministic vLLM-compatible emulator until SIGINT/SIGTERM."""
    import logging

    from specbench.common.errors import SpecbenchError
    from specbench.common.k_schedule import parse_schedule
    from specbench.emulator import make_emulator_config, parse_acceptance, serve_emulator

    if per_request_spec_decode_metrics is not None:
        if per_request_spec_decode_metrics not in ("none", "summary", "detailed"):
            raise SpecbenchError(
                f"--per-request-spec-decode-metrics {per_request_spec_decode_metrics!r}: "
                "expected none, summary or detailed"
            )
        settings["per_request_spec_metrics"] = per_request_spec_decode_metrics != "none"
    if num_speculative_tokens_per_batch_size is not None:
        try:
            schedule = parse_schedule(num_speculative_tokens_per_batch_size)
        except ValueError as error:
            raise SpecbenchError(f"--num-speculative-tokens-per-batch-size: {error}") from None
        settings["num_speculative_tokens_per_batch_size"] = schedule
    config = make_emulator_config(
        **settings,
        speculative=not no_spec,
        acceptance=parse_acceptance(acceptance) if acceptance is not None else None,
        per_step_spec_metrics=per_request_spec_decode_metrics == "detailed",
        reasoning_acceptance=(
            parse_acceptance(reasoning_acceptance, "--reasoning-acceptance")
            if reasoning_acceptance is not None
            else None
        ),
    )
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    serve_emulator(config)


def _parameter(option: EmulatorOption) -> inspect.Parameter:
    declared = typer.Option(help=option.help, envvar=option.envvar)
    return inspect.Parameter(
        option.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=inspect.Parameter.empty if option.required else option.default,
        annotation=Annotated[option.cli_type, declared],
    )


def _signature() -> inspect.Signature:
    """The table's options in its order, each CLI-parsed option after the field it shapes."""
    own = dict(inspect.signature(emulate, eval_str=True).parameters)
    placed_after = {
        "num_speculative_tokens": (
            "acceptance",
            "no_spec",
            "num_speculative_tokens_per_batch_size",
        ),
        "prompt_log": ("per_request_spec_decode_metrics",),
        "reasoning_tokens": ("reasoning_acceptance",),
    }
    parameters: list[inspect.Parameter] = []
    for option in OPTIONS:
        parameters.append(_parameter(option))
        parameters += [own[name] for name in placed_after.get(option.name, ())]
    return inspect.Signature(parameters, return_annotation=None)


emulate.__signature__ = _signature()  # type: ignore[attr-defined]
