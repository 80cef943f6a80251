"""The emulator's settable options, held once: name, CLI type, default and help.

`EmulatorConfig` takes each field's default and description from this table, and
`specbench emulate` builds one `--option` per row from it. Standard library only, so that
reading it costs the CLI nothing at start-up (no pydantic, no server). Options the CLI
parses before they reach the config (`--acceptance`, `--no-spec`, ...) are declared by the
CLI itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DEFAULT_MODEL_NAME = "specbench-emulator"
DEFAULT_NUM_SPECULATIVE_TOKENS = 3


@dataclass(frozen=True)
class EmulatorOption:
    """One `EmulatorConfig` field that `specbench emulate` passes through unchanged.

    `cli_type` is what the command line parses (the config may narrow it, e.g. to a
    Literal); `required` makes the CLI demand it though the config has a default; `envvar`
    also reads the option from the environment.
    """

    name: str
    cli_type: type | Any
    default: Any
    help: str
    required: bool = False
    envvar: str | None = None


OPTIONS: tuple[EmulatorOption, ...] = (
    EmulatorOption("port", int, 8000, "TCP port to listen on.", required=True),
    EmulatorOption("host", str, "127.0.0.1", "Interface to listen on."),
    EmulatorOption(
        "model", str, DEFAULT_MODEL_NAME, "Served model name (also the model_name metric label)."
    ),
    EmulatorOption(
        "num_speculative_tokens",
        int,
        DEFAULT_NUM_SPECULATIVE_TOKENS,
        "Draft tokens K per request per decode step.",
    ),
    EmulatorOption(
        "prefill_ms", float, 20.0, "Duration of a step that prefills new requests (TTFT at c=1)."
    ),
    EmulatorOption("step_ms", float, 10.0, "Duration of a decode step holding one request."),
    EmulatorOption(
        "per_request_step_ms",
        float,
        0.2,
        "Extra step duration per request in the step beyond the first.",
    ),
    EmulatorOption("max_model_len", int, 4096, "Context limit in fake tokens (prompt + output)."),
    EmulatorOption("seed", int, 0, "Seed of acceptance draws and corruption."),
    EmulatorOption(
        "corrupt_rate",
        float,
        0.0,
        "Fraction of prompts whose output token ids are altered from some position on (faults).",
    ),
    EmulatorOption(
        "per_request_spec_metrics",
        bool,
        True,
        "Attach metrics.speculative_decoding to responses (vLLM's summary level).",
    ),
    EmulatorOption(
        "enable_per_request_metrics",
        bool,
        False,
        "As vLLM's flag: attach the per-request timing metrics (queue, TTFT from scheduling, "
        "generation time, mean ITL, tokens/s) to responses, on the final usage chunk of a "
        "stream; times are the engine steps' own (the time model's), not the loop's.",
    ),
    EmulatorOption(
        "continuous_usage_stats",
        bool,
        True,
        "Honour stream_options.continuous_usage_stats (off: usage on the last chunk).",
    ),
    EmulatorOption(
        "dev_mode",
        bool,
        False,
        "Serve POST /reset_prefix_cache (vLLM's dev mode); else it answers 404.",
        envvar="VLLM_SERVER_DEV_MODE",
    ),
    EmulatorOption(
        "prompt_log",
        str | None,
        None,
        "Append each request's messages or prompt to this JSONL file.",
    ),
    EmulatorOption(
        "reasoning_tokens",
        int,
        0,
        "Thinking span at the start of every answer, in tokens, <think> and </think> "
        "included; 0 = no reasoning.",
    ),
    EmulatorOption(
        "reasoning_output",
        str,
        "reasoning",
        "How thinking is streamed: reasoning (delta.reasoning, vLLM 0.32), "
        "reasoning_content (older servers) or inline (<think> tags in the content).",
    ),
    EmulatorOption(
        "acceptance_decay",
        float,
        1.0,
        "Factor on every conditional acceptance per --acceptance-decay-tokens of output "
        "position (1.0 = no decay).",
    ),
    EmulatorOption(
        "acceptance_decay_tokens", int, 256, "Output tokens per acceptance decay interval."
    ),
)

BY_NAME: dict[str, EmulatorOption] = {option.name: option for option in OPTIONS}
