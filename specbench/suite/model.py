"""The suite: server configs × workloads × concurrencies × launches × repeats, and its
expansion.

A suite file has `[target]` (model and shared server settings), `[servers.<name>]`
(merged over the target; exactly one has `baseline = true`), `[[workloads]]` and an
optional `[slurm]` (where `run --executor slurm` submits; not part of what is measured) and
an optional `[slo]` (latency bounds the report judges capacity by; not measured either).
Loading and merging live in `specbench.suite.load`; this module holds the validated result.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic import Field, field_validator, model_validator

from specbench.common.defaults import MAX_CONCURRENCY, REQUEST_TIMEOUT_S
from specbench.common.model import Frozen
from specbench.common.naming import cell_key, check_name, selection_key, slug
from specbench.launch.config import ServerConfig
from specbench.metrics.declarations import targeted_phrase
from specbench.stats.launches import MIN_LAUNCHES

#: What a workload field is to its cells, declared once on the field (`role(...)` in its
#: `json_schema_extra`); every list of fields below derives from it.
#:
#: - cells: chooses which cells exist (name, concurrency, repeats); never an identity.
#: - compared: changes what a request measures; workloads equal in these (whatever their
#:   selection) are one comparable workload in tables.
#: - selection: which rows are measured.
#: - measured: how a cell is measured (warmup, client, stopping, the server's context).
#: - unmeasured: recorded, but changes no figure (timeouts, what is kept, checks).
#:
#: compared, selection and measured make a cell's identity: a results directory refuses to
#: resume a workload whose value of one of them changed. `part` groups the settings that
#: travel together (`request`: how each request is sent; `stopping`: when a cell stops);
#: `hash_neutral`: added after schema 2, left out of the suite hash and of the recorded
#: identity at its default, so results measured before the field existed still resume.
#: `in_hash = False`: never in the suite hash (how many launches: a campaign grown by a
#: launch is the same campaign).
LaunchOrder = Literal["interleaved", "random"]
WorkloadRole = Literal["cells", "compared", "selection", "measured", "unmeasured"]
SettingsPart = Literal["request", "stopping"]


def role(
    kind: WorkloadRole,
    *,
    part: SettingsPart | None = None,
    hash_neutral: bool = False,
    in_hash: bool = True,
) -> dict[str, Any]:
    """A workload field's role, for its `Field(json_schema_extra=...)`."""
    return {"role": kind, "part": part, "hash_neutral": hash_neutral, "in_hash": in_hash}


#: How a suite-level field enters the suite hash, declared on the field (`suite_hash(...)`):
#: `neutral`, added later and left out at its default; `left_out`, never in it.
SuiteHashRole = Literal["neutral", "left_out"]


def suite_hash_role(kind: SuiteHashRole) -> dict[str, Any]:
    """A suite field's place in the suite hash, for its `Field(json_schema_extra=...)`."""
    return {"suite_hash": kind}


#: Launches a precision-targeted point measures at least: a Student t interval over fewer
#: launch values is too wide (t(0.975, 1) = 12.7) to say anything. The same minimum as the
#: gate's launch-level rule and a calibrating campaign's (`stats.launches.MIN_LAUNCHES`).
MIN_PRECISION_LAUNCHES = MIN_LAUNCHES
#: The default cap on a precision-targeted point's launches (`max_launches`).
DEFAULT_MAX_LAUNCHES = 6


def check_launch_cap(value: int) -> int:
    """A cap on launches below `MIN_PRECISION_LAUNCHES` is refused, with why."""
    if value < MIN_PRECISION_LAUNCHES:
        raise ValueError(
            f"must be at least {MIN_PRECISION_LAUNCHES}: precision needs at least "
            f"{MIN_PRECISION_LAUNCHES} launches (got {value})"
        )
    return value


