"""`EmulatorConfig`: everything that shapes one emulated vLLM server, validated once.

The emulator must fail at start-up on a bad option, never mid-run, so every rule lives
here and every violation becomes a one-line `SpecbenchError` naming the option.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from specbench.common.errors import SpecbenchError
from specbench.emulator.options import BY_NAME

# Conditional acceptance probabilities for positions beyond the third continue this
# ramp down (0.65, 0.60, ...), floored at 0.05, so any K has a usable default.
_DEFAULT_ACCEPTANCE_HEAD = (0.8, 0.75, 0.7)


def default_acceptance(num_speculative_tokens: int) -> tuple[float, ...]:
    """The conditional acceptance used when `--acceptance` is not given: 0.8, 0.75, 0.7, ..."""
    values = list(_DEFAULT_ACCEPTANCE_HEAD[:num_speculative_tokens])
    while len(values) < num_speculative_tokens:
        values.append(max(0.05, round(values[-1] - 0.05, 4)))
    return tuple(values)


def _field(name: str, **constraints: Any) -> Any:
    """A field whose default and description are the option table's (`options.py`)."""
    option = BY_NAME[name]
    return Field(default=option.default, description=option.help, **constraints)


class EmulatorConfig(BaseModel):
    """One emulated vLLM 0.32 server: identity, speed model, acceptance process, faults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = _field("host")
    port: int = _field("port", ge=1, le=65535)
    model: str = _field("model", min_length=1)
    speculative: bool = Field(
        default=True,
        description="Emulate speculative decoding; False exposes no spec-decode series.",
    )
    num_speculative_tokens: int = _field("num_speculative_tokens", ge=1, le=64)
    acceptance: tuple[float, ...] | None = Field(
        default=None,
        description=(
            "Conditional acceptance probability of each draft position given all earlier "
            "positions were accepted (length K, each in [0, 1]); None = 0.8, 0.75, 0.7, ..."
        ),
    )
    prefill_ms: float = _field("prefill_ms", ge=0.0, le=600_000.0)
    step_ms: float = _field("step_ms", ge=0.0, le=600_000.0)
    per_request_step_ms: float = _field("per_request_step_ms", ge=0.0, le=600_000.0)
    max_model_len: int = _field("max_model_len", ge=2)
    max_num_seqs: int = Field(
        default=256, ge=1, description="Most requests running at once; the rest wait."
    )
    kv_cache_tokens: int = Field(
        default=262_144,
        ge=1,
        description="Fake KV-cache capacity in tokens, only for `vllm:kv_cache_usage_perc`.",
    )
    seed: int = _field("seed")
    corrupt_rate: float = _field("corrupt_rate", ge=0.0, le=1.0)
    per_request_spec_metrics: bool = _field("per_request_spec_metrics")
    enable_per_request_metrics: bool = _field("enable_per_request_metrics")
    continuous_usage_stats: bool = _field("continuous_usage_stats")
    dev_mode: bool = _field("dev_mode")
    prefix_block_size: int = Field(
        default=16,
        ge=1,
        description="Tokens per prefix-cache block (prefix_cache_hits count whole blocks).",
    )
    prompt_log: str | None = _field("prompt_log")
    per_step_spec_metrics: bool = Field(
        default=False,
        description=(
            "vLLM's `--per-request-spec-decode-metrics detailed`: add `per_step_accepted` "
            "and `per_step_drafted` (one entry per verify step, in order) to that object."
        ),
    )
    reasoning_tokens: int = _field("reasoning_tokens", ge=0)
    reasoning_acceptance: tuple[float, ...] | None = Field(
        default=None,
        description=(
            "Conditional acceptance (length K) of steps that start inside the thinking span; "
            "None = the same as `acceptance`."
        ),
    )
    reasoning_output: Literal["reasoning", "reasoning_content", "inline"] = _field(
        "reasoning_output"
    )
    acceptance_decay: float = _field("acceptance_decay", gt=0.0, le=1.0)
    acceptance_decay_tokens: int = _field("acceptance_decay_tokens", ge=1)

    @model_validator(mode="after")
    def _check_acceptance(self) -> EmulatorConfig:
        for flag, values in (
            ("--acceptance", self.acceptance),
            ("--reasoning-acceptance", self.reasoning_acceptance),
        ):
            if values is None:
                continue
            if len(values) != self.num_speculative_tokens:
                raise ValueError(
                    f"{flag} has {len(values)} values but "
                    f"--num-speculative-tokens is {self.num_speculative_tokens}; "
                    "give one value per draft position"
                )
            for value in values:
                if not 0.0 <= value <= 1.0:
                    raise ValueError(f"{flag} value {value} is outside [0, 1]")
        if self.reasoning_tokens == 1:
            raise ValueError(
                "--reasoning-tokens 1 cannot hold both <think> and </think>; give 0 or at least 2"
            )
        return self

    @property
    def conditional_acceptance(self) -> tuple[float, ...]:
        """Per-position conditional acceptance probabilities actually used."""
        if self.acceptance is not None:
            return self.acceptance
        return default_acceptance(self.num_speculative_tokens)

    @property
    def thinking_acceptance(self) -> tuple[float, ...]:
        """Conditional acceptance of steps that start inside the thinking span."""
        if self.reasoning_acceptance is not None:
            return self.reasoning_acceptance
        return self.conditional_acceptance

    @property
    def expected_acceptance_length(self) -> float:
        """1 + Σ_i Π_{j≤i} p_j: the step-weighted AL the counters converge to."""
        total, survive = 1.0, 1.0
        for probability in self.conditional_acceptance:
            survive *= probability
            total += survive
        return total


def parse_acceptance(text: str, option: str = "--acceptance") -> tuple[float, ...]:
    """Parse `--acceptance 0.8,0.75,0.7` into floats, with a one-line error on bad input."""
    parts = [part.strip() for part in text.split(",")]
    if not parts or any(part == "" for part in parts):
        raise SpecbenchError(
            f"{option} {text!r}: expected comma-separated numbers in [0, 1], e.g. 0.8,0.75,0.7"
        )
    values: list[float] = []
    for part in parts:
        try:
            values.append(float(part))
        except ValueError:
            raise SpecbenchError(
                f"{option} {text!r}: {part!r} is not a number; expected e.g. 0.8,0.75,0.7"
            ) from None
    return tuple(values)


def make_emulator_config(**options: Any) -> EmulatorConfig:
    """Build an `EmulatorConfig`, turning validation errors into one-line `SpecbenchError`s."""
    try:
        return EmulatorConfig(**options)
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        flag = "--" + location.replace("_", "-")
        where = f"emulator option {location} ({flag}): " if location else "emulator options: "
        raise SpecbenchError(f"{where}{message}") from None
