"""Every CLI option used by more than one command, defined once (Annotated aliases).

Grouped in help panels. Defaults come from `specbench.common.defaults`, the one home of
each default. Light on purpose: no pydantic, pandas or aiohttp, so `--help` is instant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from specbench.common import defaults

PANEL = "Slurm executor"
SERVERS = "Servers"
REQUESTS = "Requests"
DATASET = "Dataset"

# --- servers -----------------------------------------------------------------------------
VllmBin = Annotated[
    str | None,
    typer.Option(
        help="vllm executable (else $SPECBENCH_VLLM, then PATH).", rich_help_panel=SERVERS
    ),
]
ReadyTimeout = Annotated[
    float,
    typer.Option(
        "--ready-timeout",
        min=1,
        help="Seconds to wait for a started server to be ready.",
        rich_help_panel=SERVERS,
    ),
]
MaxRestarts = Annotated[
    int,
    typer.Option(
        min=0, help="Restarts of a dead server before giving up.", rich_help_panel=SERVERS
    ),
]
ApiKeyEnv = Annotated[
    str | None,
    typer.Option(help="Environment variable holding the API key.", rich_help_panel=SERVERS),
]
Overrides = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a suite value: servers.eagle3.num_speculative_tokens=4."),
]
Force = Annotated[bool, typer.Option(help="Measure complete cells again.")]
DataDir = Annotated[
    Path | None,
    typer.Option(
        help="A `specbench data prepare` folder: every speed-bench:CONFIG dataset reads it "
        "(the suite's data_dir)."
    ),
]

# --- requests (bench; suites set the same fields per workload) ---------------------------
MaxTokens = Annotated[
    int, typer.Option(min=1, help="Output cap per request.", rich_help_panel=REQUESTS)
]
Temperature = Annotated[
    float,
    typer.Option(
        min=0, help="Sampling temperature (SPEED-Bench uses 0).", rich_help_panel=REQUESTS
    ),
]
Warmup = Annotated[
    int,
    typer.Option(
        min=0,
        help="Warmup conversations before each cell (not measured).",
        rich_help_panel=REQUESTS,
    ),
]
Api = Annotated[
    Literal["chat", "completions"],
    typer.Option(help="chat (messages) or completions (raw prompts).", rich_help_panel=REQUESTS),
]
Client = Annotated[
    Literal["aiohttp", "openai"],
    typer.Option(
        help="aiohttp (the hot path) or openai (the official SDK).", rich_help_panel=REQUESTS
    ),
]
IgnoreEos = Annotated[
    bool,
    typer.Option(
        help="Ask the server to ignore EOS (fixed output lengths).", rich_help_panel=REQUESTS
    ),
]
SaveOutputs = Annotated[
    bool | None,
    typer.Option(
        "--save-outputs/--no-save-outputs",
        help="Keep output text and token ids; default on at temperature 0.",
        rich_help_panel=REQUESTS,
    ),
]
RequestTimeout = Annotated[
    float,
    typer.Option(
        min=0.001, help="Seconds without data before a request fails.", rich_help_panel=REQUESTS
    ),
]

# --- dataset -----------------------------------------------------------------------------
NumPrompts = Annotated[
    int | None,
    typer.Option(
        min=1, help="Conversations per cell (stratified by category).", rich_help_panel=DATASET
    ),
]
Category = Annotated[
    list[str] | None,
    typer.Option(help="Keep only this category (repeatable).", rich_help_panel=DATASET),
]
EntropyTier = Annotated[
    list[str] | None,
    typer.Option(help="Throughput splits: keep this tier (repeatable).", rich_help_panel=DATASET),
]
DatasetRevision = Annotated[
    str | None,
    typer.Option(
        help="Revision of nvidia/SPEED-Bench (default: the pinned commit).",
        rich_help_panel=DATASET,
    ),
]
Tokenizer = Annotated[
    str | None,
    typer.Option(
        help="Tokenizer folder for an exact context-length check.", rich_help_panel=DATASET
    ),
]
Seed = Annotated[
    int, typer.Option(help="Seed of the stratified prompt selection.", rich_help_panel=DATASET)
]
Strict = Annotated[
    bool,
    typer.Option(
        help="Fail when --num-prompts exceeds the rows (default: use all).", rich_help_panel=DATASET
    ),
]

# --- readers of a results directory (report, lossless, gate, baseline save) ---------------
BaselineLabel = Annotated[
    str | None, typer.Option(help="Baseline label; default: the manifest's baseline.")
]
SpeculativeLabel = Annotated[
    str | None, typer.Option(help="Only this speculative label; default: all of them.")
]
GateRules = Annotated[
    Path | None,
    typer.Option(
        help="gate.toml with per-metric rules (default rules if unset); `baseline save` "
        "checks the baseline's size against them."
    ),
]

# --- cost estimate (run --dry-run) -------------------------------------------------------
ESTIMATE = "Cost estimate (--dry-run)"
EstimateFrom = Annotated[
    list[Path] | None,
    typer.Option(
        help="With --dry-run: estimate time and GPU-hours from these earlier results "
        "of the same suite and model (repeatable).",
        rich_help_panel=ESTIMATE,
    ),
]
Pilot = Annotated[
    bool,
    typer.Option(
        help="With --dry-run, when --estimate-from gives no estimate: start each server, "
        "measure a few conversations per workload at each of its concurrencies "
        "(a pilot, saved apart), stop the servers and estimate from that.",
        rich_help_panel=ESTIMATE,
    ),
]
PilotSize = Annotated[
    int,
    typer.Option(
        min=1,
        help="Pilot conversations per concurrency slot (at least "
        f"{defaults.PILOT_MIN_CONVERSATIONS} and one per category, at most "
        f"{defaults.PILOT_MAX_CONVERSATIONS:,} per cell).",
        rich_help_panel=ESTIMATE,
    ),
]
PilotConcurrency = Annotated[
    list[int] | None,
    typer.Option(
        min=1,
        max=defaults.MAX_CONCURRENCY,
        help="Pilot at this concurrency (repeatable); default: each of the workload's.",
        rich_help_panel=ESTIMATE,
    ),
]
PilotOutput = Annotated[
    Path | None,
    typer.Option(
        help="Pilot results directory; default OUTPUT.pilot beside the results directory.",
        rich_help_panel=ESTIMATE,
    ),
]
PILOT_SIZE = defaults.PILOT_SIZE

READY_TIMEOUT_S = defaults.READY_TIMEOUT_S
MAX_RESTARTS = defaults.MAX_RESTARTS
REQUEST_TIMEOUT_S = defaults.REQUEST_TIMEOUT_S

# --- Slurm executor ----------------------------------------------------------------------

Executor = Annotated[
    Literal["local", "slurm"],
    typer.Option(
        help="local: this machine, one server at a time. slurm: one job per shard.",
        rich_help_panel=PANEL,
    ),
]
ShardByOption = Annotated[
    Literal["server", "workload"],
    typer.Option(
        help="A shard is one server config, or one server config × workload.",
        rich_help_panel=PANEL,
    ),
]
ShardOption = Annotated[
    list[str] | None,
    typer.Option(
        "--shard", help="Submit only shards matching this glob (repeatable).", rich_help_panel=PANEL
    ),
]
Detach = Annotated[
    bool, typer.Option(help="Return once the jobs are submitted.", rich_help_panel=PANEL)
]
Retries = Annotated[
    int,
    typer.Option(min=0, help="Resubmissions of a failed shard job.", rich_help_panel=PANEL),
]
PollInterval = Annotated[
    float,
    typer.Option(min=0.1, help="Seconds between job state queries.", rich_help_panel=PANEL),
]
Partition = Annotated[str | None, typer.Option(help="sbatch --partition.", rich_help_panel=PANEL)]
Account = Annotated[str | None, typer.Option(help="sbatch --account.", rich_help_panel=PANEL)]
TimeLimit = Annotated[
    str | None,
    typer.Option("--time", help="sbatch --time per job, e.g. 4:00:00.", rich_help_panel=PANEL),
]
Nodes = Annotated[int | None, typer.Option(help="sbatch --nodes per job.", rich_help_panel=PANEL)]
GpusPerNode = Annotated[
    int | None, typer.Option(help="sbatch --gpus-per-node.", rich_help_panel=PANEL)
]
Gres = Annotated[str | None, typer.Option(help="sbatch --gres, e.g. gpu:8.", rich_help_panel=PANEL)]
Constraint = Annotated[str | None, typer.Option(help="sbatch --constraint.", rich_help_panel=PANEL)]
SbatchOption = Annotated[
    list[str] | None,
    typer.Option(
        "--sbatch-option",
        help="Further sbatch option, e.g. --sbatch-option=--exclusive (repeatable).",
        rich_help_panel=PANEL,
    ),
]
Setup = Annotated[
    str | None,
    typer.Option(help="Shell lines run in each job before specbench.", rich_help_panel=PANEL),
]
Launcher = Annotated[
    str | None,
    typer.Option(
        help="Command prefix in each job, e.g. a container launch line.", rich_help_panel=PANEL
    ),
]