class WorkloadSpec(Frozen):
    """One dataset selection and how its requests are sent, run at each concurrency.

    Its key (`name`, else the selection, e.g. `speed-bench-qualitative+coding`) is the
    results folder of its cells; see `workload_keys`.
    """

    dataset: str = Field(
        description=(
            "Dataset spec: speed-bench:CONFIG, speed-bench:CONFIG:PATH, mt-bench[:PATH], "
            "or a custom JSONL path (relative paths resolve against the suite's folder)."
        ),
        json_schema_extra=role("compared"),
    )
    categories: list[str] | None = Field(
        default=None,
        description="Keep only these categories; None keeps all.",
        json_schema_extra=role("selection"),
    )
    entropy_tiers: list[str] | None = Field(
        default=None,
        description="SPEED-Bench throughput tiers to keep; None keeps all.",
        json_schema_extra=role("selection"),
    )
    accept_partial: bool = Field(
        default=False,
        description=(
            "Measure a SPEED-Bench config `data prepare --skip-gated` wrote without some rows "
            "(marked partial in prepared.json); False refuses it. The report lists the rows "
            "left out."
        ),
        json_schema_extra=role("selection", hash_neutral=True),
    )
    num_prompts: int | None = Field(
        default=None,
        ge=1,
        description="Seeded stratified sample size; None sends every row.",
        json_schema_extra=role("compared"),
    )
    concurrency: list[int] = Field(
        min_length=1,
        description="Requests in flight, one measured cell per value.",
        json_schema_extra=role("cells"),
    )
    max_tokens: int = Field(
        ge=1,
        description="Output cap per request (max_tokens).",
        json_schema_extra=role("compared", part="request"),
    )
    temperature: float = Field(
        default=0.0,
        ge=0,
        allow_inf_nan=False,
        description="Sampling temperature.",
        json_schema_extra=role("compared", part="request"),
    )
    warmup: int = Field(
        default=0,
        ge=0,
        description="Requests sent and discarded before each measured window.",
        json_schema_extra=role("measured"),
    )
    max_model_len: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Start the servers with this --max-model-len for this workload (e.g. 40960 "
            "for 32k prompts); None keeps each server's own."
        ),
        json_schema_extra=role("measured"),
    )
    repeats: int | None = Field(
        default=None,
        ge=1,
        description="Repeats of this workload (passes within each launch); None uses the suite's.",
        json_schema_extra=role("cells"),
    )
    launches: int | None = Field(
        default=None,
        ge=1,
        description="Launches (fresh server starts) that measure this workload's cells; None "
        "uses the suite's.",
        json_schema_extra=role("cells", in_hash=False),
    )
    max_launches: int | None = Field(
        default=None,
        description="With `precision`: the most launches a point of this workload may take "
        "before it stops without the precision (cap reached); None uses the suite's.",
        json_schema_extra=role("cells", in_hash=False),
    )
    api: Literal["chat", "completions"] = Field(
        default="chat",
        description="chat (messages) or completions (raw prompts).",
        json_schema_extra=role("compared", part="request"),
    )
    client: Literal["aiohttp", "openai"] = Field(
        default="aiohttp",
        description="aiohttp (the hot path) or openai (the official SDK).",
        json_schema_extra=role("measured", part="request"),
    )
    ignore_eos: bool = Field(
        default=False,
        description="Ask the server to ignore EOS (fixed output lengths).",
        json_schema_extra=role("compared", part="request"),
    )
    seed: int = Field(
        default=0,
        description="Seed of the stratified num_prompts sample.",
        json_schema_extra=role("compared"),
    )
    dataset_revision: str | None = Field(
        default=None,
        description="Hub revision of SPEED-Bench; None uses the pinned one.",
        json_schema_extra=role("compared"),
    )
    tokenizer: str | None = Field(
        default=None,
        description="Tokenizer folder for an exact context-length check.",
        json_schema_extra=role("unmeasured"),
    )
    strict: bool = Field(
        default=False,
        description="Fail when num_prompts exceeds the rows (default: use all).",
        json_schema_extra=role("unmeasured"),
    )
    history: Literal["streamed_text", "decoded"] = Field(
        default="streamed_text",
        description=(
            "How later turns replay the target's earlier answers: streamed_text (as "
            "streamed), or decoded (tokenizer.decode of the answer's token ids, special "
            "tokens kept, as NVIDIA specdec_bench does; needs `tokenizer`)."
        ),
        json_schema_extra=role("compared", part="request", hash_neutral=True),
    )
    save_outputs: bool | None = Field(
        default=None,
        description="Keep output text and token ids in requests.jsonl; None: at temperature 0.",
        json_schema_extra=role("unmeasured"),
    )
    request_timeout_s: float = Field(
        default=REQUEST_TIMEOUT_S,
        gt=0,
        allow_inf_nan=False,
        description="Seconds without data before a request fails.",
        json_schema_extra=role("unmeasured", part="request"),
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Further request-body fields sent verbatim.",
        json_schema_extra=role("compared", part="request"),
    )
    per_chunk_usage: bool = Field(
        default=True,
        description="Ask for continuous_usage_stats and return_token_ids on every chunk "
        "(exact tokens per chunk). False: usage on the final chunk only; output tokens stay "
        "exact, per-chunk counts become estimates; use where per-request spec metrics give AL.",
        json_schema_extra=role("measured", part="request", hash_neutral=True),
    )
    precision: float | None = Field(
        default=None,
        gt=0,
        lt=1,
        description=(
            f"Stop a cell once the 95% CI half-width of {targeted_phrase()}, relative to "
            "each value, is at most this (e.g. 0.02); None measures every conversation."
        ),
        json_schema_extra=role("measured", part="stopping", hash_neutral=True),
    )
    min_conversations: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Conversations a precision-targeted cell measures before it may stop; None: "
            "3 per category."
        ),
        json_schema_extra=role("measured", part="stopping", hash_neutral=True),
    )
    full_set_concurrency: int | None = Field(
        default=None,
        description=(
            "With `precision`: the concurrency whose cell measures every conversation "
            "(the full-set acceptance); the others stop at the precision."
        ),
        json_schema_extra=role("measured", part="stopping", hash_neutral=True),
    )
    name: str | None = Field(
        default=None,
        description=(
            "Results folder of this workload; default: the dataset selection "
            "(speed-bench-qualitative, +categories or tiers when selected)."
        ),
        json_schema_extra=role("cells"),
    )

    @field_validator("max_launches")
    @classmethod
    def _cap_allows_precision(cls, value: int | None) -> int | None:
        return None if value is None else check_launch_cap(value)

    @field_validator("name")
    @classmethod
    def _folder_name(cls, value: str | None) -> str | None:
        return None if value is None else check_name("name", value)

    @property
    def selection(self) -> str:
        """The dataset selection's key: dataset, plus categories or tiers when selected."""
        return selection_key(self.dataset, self.categories or (), self.entropy_tiers or ())

    @property
    def keeps_outputs(self) -> bool:
        """Whether requests.jsonl keeps outputs: `save_outputs`, else at temperature 0."""
        return self.temperature == 0 if self.save_outputs is None else self.save_outputs

    @field_validator("concurrency")
    @classmethod
    def _positive_unique(cls, values: list[int]) -> list[int]:
        if any(value < 1 or value > MAX_CONCURRENCY for value in values):
            raise ValueError(
                f"concurrency values must be between 1 and {MAX_CONCURRENCY:,} (requests in "
                "flight from one client process)"
            )
        if len(set(values)) != len(values):
            raise ValueError("concurrency values must be distinct")
        return values

    @model_validator(mode="after")
    def _one_selector(self) -> WorkloadSpec:
        if self.categories is not None and self.entropy_tiers is not None:
            raise ValueError("give categories or entropy_tiers, not both")
        if self.history == "decoded" and self.tokenizer is None:
            raise ValueError('history = "decoded" needs tokenizer (the target\'s tokenizer folder)')
        if self.precision is None and (
            self.min_conversations is not None or self.full_set_concurrency is not None
        ):
            raise ValueError("min_conversations and full_set_concurrency need precision")
        if (
            self.full_set_concurrency is not None
            and self.full_set_concurrency not in self.concurrency
        ):
            raise ValueError(
                f"full_set_concurrency {self.full_set_concurrency} is not one of the "
                f"concurrencies {self.concurrency}"
            )
        return self

    def precision_at(self, concurrency: int) -> float | None:
        """The precision target of the cell at `concurrency` (None: every conversation)."""
        if concurrency == self.full_set_concurrency:
            return None
        return self.precision

    def without_stopping(self) -> WorkloadSpec:
        """This workload with every stopping setting at its default: all conversations."""
        fields = WorkloadSpec.model_fields
        return self.model_copy(
            update={
                name: fields[name].get_default(call_default_factory=True)
                for name in STOPPING_FIELDS
            }
        )


