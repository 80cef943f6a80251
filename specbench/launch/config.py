"""What one server config is: the model card's `vllm serve` settings, or the emulator's.

These models hold no host, port or executable: those are chosen at launch time, so one
config can be started anywhere. `specbench.launch.argv` turns a config into argv and env.

A server field that is a `vllm serve` flag declares it on the field (`server_role(...)` in
its `json_schema_extra`), and a field added after schema 2 declares itself hash-neutral
there too: the argv builder and the suite hash read those declarations, so a new typed
flag is one field. (A new field must be hash-neutral, with a default that changes
nothing, or every existing results directory refuses to resume; a unit test guards it.)
A suite's `[emulator]` table is derived from the emulator's settings table.
"""

from __future__ import annotations

from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    Field,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

from specbench.common.emulator_settings import ROWS, TYPES, declared
from specbench.common.k_schedule import check_schedule
from specbench.common.model import Frozen
from specbench.common.telemetry import check_setting

#: Speculative methods specbench knows how to describe; vLLM accepts more, add them here.
SpeculativeMethod = Literal["eagle3", "eagle", "ngram", "mtp", "draft_model"]
Engine = Literal["vllm", "emulator"]

#: `vllm serve` flags that set a parallel size, and the config field to use instead.
PARALLELISM_FLAGS = {
    "--tensor-parallel-size": "tensor_parallel_size",
    "-tp": "tensor_parallel_size",
    "--pipeline-parallel-size": "pipeline_parallel_size",
    "-pp": "pipeline_parallel_size",
    "--data-parallel-size": "data_parallel_size",
    "-dp": "data_parallel_size",
}

#: Methods whose drafts come from a separate checkpoint that must be named.
METHODS_NEEDING_DRAFT_MODEL = frozenset({"eagle3", "eagle", "draft_model"})
#: Methods that assert K equals `num_speculative_tokens` and crash under a K schedule
#: (vLLM 0.32). None is a `SpeculativeMethod` today; the check stands for when one is added.
METHODS_WITHOUT_SCHEDULE = frozenset({"suffix", "medusa", "ngram_gpu"})
#: vLLM's key for a K schedule inside `--speculative-config`.
SCHEDULE_KEY = "num_speculative_tokens_per_batch_size"


def server_role(
    flag: str | None = None,
    *,
    always: bool = False,
    after: str | None = None,
    hash_neutral: bool = False,
) -> dict[str, Any]:
    """A server field's `vllm serve` flag and hash role, for its `Field(json_schema_extra=...)`.

    The flag is written `flag VALUE` when the value is set and differs from the field's
    default (`always`: at the default too); a bool field writes the bare flag when true.
    Flags follow field order, except one written right `after` another field's flag (the
    card's order). `hash_neutral`: added after schema 2, left out of the suite hash at its
    default, so results directories written before the field existed still resume.
    """
    return {"flag": flag, "always": always, "after": after, "hash_neutral": hash_neutral}


def hash_neutral_defaults(model: type[BaseModel]) -> dict[str, object]:
    """The fields of `model` declared hash-neutral → their default (left out of the hash)."""
    return {
        name: info.get_default(call_default_factory=True)
        for name, info in model.model_fields.items()
        if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("hash_neutral")
    }


