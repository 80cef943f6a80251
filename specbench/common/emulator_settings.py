"""The emulator's settings, each declared once: type, default, bounds, help, who may set it.

`EmulatorSettings` is the table, one typed field per setting, and everything else derives
from it:
- `EmulatorConfig` (`emulator/config.py`) is this dataclass with its derived properties and
  cross-field rules, validated against the table's types and bounds;
- `specbench emulate` builds one `--option` per setting declared `cli="option"`
  (`OPTIONS`); it declares and parses the `cli="parsed"` ones itself (`--acceptance` ...);
- a suite server's `[emulator]` table (`launch.config.EmulatorOverrides`) takes the
  settings declared `suite=True`, same bounds, None keeping the emulator's default;
- `launch.argv` writes those back as `emulate` flags.
So a new setting is its row here and the code that reads it. Standard library only, so
that reading it costs the CLI nothing at start-up (no pydantic, no server).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from typing import Any, Literal, get_type_hints

DEFAULT_MODEL_NAME = "specbench-emulator"
DEFAULT_NUM_SPECULATIVE_TOKENS = 3
#: The longest step the emulator takes, in ms (ten minutes).
_MAX_STEP_MS = 600_000

#: How `specbench emulate` takes a setting: "option" passes `--name` through unchanged,
#: "parsed" is declared and parsed by the command itself, None is not on its command line.
CliRole = Literal["option", "parsed"]
#: The text the emulator's GPU exporter serves: AMD Device Metrics Exporter's or DCGM's.
ExporterFormat = Literal["amd", "dcgm"]
#: What goes wrong with the exporter on demand (`emulator.power.PowerMeter`).
ExporterFault = Literal["none", "reset", "backwards", "frozen", "missing_gpu", "unreachable"]


@dataclass(frozen=True)
class Setting:
    """What the table declares about one setting besides its type and default.

    `bounds` are pydantic constraints (`ge`, `gt`, `le`, `min_length`), enforced on every
    path in. `cli_type` is what the command line parses when the config narrows it (a
    Literal); `required` makes the CLI demand it though the config has a default; `envvar`
    also reads it from the environment. `suite`: a suite server's `[emulator]` table may
    set it. `drafting`: only passed when the server speculates. `in_argv` False: the argv
    builder writes it itself (merged with a server field). `hash_neutral`: added after
    schema 2, left out of the suite hash at its default. `needs`: another setting that must
    leave its default before this one may (the exporter's settings need `exporter_port`).
    """

    help: str
    bounds: Mapping[str, Any]
    cli: CliRole | None
    cli_type: Any
    required: bool
    envvar: str | None
    suite: bool
    drafting: bool
    in_argv: bool
    hash_neutral: bool
    needs: str | None


def setting(
    default: Any,
    help: str,
    *,
    cli: CliRole | None = "option",
    cli_type: Any = None,
    required: bool = False,
    envvar: str | None = None,
    suite: bool = False,
    drafting: bool = False,
    in_argv: bool = True,
    hash_neutral: bool = False,
    needs: str | None = None,
    **bounds: float,
) -> Any:
    """One row of the table: a dataclass field whose metadata holds its `Setting`."""
    declared = Setting(
        help,
        bounds,
        cli,
        cli_type,
        required,
        envvar,
        suite,
        drafting,
        in_argv,
        hash_neutral,
        needs,
    )
    return field(default=default, metadata={"setting": declared})


@dataclass(frozen=True, kw_only=True)
class EmulatorSettings:
    """Every setting of one emulated vLLM 0.32 server: identity, speed, acceptance, faults."""

    host: str = setting("127.0.0.1", "Interface to listen on.")
    port: int = setting(8000, "TCP port to listen on.", required=True, ge=1, le=65535)
    model: str = setting(
        DEFAULT_MODEL_NAME, "Served model name (also the model_name metric label).", min_length=1
    )
    speculative: bool = setting(
        True,
        "Emulate speculative decoding; False exposes no spec-decode series.",
        cli="parsed",
    )
    num_speculative_tokens: int = setting(
        DEFAULT_NUM_SPECULATIVE_TOKENS,
        "Draft tokens K per request per decode step.",
        ge=1,
        le=64,
    )
    acceptance: tuple[float, ...] | None = setting(
        None,
        "Conditional acceptance probability of each draft position given all earlier "
        "positions were accepted (length K, each in [0, 1]); None = 0.8, 0.75, 0.7, ...",
        cli="parsed",
        suite=True,
        drafting=True,
    )
    prefill_ms: float = setting(
        20.0,
        "Duration of a step that prefills new requests (TTFT at c=1).",
        suite=True,
        ge=0,
        le=_MAX_STEP_MS,
    )
    step_ms: float = setting(
        10.0,
        "Duration of a decode step holding one request.",
        suite=True,
        ge=0,
        le=_MAX_STEP_MS,
    )
    per_request_step_ms: float = setting(
        0.2,
        "Extra step duration per request in the step beyond the first.",
        suite=True,
        ge=0,
        le=_MAX_STEP_MS,
    )
    draft_step_ms: float = setting(
        0.0,
        "Extra duration of a step per draft token K (the drafter's forward passes); "
        "0 = drafting is free.",
        suite=True,
        hash_neutral=True,
        ge=0,
        le=_MAX_STEP_MS,
    )
    verify_token_ms: float = setting(
        0.0,
        "Extra duration per token the step verifies beyond --compute-knee-tokens "
        "(n requests × (1 + K) tokens): the compute-bound regime; 0 = verification is free.",
        suite=True,
        hash_neutral=True,
        ge=0,
        le=_MAX_STEP_MS,
    )
    compute_knee_tokens: int = setting(
        0,
        "Tokens a step verifies before each further one costs --verify-token-ms "
        "(below it a step is memory-bound).",
        suite=True,
        hash_neutral=True,
        ge=0,
    )
    num_speculative_tokens_per_batch_size: tuple[tuple[int, int, int], ...] | None = setting(
        None,
        "vLLM's dynamic K, [[start, end, K], ...]: inclusive ranges of the requests a step "
        "schedules (prefills included), the first at 1, sorted, non-overlapping; a gap or "
        "the tail repeats the previous K; each K is clamped to --num-speculative-tokens; the "
        "K chosen at a step is verified at the next; K = 0 verifies nothing but still pays one "
        "--draft-step-ms. JSON on the command line; None = every step drafts the maximum.",
        cli="parsed",
        suite=True,
        drafting=True,
        in_argv=False,
        hash_neutral=True,
    )
    max_model_len: int = setting(4096, "Context limit in fake tokens (prompt + output).", ge=2)
    max_num_seqs: int = setting(
        256, "Most requests running at once; the rest wait.", cli=None, ge=1
    )
    kv_cache_tokens: int = setting(
        262_144,
        "Fake KV-cache capacity in tokens, only for `vllm:kv_cache_usage_perc`.",
        cli=None,
        ge=1,
    )
    seed: int = setting(0, "Seed of acceptance draws and corruption.", suite=True)
    corrupt_rate: float = setting(
        0.0,
        "Fraction of prompts whose output token ids are altered from some position on (faults).",
        suite=True,
        ge=0,
        le=1,
    )
    per_request_spec_metrics: bool = setting(
        True, "Attach metrics.speculative_decoding to responses (vLLM's summary level)."
    )
    enable_per_request_metrics: bool = setting(
        False,
        "As vLLM's flag: attach the per-request timing metrics (queue, TTFT from scheduling, "
        "generation time, mean ITL, tokens/s) to responses, on the final usage chunk of a "
        "stream; times are the engine steps' own (the time model's), not the loop's.",
    )
    continuous_usage_stats: bool = setting(
        True, "Honour stream_options.continuous_usage_stats (off: usage on the last chunk)."
    )
    dev_mode: bool = setting(
        False,
        "Serve POST /reset_prefix_cache (vLLM's dev mode); else it answers 404.",
        envvar="VLLM_SERVER_DEV_MODE",
    )
    prefix_block_size: int = setting(
        16,
        "Tokens per prefix-cache block (prefix_cache_hits count whole blocks).",
        cli=None,
        ge=1,
    )
    prompt_log: str | None = setting(
        None,
        "Append each request's messages or prompt to this JSONL file.",
        suite=True,
        hash_neutral=True,
    )
    per_step_spec_metrics: bool = setting(
        False,
        "vLLM's `--per-request-spec-decode-metrics detailed`: add `per_step_accepted` "
        "and `per_step_drafted` (one entry per verify step, in order) to that object.",
        cli="parsed",
        suite=True,
        in_argv=False,
    )
    reasoning_tokens: int = setting(
        0,
        "Thinking span at the start of every answer, in tokens, <think> and </think> "
        "included; 0 = no reasoning.",
        suite=True,
        ge=0,
    )
    reasoning_acceptance: tuple[float, ...] | None = setting(
        None,
        "Conditional acceptance (length K) of steps that start inside the thinking span; "
        "None = the same as `acceptance`.",
        cli="parsed",
        suite=True,
        drafting=True,
    )
    reasoning_output: Literal["reasoning", "reasoning_content", "inline"] = setting(
        "reasoning",
        "How thinking is streamed: reasoning (delta.reasoning, vLLM 0.32), "
        "reasoning_content (older servers) or inline (<think> tags in the content).",
        cli_type=str,
        suite=True,
    )
    acceptance_decay: float = setting(
        1.0,
        "Factor on every conditional acceptance per --acceptance-decay-tokens of output "
        "position (1.0 = no decay).",
        suite=True,
        gt=0,
        le=1,
    )
    acceptance_decay_tokens: int = setting(
        256, "Output tokens per acceptance decay interval.", suite=True, ge=1
    )
    exporter_port: int = setting(
        0,
        "Also serve a GPU metrics exporter (`/metrics`, AMD or DCGM text) with a known power "
        "model on this port of the same host; 0 = no exporter.",
        suite=True,
        hash_neutral=True,
        ge=0,
        le=65535,
    )
    # `setting` makes a dataclass field; ruff sees a Literal alias as a mutable default.
    exporter_format: ExporterFormat = setting(  # noqa: RUF009
        "amd",
        "The exporter's text: amd (Device Metrics Exporter: gpu_energy_consumed µJ, "
        "gpu_package_power W) or dcgm (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION mJ, "
        "DCGM_FI_DEV_POWER_USAGE W).",
        cli_type=str,
        suite=True,
        hash_neutral=True,
        needs="exporter_port",
    )
    exporter_gpus: int = setting(
        8,
        "GPUs the exporter lists (ids 0 to N-1); each draws --power-idle-w all the time.",
        suite=True,
        hash_neutral=True,
        needs="exporter_port",
        ge=1,
        le=1024,
    )
    exporter_work_gpus: str = setting(
        "0",
        "Comma-separated ids of the listed GPUs the server's work lands on (e.g. 0,1,2,3); "
        "token energy is spread evenly over them.",
        suite=True,
        hash_neutral=True,
        needs="exporter_port",
    )
    power_idle_w: float = setting(
        100.0,
        "Watts each listed GPU draws whatever the load.",
        suite=True,
        hash_neutral=True,
        needs="exporter_port",
        ge=0,
    )
    energy_per_generated_token_j: float = setting(
        0.05,
        "Joules each generated (output) token adds, spread over the work GPUs.",
        suite=True,
        hash_neutral=True,
        needs="exporter_port",
        ge=0,
    )
    energy_per_drafted_token_j: float = setting(
        0.03,
        "Joules each drafted token adds, spread over the work GPUs.",
        suite=True,
        hash_neutral=True,
        needs="exporter_port",
        ge=0,
    )
    exporter_fault: ExporterFault = setting(  # noqa: RUF009
        "none",
        "A fault of the exporter from its Nth GET on (N = --exporter-fault-after-reads): reset "
        "(counters restart at 0), backwards (each read lower than the last), frozen "
        "(counters stop; power still moves), missing_gpu (the first work GPU leaves the "
        "listing), unreachable (503).",
        cli_type=str,
        suite=True,
        hash_neutral=True,
        needs="exporter_port",
    )
    exporter_fault_after_reads: int = setting(
        1,
        "The exporter GET (1-based, every GET counted) from which --exporter-fault holds.",
        suite=True,
        hash_neutral=True,
        needs="exporter_fault",
        ge=1,
    )


def declared(row: Field[Any]) -> Setting:
    """The `Setting` a table row declares."""
    return row.metadata["setting"]


def flag_of(name: str) -> str:
    """The `specbench emulate` flag of a setting: `--prefill-ms` for `prefill_ms`."""
    return "--" + name.replace("_", "-")


#: Each setting's type as the config holds it (annotations are text until evaluated).
TYPES: dict[str, Any] = get_type_hints(EmulatorSettings)
#: The table's rows, in order.
ROWS: tuple[Field[Any], ...] = fields(EmulatorSettings)


@dataclass(frozen=True)
class EmulatorOption:
    """One setting that `specbench emulate` passes through unchanged, as the CLI reads it."""

    name: str
    cli_type: type | Any
    default: Any
    help: str
    required: bool = False
    envvar: str | None = None


#: The settings `specbench emulate` passes through, required ones first (`--port`).
OPTIONS: tuple[EmulatorOption, ...] = tuple(
    sorted(
        (
            EmulatorOption(
                row.name,
                declared(row).cli_type or TYPES[row.name],
                row.default,
                declared(row).help,
                declared(row).required,
                declared(row).envvar,
            )
            for row in ROWS
            if declared(row).cli == "option"
        ),
        key=lambda option: not option.required,
    )
)