def fields_where(**wanted: object) -> tuple[str, ...]:
    """Workload fields whose declared role matches every `wanted` key, in field order."""
    found = []
    for name, info in WorkloadSpec.model_fields.items():
        declared = info.json_schema_extra
        assert isinstance(declared, dict), f"WorkloadSpec.{name} declares no role"
        if all(declared.get(key) == value for key, value in wanted.items()):
            found.append(name)
    return tuple(found)


#: Fields that never tell two workloads' cells apart (they choose which cells exist).
NOT_IDENTITY = frozenset(fields_where(role="cells"))
#: Fields that change what a request measures: workloads equal in these (whatever their
#: selection) are one comparable workload in tables.
MEASURED_FIELDS = fields_where(role="compared")
#: Fields of a cell's identity: an existing workload whose value changed is refused.
IDENTITY_FIELDS = tuple(
    name
    for name in WorkloadSpec.model_fields
    if name not in NOT_IDENTITY | set(fields_where(role="unmeasured"))
)
#: When a cell stops (`part = "stopping"`); all off at their defaults.
STOPPING_FIELDS = fields_where(part="stopping")
#: Workload fields added after schema 2 → their default, left out of the suite hash.
HASH_NEUTRAL_WORKLOAD_DEFAULTS: dict[str, object] = {
    name: WorkloadSpec.model_fields[name].get_default(call_default_factory=True)
    for name in fields_where(hash_neutral=True)
}
#: Workload fields never in the suite hash, whatever their value.
WORKLOAD_FIELDS_OUT_OF_HASH = fields_where(in_hash=False)