class SpeculativeConfig(Frozen):
    """vLLM's `--speculative-config` JSON; keys are written in the model card's order."""

    method: SpeculativeMethod = Field(description="Drafting method passed as `method`.")
    model: str | None = Field(
        default=None,
        description="Draft model (hub id or local path); required for eagle3, eagle, draft_model.",
    )
    num_speculative_tokens: int = Field(
        ge=1, description="Draft tokens proposed per verification step (k)."
    )
    attention_backend: str | None = Field(
        default=None, description="Attention backend of the draft model, e.g. TRITON_ATTN."
    )
    prompt_lookup_max: int | None = Field(
        default=None, ge=1, description="n-gram only: longest n-gram matched in the prompt."
    )
    prompt_lookup_min: int | None = Field(
        default=None, ge=1, description="n-gram only: shortest n-gram matched in the prompt."
    )
    num_speculative_tokens_per_batch_size: list[list[int]] | None = Field(
        default=None,
        description="vLLM's K schedule (dynamic K, vLLM >= 0.24): `[[start, end, K], ...]`, "
        "inclusive ranges of the requests one step schedules, the first at 1, sorted, "
        "non-overlapping, each K at most `num_speculative_tokens` (the maximum). A suite may "
        'write "advised" with `advised_from`: resolved to ranges when the suite loads.',
        json_schema_extra=server_role(hash_neutral=True),
    )
    extra: dict[str, Any] = Field(
        default_factory=dict,
        description="Further `--speculative-config` keys passed through verbatim, after the above.",
    )

    # Checked here, before vLLM spends minutes loading weights only to refuse the ranges
    # when its scheduler is built (or, for K above the maximum, silently clamp it).
    @field_validator(SCHEDULE_KEY)
    @classmethod
    def _check_schedule(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return value
        ranges = check_schedule(value)
        method = info.data.get("method")
        if method in METHODS_WITHOUT_SCHEDULE:
            raise ValueError(
                f"method {method!r} asserts K equals num_speculative_tokens and crashes under "
                "a K schedule (vLLM 0.32): drop the schedule or change the method"
            )
        maximum = info.data.get("num_speculative_tokens")
        above = [list(entry) for entry in ranges if maximum is not None and entry[2] > maximum]
        if above:
            raise ValueError(
                f"range {above[0]} has K = {above[0][2]}, above num_speculative_tokens = "
                f"{maximum} (the maximum): vLLM would clamp it to {maximum}, so the schedule "
                "would not run as written; lower that K or raise num_speculative_tokens"
            )
        return value

    @field_validator("extra")
    @classmethod
    def _schedule_not_in_extra(cls, value: dict[str, Any], info: ValidationInfo) -> Any:
        if SCHEDULE_KEY in value:
            given = "both as the field and inside extra" if info.data.get(SCHEDULE_KEY) else ""
            raise ValueError(
                f"{SCHEDULE_KEY} {given or 'inside extra'}: set the schedule once, as "
                f"speculative.{SCHEDULE_KEY}, where it is checked before the server starts"
            )
        return value

    @model_validator(mode="after")
    def _check_method_fields(self) -> SpeculativeConfig:
        if self.method in METHODS_NEEDING_DRAFT_MODEL and not self.model:
            raise ValueError(f"method {self.method!r} needs `model` (the draft checkpoint)")
        if self.method != "ngram" and (
            self.prompt_lookup_max is not None or self.prompt_lookup_min is not None
        ):
            raise ValueError("prompt_lookup_min/max apply only to method 'ngram'")
        if (
            self.prompt_lookup_max is not None
            and self.prompt_lookup_min is not None
            and self.prompt_lookup_min > self.prompt_lookup_max
        ):
            raise ValueError("prompt_lookup_min must not exceed prompt_lookup_max")
        clash = sorted(set(self.extra) & set(type(self).model_fields))
        if clash:
            raise ValueError(f"extra repeats named keys {clash}: set them as fields instead")
        return self


class _EmulatorTable(Frozen):
    """The base of `EmulatorOverrides`: its rules across settings (its fields are derived)."""

    if TYPE_CHECKING:  # the fields come from the table: mypy reads each as Any

        def __getattr__(self, name: str) -> Any: ...

    @model_validator(mode="after")
    def _check_acceptance(self) -> _EmulatorTable:
        for name in ("acceptance", "reasoning_acceptance"):
            values = getattr(self, name)
            if values is not None:
                if not values:
                    raise ValueError(f"{name} must list at least one probability")
                if any(not 0.0 <= p <= 1.0 for p in values):
                    raise ValueError(f"{name} probabilities must lie in [0, 1]")
        return self

    # Checked here, so that a bad schedule stops the suite before any server starts.
    @field_validator("num_speculative_tokens_per_batch_size", check_fields=False)
    @classmethod
    def _check_schedule(cls, value: Any) -> Any:
        if value is not None:
            check_schedule(value)
        return value


def _suite_type(kind: Any) -> Any:
    """A setting's type in a suite: optional (None keeps the emulator's default), a TOML
    array for a tuple. A bool stays a bool, at the emulator's default (no third state)."""
    if kind is bool:
        return bool
    if get_origin(kind) in (Union, UnionType):  # `X | None`: X
        (kind,) = [arg for arg in get_args(kind) if arg is not type(None)]
    if get_origin(kind) is tuple:
        item = get_args(kind)[0]
        if get_origin(item) is tuple:  # a K schedule's ranges: TOML arrays, checked as triples
            item = list[get_args(item)[0]]  # type: ignore[misc]
        kind = list[item]  # type: ignore[valid-type]
    return kind | None


def _suite_settings() -> dict[str, Any]:
    """The `[emulator]` fields: the emulator's settings declared `suite=True`, in table order."""
    derived: dict[str, Any] = {}
    for row in ROWS:
        declared_setting = declared(row)
        if not declared_setting.suite:
            continue
        kind = _suite_type(TYPES[row.name])
        derived[row.name] = (
            kind,
            Field(
                default=row.default if kind is bool else None,
                description=declared_setting.help,
                json_schema_extra={"hash_neutral": declared_setting.hash_neutral},
                **declared_setting.bounds,
            ),
        )
    return derived


if TYPE_CHECKING:  # mypy sees the base, whose fields it reads as Any
    EmulatorOverrides = _EmulatorTable
else:
    EmulatorOverrides = create_model(
        "EmulatorOverrides",
        __base__=_EmulatorTable,
        __doc__="A suite server's `[emulator]` table: `specbench emulate` settings "
        "(`common/emulator_settings.py`); None keeps the emulator's default.",
        __module__=__name__,
        **_suite_settings(),
    )


class ServerConfig(Frozen):
    """One server config of a suite: everything needed to start it, bar host and port."""

    engine: Engine = Field(default="vllm", description="`vllm` (real server) or `emulator`.")
    baseline: bool = Field(
        default=False, description="The suite's reference config (usually speculation off)."
    )
    model: str = Field(description="Target model: hub id, or local path (resolved at load).")
    served_model_name: str | None = Field(
        default=None,
        description="Name the API serves the model under; default: `model`.",
        json_schema_extra=server_role("--served-model-name"),
    )
    # TP is always written (cards state it); PP and DP only when they differ from 1.
    tensor_parallel_size: int = Field(
        default=1,
        ge=1,
        description="--tensor-parallel-size.",
        json_schema_extra=server_role("--tensor-parallel-size", always=True),
    )
    pipeline_parallel_size: int = Field(
        default=1,
        ge=1,
        description="--pipeline-parallel-size (written only when not 1).",
        json_schema_extra=server_role("--pipeline-parallel-size", hash_neutral=True),
    )
    data_parallel_size: int = Field(
        default=1,
        ge=1,
        description="--data-parallel-size.",
        json_schema_extra=server_role("--data-parallel-size"),
    )
    max_model_len: int | None = Field(
        default=None,
        ge=1,
        description="--max-model-len.",
        json_schema_extra=server_role("--max-model-len", after="moe_backend"),
    )
    block_size: int | None = Field(
        default=None,
        ge=1,
        description="--block-size (KV block).",
        json_schema_extra=server_role("--block-size"),
    )
    attention_backend: str | None = Field(
        default=None,
        description="--attention-backend.",
        json_schema_extra=server_role("--attention-backend"),
    )
    moe_backend: str | None = Field(
        default=None, description="--moe-backend.", json_schema_extra=server_role("--moe-backend")
    )
    gpu_memory_utilization: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="--gpu-memory-utilization, a fraction.",
        json_schema_extra=server_role("--gpu-memory-utilization"),
    )
    trust_remote_code: bool = Field(
        default=False,
        description="--trust-remote-code.",
        json_schema_extra=server_role("--trust-remote-code", after="served_model_name"),
    )
    extra_args: list[str] = Field(
        default_factory=list,
        description="Further `vllm serve` arguments, appended verbatim before the spec config.",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Environment variables set for the server, e.g. VLLM_ROCM_USE_AITER=1.",
    )
    speculative: SpeculativeConfig | None = Field(
        default=None, description="Speculative decoding; absent means speculation off."
    )
    schedule_with_data_parallel: bool = Field(
        default=False,
        description="Allow a K schedule (`speculative.num_speculative_tokens_per_batch_size`) "
        "with data_parallel_size > 1, knowing that vLLM 0.32 silently drops it there (every "
        "step then drafts the maximum); without it that pair is refused at load.",
        json_schema_extra=server_role(hash_neutral=True),
    )
    per_request_spec_decode_metrics: bool | Literal["summary", "detailed"] = Field(
        default=True,
        description=(
            "Add `--per-request-spec-decode-metrics summary` when speculating (true or "
            '"summary"; vLLM >= 0.29: the launch leaves it out, and says so, on an older one). '
            '"detailed" adds the per-step '
            "accepted/drafted arrays, which count steps exactly for the official AL's "
            "merged-chunk check."
        ),
    )
    emulator: EmulatorOverrides | None = Field(
        default=None, description="Emulator settings; only with engine = 'emulator'."
    )
    vllm_version: str | None = Field(
        default=None,
        description="The vLLM release the server must be (`0.32.0`; a local label such as "
        "`+rocm` in the server's version is allowed): preflight asks a server to start "
        "(`vllm --version`) and an attached one (GET /version) and refuses another. "
        "None: any.",
        json_schema_extra=server_role(hash_neutral=True),
    )

    launcher: str | None = Field(
        default=None,
        description="Command prefix the server is started under, ending with the image: "
        "'docker run --rm --device=/dev/kfd --device=/dev/dri --group-add video --ipc=host "
        "--network=host -v /models:/models rocm/vllm:TAG' (docker or podman, host network; "
        "specbench adds --name and the env's -e NAME), or 'apptainer exec --rocm vllm.sif'. "
        "specbench appends `vllm serve ...` (the image's vllm; --vllm-bin is not used). "
        "Preflight checks the runtime, the image and `vllm --version` inside; the manifest "
        "records the image's id and digests. None: vllm on this machine.",
        json_schema_extra=server_role(hash_neutral=True),
    )

    gpu_telemetry: str = Field(
        default="auto",
        description='Where the GPU board energy of each cell is read (docs/energy.md): "amdsmi", '
        '"nvml", an exporter\'s "http://HOST:PORT/metrics" (AMD Device Metrics Exporter or '
        'DCGM), "off", or "auto": amdsmi, then nvml, the first that reads the server\'s GPUs, '
        "else off with the reason recorded.",
        json_schema_extra=server_role(hash_neutral=True),
    )
    gpu_ids: list[int] | None = Field(
        default=None,
        description="The GPUs whose energy is counted, in the source's numbering (an attached "
        "server's, which specbench never launches). None: the launch's *_VISIBLE_DEVICES, "
        "else the first TP × PP × DP devices.",
        json_schema_extra=server_role(hash_neutral=True),
    )

    @field_validator("gpu_telemetry")
    @classmethod
    def _known_telemetry(cls, value: str) -> str:
        problem = check_setting(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("gpu_ids")
    @classmethod
    def _distinct_gpu_ids(cls, value: list[int] | None) -> list[int] | None:
        if value is None:
            return value
        if not value:
            raise ValueError("gpu_ids is empty: name the server's GPUs, or leave it out")
        if any(i < 0 for i in value):
            raise ValueError(f"gpu_ids {value}: a GPU id is 0 or more")
        repeated = sorted({i for i in value if value.count(i) > 1})
        if repeated:
            raise ValueError(f"gpu_ids {value}: {repeated} named twice; each GPU once")
        return value

    @field_validator("env", mode="before")
    @classmethod
    def _numbers_as_text(cls, value: Any) -> Any:
        # `VLLM_CPU_KVCACHE_SPACE = 1` in TOML is an int; the environment wants text.
        if isinstance(value, dict):
            return {
                key: str(item)
                if isinstance(item, int | float) and not isinstance(item, bool)
                else item
                for key, item in value.items()
            }
        return value

    @field_validator("extra_args")
    @classmethod
    def _no_parallelism_in_extra_args(cls, value: list[str]) -> list[str]:
        # The GPU count (the divisor of tok/s/GPU) is read from the fields: a size hidden
        # in extra_args would make every per-GPU figure wrong by that factor.
        for arg in value:
            name = arg.split("=", 1)[0]
            field = PARALLELISM_FLAGS.get(name.replace("_", "-") if name.startswith("--") else name)
            if field is not None:
                raise ValueError(
                    f"{arg!r} sets the GPU count: give `{field} = N` instead of passing it in "
                    "extra_args, so tok/s/GPU divides by it"
                )
        return value

    @model_validator(mode="after")
    def _check_engine_fields(self) -> ServerConfig:
        if self.engine == "vllm" and self.emulator is not None:
            raise ValueError("an `emulator` table needs engine = 'emulator'")
        if self.engine == "emulator" and self.launcher is not None:
            raise ValueError("a `launcher` starts vllm in a container: it needs engine = 'vllm'")
        return self

    @model_validator(mode="after")
    def _check_schedule_placement(self) -> ServerConfig:
        schedule = self.speculative and self.speculative.num_speculative_tokens_per_batch_size
        if not schedule:
            return self
        if self.data_parallel_size > 1 and not self.schedule_with_data_parallel:
            raise _field_error(
                ("speculative", SCHEDULE_KEY),
                f"vLLM 0.32 silently drops a K schedule when data_parallel_size > 1 (here "
                f"{self.data_parallel_size}): every step would draft the maximum; set "
                "schedule_with_data_parallel = true to measure it anyway, or use DP 1",
            )
        if self.emulator is not None and self.emulator.num_speculative_tokens_per_batch_size:
            raise _field_error(
                ("speculative", SCHEDULE_KEY),
                f"the schedule is also given as emulator.{SCHEDULE_KEY}: give it once, here "
                "(vLLM and the emulator both read it from the speculative table)",
            )
        return self

    @property
    def api_model_name(self) -> str:
        """The model id clients send and `/v1/models` lists."""
        return self.served_model_name or self.model

    @property
    def gpus(self) -> int:
        """GPUs the server occupies (TP × PP × DP): the divisor of tok/s/GPU."""
        return self.tensor_parallel_size * self.pipeline_parallel_size * self.data_parallel_size

    @property
    def is_speculative(self) -> bool:
        """Whether the server drafts tokens."""
        return self.speculative is not None

    @property
    def k_schedule(self) -> list[list[int]] | None:
        """The K schedule the server runs: its speculative table's, else (an emulator's)
        `[emulator]` setting; None without speculation, so a baseline never drafts."""
        if self.speculative is None:
            return None
        if self.speculative.num_speculative_tokens_per_batch_size is not None:
            return self.speculative.num_speculative_tokens_per_batch_size
        if self.emulator is not None and self.emulator.num_speculative_tokens_per_batch_size:
            return [list(entry) for entry in self.emulator.num_speculative_tokens_per_batch_size]
        return None


def _field_error(loc: tuple[str, ...], message: str) -> ValidationError:
    """A validation error at `loc` below the model, raised from a rule across its fields, so
    the one-line message names the field (`servers.x.speculative.…`), not the table."""
    detail = InitErrorDetails(
        type=PydanticCustomError("value_error", "{message}", {"message": message}),
        loc=loc,
        input=None,
    )
    return ValidationError.from_exception_data("ServerConfig", [detail])
