"""`EmulatorConfig`: everything that shapes one emulated vLLM server, validated once.

The emulator must fail at start-up on a bad option, never mid-run, so every rule lives
here (each setting's type and bounds in the table of `options.py`, the rules between
settings on the config) and every violation becomes a one-line `SpecbenchError` naming
the option.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, create_model

from specbench.common.emulator_settings import ROWS, TYPES, EmulatorSettings, declared, flag_of
from specbench.common.errors import SpecbenchError
from specbench.common.k_schedule import check_schedule

# Conditional acceptance probabilities for positions beyond the third continue this
# ramp down (0.65, 0.60, ...), floored at 0.05, so any K has a usable default.
_DEFAULT_ACCEPTANCE_HEAD = (0.8, 0.75, 0.7)
_DEFAULTS = {row.name: row.default for row in ROWS}


def default_acceptance(num_speculative_tokens: int) -> tuple[float, ...]:
    """The conditional acceptance used when `--acceptance` is not given: 0.8, 0.75, 0.7, ..."""
    values = list(_DEFAULT_ACCEPTANCE_HEAD[:num_speculative_tokens])
    while len(values) < num_speculative_tokens:
        values.append(max(0.05, round(values[-1] - 0.05, 4)))
    return tuple(values)


@dataclass(frozen=True, kw_only=True)
class EmulatorConfig(EmulatorSettings):
    """One emulated vLLM 0.32 server: the table's settings (`options.py`), checked together.

    Build it with `make_emulator_config`, which validates each setting's type and bounds.
    """

    def __post_init__(self) -> None:
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
        if self.num_speculative_tokens_per_batch_size is not None:
            try:
                check_schedule(self.num_speculative_tokens_per_batch_size)
            except ValueError as error:
                raise ValueError(f"--num-speculative-tokens-per-batch-size: {error}") from None
        if self.reasoning_tokens == 1:
            raise ValueError(
                "--reasoning-tokens 1 cannot hold both <think> and </think>; give 0 or at least 2"
            )
        for row in ROWS:
            needs = declared(row).needs
            if (
                needs is not None
                and getattr(self, row.name) != row.default
                and getattr(self, needs) == _DEFAULTS[needs]
            ):
                raise ValueError(
                    f"{flag_of(row.name)} needs {flag_of(needs)} "
                    f"(left at {_DEFAULTS[needs]!r}, which turns it off)"
                )
        if self.exporter_port:
            if self.exporter_port == self.port:
                raise ValueError(
                    f"--exporter-port {self.exporter_port} is also --port; "
                    "give the exporter a port of its own"
                )
            parse_work_gpus(self.exporter_work_gpus, self.exporter_gpus)

    @property
    def work_gpus(self) -> tuple[int, ...]:
        """The listed GPUs the exporter puts the server's work on (`--exporter-work-gpus`)."""
        return parse_work_gpus(self.exporter_work_gpus, self.exporter_gpus)

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


def parse_work_gpus(text: str, gpus: int) -> tuple[int, ...]:
    """`--exporter-work-gpus 0,1,2,3` as ids, each listed (below `gpus`) and given once."""
    listed = f"--exporter-gpus {gpus} lists ids 0 to {gpus - 1}"
    ids: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not (part.isascii() and part.isdigit()):
            raise ValueError(
                f"--exporter-work-gpus {text!r}: expected comma-separated GPU ids, e.g. 0,1,2,3"
            )
        gpu = int(part)
        if gpu >= gpus:
            raise ValueError(f"--exporter-work-gpus {text!r}: GPU {gpu} is not listed ({listed})")
        if gpu in ids:
            raise ValueError(f"--exporter-work-gpus {text!r}: GPU {gpu} is given twice")
        ids.append(gpu)
    return tuple(ids)


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


def _checked_fields() -> dict[str, Any]:
    """Each setting's type, default and bounds, as pydantic checks them."""
    return {
        row.name: (
            TYPES[row.name],
            Field(default=row.default, description=declared(row).help, **declared(row).bounds),
        )
        for row in ROWS
    }


#: The table's settings as a pydantic model: what `make_emulator_config` validates with.
_CHECKED = create_model(
    "EmulatorConfig", __config__=ConfigDict(frozen=True, extra="forbid"), **_checked_fields()
)


def make_emulator_config(**options: Any) -> EmulatorConfig:
    """Build an `EmulatorConfig`, turning validation errors into one-line `SpecbenchError`s."""
    try:
        checked = _CHECKED(**options)
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise SpecbenchError(
            f"emulator option {location} ({flag_of(str(first['loc'][0]))}): {message}"
        ) from None
    try:
        return EmulatorConfig(**dict(checked))
    except ValueError as error:
        raise SpecbenchError(f"emulator options: {error}") from None