def output_fit_error(
    max_tokens: int, max_model_len: int | None, *, field: str, server: str
) -> str | None:
    """Why `max_tokens` cannot run on `server` with `max_model_len` (None: it can).

    The one check of the rule: the suite applies it to each server's configured context,
    the run to the context a server reports (/v1/models) before a workload's first cell.
    """
    if max_model_len is None or max_tokens < max_model_len:
        return None
    return (
        f"{field} = {max_tokens} leaves no room for a prompt in max_model_len = "
        f"{max_model_len} of {server}: every request would be rejected; allowed: below "
        f"{max_model_len}"
    )


def workload_keys(workloads: Sequence[WorkloadSpec]) -> list[str]:
    """The results-folder key of each workload, distinct, in order.

    A workload's key is its `name`, else its selection. Unnamed workloads that share a
    selection get the fields they differ in appended (`+max_tokens-8192`). Workloads that
    differ in nothing but their concurrencies or repeats would measure the same cells:
    ValueError, naming them.
    """
    keys = [w.name or w.selection for w in workloads]
    groups: dict[str, list[int]] = {}
    for index, workload in enumerate(workloads):
        if workload.name is None:
            groups.setdefault(keys[index], []).append(index)
    for members in groups.values():
        if len(members) < 2:
            continue
        dumps = [workloads[i].model_dump(exclude=set(NOT_IDENTITY)) for i in members]
        differing = [f for f in dumps[0] if any(d[f] != dumps[0][f] for d in dumps)]
        for index, dump in zip(members, dumps, strict=True):
            keys[index] = "+".join([keys[index], *(_suffix(f, dump[f]) for f in differing)])
    seen: dict[str, int] = {}
    for index, key in enumerate(keys):
        if key in seen:
            raise ValueError(
                f"workloads {seen[key]} and {index} would share the results folder {key!r}: "
                "they differ only in concurrency or repeats; merge them, or give each a `name`"
            )
        seen[key] = index
    return keys


def _suffix(field: str, value: Any) -> str:
    if isinstance(value, dict | list):
        digest = hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()
        text = digest[:8]
    else:
        text = str(value)
    return slug(f"{field}-{text}")


#: Slurm's --time forms: MIN, MIN:SEC, H:M:S, D-H, D-H:M, D-H:M:S, or UNLIMITED.
_SLURM_TIME = re.compile(r"^(\d+(:\d{1,2}){0,2}|\d+-\d{1,2}(:\d{1,2}){0,2}|UNLIMITED|INFINITE)$")


class SlurmSettings(Frozen):
    """`[slurm]`: how `run --executor slurm` submits each shard (one node per job)."""

    partition: str | None = Field(
        default=None, description="Partition (sbatch --partition); None uses the default one."
    )
    account: str | None = Field(default=None, description="Account charged (sbatch --account).")
    time_limit: str | None = Field(
        default=None,
        description="Wall-time limit per job (sbatch --time), e.g. 4:00:00 or 1-00:00:00.",
    )
    nodes: int = Field(default=1, ge=1, description="Nodes per job (sbatch --nodes).")
    gpus_per_node: int | None = Field(
        default=None,
        ge=0,
        description=(
            "GPUs per node (sbatch --gpus-per-node), e.g. 8; 0 requests none. None derives "
            "each shard's from its server: TP × PP × DP / nodes (none for emulator servers)."
        ),
    )
    gres: str | None = Field(
        default=None, description="Generic resources instead of gpus_per_node, e.g. gpu:8."
    )
    constraint: str | None = Field(
        default=None, description="Node features required (sbatch --constraint), e.g. mi355x."
    )
    sbatch_options: list[str] = Field(
        default_factory=list,
        description="Further sbatch options, one per item, e.g. ['--exclusive', '--mem=0'].",
    )
    setup: str | None = Field(
        default=None,
        description=(
            "Shell lines run in the job before specbench, e.g. 'module load rocm' or "
            "'source /shared/venv/bin/activate'."
        ),
    )
    launcher: str | None = Field(
        default=None,
        description=(
            "Command prefix the job runs specbench under, e.g. a container launch line: "
            "'srun --container-image=rocm/vllm:latest --container-mounts=/shared'."
        ),
    )
    python: str | None = Field(
        default=None,
        description=(
            "Python that runs specbench inside the job; None uses the submitting interpreter "
            "(set 'python3' inside a container)."
        ),
    )

    @field_validator("time_limit")
    @classmethod
    def _slurm_time(cls, value: str | None) -> str | None:
        if value is not None and not _SLURM_TIME.match(value.strip()):
            raise ValueError(f"{value!r} is not a Slurm time; use MIN, H:M:S, D-H:M:S or UNLIMITED")
        return value.strip() if value is not None else None

    @field_validator("sbatch_options")
    @classmethod
    def _options(cls, values: list[str]) -> list[str]:
        for value in values:
            if not value.startswith("-") or "\n" in value:
                raise ValueError(f"{value!r}: each sbatch option starts with '-', e.g. --mem=0")
        return values

    @model_validator(mode="after")
    def _one_gpu_request(self) -> SlurmSettings:
        if self.gpus_per_node is not None and self.gres is not None:
            raise ValueError("give gpus_per_node or gres, not both")
        return self


@dataclass(frozen=True)
class Cell:
    """One measured point of the matrix. `repeat` and `launch` count from 0.

    `launch` is which fresh start of its server config measures it; `repeat` a complete
    pass within that launch."""

    server: str
    workload_index: int
    workload: str
    dataset: str
    concurrency: int
    repeat: int
    max_model_len: int | None = None
    #: Measure only the first N conversations of the stratified order (a pilot cell,
    #: `run/pilot.py`); None measures the workload's conversations as a campaign does.
    conversations: int | None = None
    launch: int = 0

    @property
    def key(self) -> str:
        """The cell's key on disk and in the manifest: `eagle3/speed-bench-qualitative/c48/r0`
        (`…/c48/l1/r0` on launch 1)."""
        return cell_key(self.server, self.workload, self.concurrency, self.repeat, self.launch)


class Suite(Frozen):
    """A validated suite; `servers` are already merged over `[target]`, paths resolved."""

    name: str = Field(min_length=1, description="Suite name, used in results folder names.")
    description: str | None = Field(default=None, description="Free text for reports.")
    repeats: int = Field(
        default=1,
        ge=1,
        description="Complete passes of every cell within one launch (one server process).",
    )
    launches: int = Field(
        default=1,
        ge=1,
        description="Fresh starts of each server config (new process, its own warmup, prefix "
        "cache reset), each measuring every cell of that config (its repeats within it).",
        json_schema_extra=suite_hash_role("left_out"),
    )
    max_launches: int = Field(
        default=DEFAULT_MAX_LAUNCHES,
        description="The most launches a precision-targeted point (server config × workload "
        "× concurrency) may take: it measures at least 3, then one more at a time until every "
        "targeted figure's launch-level half-width is within the precision, or this cap.",
        json_schema_extra=suite_hash_role("left_out"),
    )
    launch_order: LaunchOrder = Field(
        default="interleaved",
        description="Order of the server starts within each launch: interleaved (the servers "
        "in suite order, launch after launch: baseline, spec, baseline, spec …) or random (a "
        "shuffle per launch, seeded by launch_seed).",
        json_schema_extra=suite_hash_role("neutral"),
    )
    launch_seed: int = Field(
        default=0,
        description="Seed of the random launch order.",
        json_schema_extra=suite_hash_role("neutral"),
    )
    gpus: int | None = Field(
        default=None,
        ge=1,
        description="GPUs per server for tok/s/GPU; None derives TP × PP × DP per server.",
    )
    servers: dict[str, ServerConfig] = Field(
        min_length=1, description="Server configs by name, merged over [target]."
    )
    k_sweeps: dict[str, list[str]] = Field(
        default_factory=dict,
        description="K sweeps expanded at load: the server written with a list of Ks → its "
        "servers, one per K (`NAME-kN`), in the list's order. Each is an ordinary server with "
        "its own identity, so the sweep itself stays out of the hash.",
        json_schema_extra=suite_hash_role("left_out"),
    )
    advised_schedules: dict[str, str] = Field(
        default_factory=dict,
        description='Servers whose K schedule was "advised" → the advice file its ranges were '
        "read from at load. The ranges are in the server's identity; where they came from is "
        "a location, so it stays out of the hash.",
        json_schema_extra=suite_hash_role("left_out"),
    )
    workloads: list[WorkloadSpec] = Field(min_length=1, description="Workloads, in run order.")
    slo: dict[str, str | int | float] = Field(
        default_factory=dict,
        description='Latency bounds the report\'s capacity section reads (`tpot_p90 = "50ms"`; '
        "`specbench.advise.slo`): how results are judged, not what is measured, so never in "
        "the hash.",
        json_schema_extra=suite_hash_role("left_out"),
    )
    slurm: SlurmSettings = Field(
        default_factory=SlurmSettings,
        description="Where `run --executor slurm` submits; ignored by local runs and the hash.",
    )
    source: str | None = Field(default=None, description="Suite file it was loaded from.")
    data_dir: str | None = Field(
        default=None,
        description=(
            "A folder `specbench data prepare` wrote: every speed-bench:CONFIG dataset without "
            "a path reads CONFIG from it (`run --data-dir` sets it)."
        ),
    )

    @field_validator("max_launches")
    @classmethod
    def _cap_allows_precision(cls, value: int) -> int:
        return check_launch_cap(value)

    @model_validator(mode="after")
    def _launches_within_cap(self) -> Suite:
        """A precision-targeted workload may not plan more launches than its cap."""
        for index, workload in enumerate(self.workloads):
            if workload.precision is None:
                continue
            cap, launches = self.launch_cap_of(index), self.launches_of(index)
            if launches > cap:
                raise ValueError(
                    f"workloads[{index}]: launches = {launches} is above max_launches = {cap} "
                    "(the cap of a precision-targeted point's launches); raise max_launches"
                )
        return self

    @model_validator(mode="after")
    def _names(self) -> Suite:
        for name in self.servers:
            check_name("server", name)
        workload_keys(self.workloads)
        for swept, names in self.k_sweeps.items():
            missing = [name for name in names if name not in self.servers]
            if missing:
                raise ValueError(f"k_sweeps: {swept!r} names {missing}, not servers of the suite")
        return self

    @model_validator(mode="after")
    def _output_fits_context(self) -> Suite:
        """A max_tokens not below the server's context length fails every request."""
        for index, workload in enumerate(self.workloads):
            for name, server in self.servers.items():
                error = output_fit_error(
                    workload.max_tokens,
                    workload.max_model_len or server.max_model_len,
                    field=f"workloads[{index}].max_tokens",
                    server=f"server {name!r}",
                )
                if error:
                    raise ValueError(error)
        return self

    @model_validator(mode="after")
    def _one_baseline(self) -> Suite:
        marked = [name for name, server in self.servers.items() if server.baseline]
        if not marked:
            raise ValueError(
                f"no server has baseline = true (servers: {', '.join(self.servers)}); mark one"
            )
        if len(marked) > 1:
            raise ValueError(f"exactly one server may have baseline = true, got {marked}")
        return self

    @property
    def baseline(self) -> str:
        """Name of the baseline server config."""
        return next(name for name, server in self.servers.items() if server.baseline)

    def gpus_for(self, server: str) -> int:
        """The tok/s/GPU divisor of `server`: the suite's `gpus`, else its TP × PP × DP."""
        return self.gpus if self.gpus is not None else self.servers[server].gpus

    def repeats_of(self, workload_index: int) -> int:
        """Repeats of one workload: its own `repeats`, else the suite's."""
        own = self.workloads[workload_index].repeats
        return own if own is not None else self.repeats

    def launches_of(self, workload_index: int) -> int:
        """Launches of one workload: its own `launches`, else the suite's."""
        own = self.workloads[workload_index].launches
        return own if own is not None else self.launches

    def launch_cap_of(self, workload_index: int) -> int:
        """The cap on a precision-targeted point's launches: the workload's, else the suite's."""
        own = self.workloads[workload_index].max_launches
        return own if own is not None else self.max_launches

    def launches_at(self, workload_index: int, concurrency: int) -> int:
        """Launches planned for a point: the workload's, and at least
        `MIN_PRECISION_LAUNCHES` where a precision target applies (more are decided as they
        are measured, `run.launch_rounds`)."""
        launches = self.launches_of(workload_index)
        if self.workloads[workload_index].precision_at(concurrency) is None:
            return launches
        return max(launches, MIN_PRECISION_LAUNCHES)

    @property
    def planned_launches(self) -> int:
        """The most launches planned for any point: how many times a server config starts
        before precision-targeted points ask for more."""
        return max(
            self.launches_at(index, concurrency)
            for index, workload in enumerate(self.workloads)
            for concurrency in workload.concurrency
        )

    def launch_orders(self, count: int | None = None) -> list[list[str]]:
        """The server configs in start order, per launch (launch 0 first), for `count`
        launches (None: `planned_launches`).

        Interleaved: the suite's order in every launch. Random: a shuffle per launch from one
        generator seeded with `launch_seed`, launch after launch, so a suite grown from N to
        N + 1 launches keeps the order of the first N.
        """
        servers = list(self.servers)
        count = self.planned_launches if count is None else count
        if self.launch_order == "interleaved":
            return [list(servers) for _ in range(count)]
        generator = random.Random(self.launch_seed)
        orders = []
        for _ in range(count):
            order = list(servers)
            generator.shuffle(order)
            orders.append(order)
        return orders

    def server_config_for(self, cell: Cell) -> ServerConfig:
        """The config to launch for `cell`: the server's, with the workload's max_model_len."""
        config = self.servers[cell.server]
        if cell.max_model_len is None or cell.max_model_len == config.max_model_len:
            return config
        return config.model_copy(update={"max_model_len": cell.max_model_len})

    def expand(self) -> list[Cell]:
        """Every cell, launch-major: per launch, each server (`launch_orders`), then workload,
        concurrency, repeat. Launch 0 alone is the order before launches existed.

        Consecutive cells share a server start as long as server, launch and
        `server_config_for` are equal.
        """
        cells: list[Cell] = []
        for launch, servers in enumerate(self.launch_orders()):
            for server in servers:
                for index, workload in enumerate(self.workloads):
                    for concurrency in workload.concurrency:
                        if launch < self.launches_at(index, concurrency):
                            cells.extend(self.point_cells(server, index, concurrency, launch))
        return cells

    def point_cells(
        self, server: str, workload_index: int, concurrency: int, launch: int
    ) -> list[Cell]:
        """The cells of one point on one launch: one per repeat."""
        workload = self.workloads[workload_index]
        key = workload_keys(self.workloads)[workload_index]
        return [
            Cell(
                server=server,
                workload_index=workload_index,
                workload=key,
                dataset=workload.dataset,
                concurrency=concurrency,
                repeat=repeat,
                max_model_len=workload.max_model_len,
                launch=launch,
            )
            for repeat in range(self.repeats_of(workload_index))
        ]


def _suite_fields(kind: SuiteHashRole) -> tuple[str, ...]:
    return tuple(
        name
        for name, info in Suite.model_fields.items()
        if isinstance(info.json_schema_extra, dict)
        and info.json_schema_extra.get("suite_hash") == kind
    )


#: Suite fields added after schema 2 → their default, left out of the suite hash there.
HASH_NEUTRAL_SUITE_DEFAULTS: dict[str, object] = {
    name: Suite.model_fields[name].get_default(call_default_factory=True)
    for name in _suite_fields("neutral")
}
#: Suite fields never in the suite hash, whatever their value.
SUITE_FIELDS_OUT_OF_HASH = _suite_fields("left_out")
