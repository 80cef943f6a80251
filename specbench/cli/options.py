"""Every CLI option used by more than one command, defined once (Annotated aliases), in
the help panels the commands share (lighteval's way: one alias per option, grouped).

Panels, in the order `run --help` shows them: what to run, where results go, servers,
load (`bench`: the suite holds `run`'s), CI, then the Slurm executor; `estimate` adds its
cost panel. An option `RunOptions` also holds takes its help from `run/options_help.py`,
which the model's field descriptions read too; defaults come from `common/defaults.py`.
Light on purpose: no pydantic, pandas or aiohttp, so `--help` is instant.

A flag is declared by its one name (`--force`): `--no-force` stays accepted, hidden
(`Command`), so `--help` keeps one column of names and fits 80 columns.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from typer.core import TyperCommand

from specbench.common import defaults
from specbench.run import options_help as text

try:  # typer >= 0.2x carries its own copy of click
    from typer._click import core as click
except ImportError:  # pragma: no cover (older typer uses click itself)
    from click import core as click  # type: ignore[no-redef]

if TYPE_CHECKING:
    from specbench.advise.slo import Slo
    from specbench.run.plan import RunOptions

WHAT = "What to run"
RESULTS = "Where results go"
SERVERS = "Servers"
LOAD = "Load"
DATASET = "Dataset"
CI = "CI"
SLURM = "Slurm executor"
ESTIMATE = "Cost estimate"


class Command(TyperCommand):
    """A command of the shared panels. Its on/off flags show no value column (typer 0.2x
    writes `<bool>` there), and a flag declared by its one name (`--force`) also accepts
    `--no-force`, hidden: the negative form it had before `--help` was grouped."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        flags = [param for param in self.params if getattr(param, "is_bool_flag", False)]
        for flag in flags:
            flag.metavar = ""
        self.params.extend(
            _negative(flag) for flag in flags if not flag.secondary_opts and flag.default is False
        )

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option


def _negative(flag: click.Parameter) -> click.Parameter:
    """`--no-NAME`, hidden: sets the flag back to False (of the two, the last given wins)."""
    name = flag.name

    def reset(ctx: click.Context, _param: click.Parameter, given: bool) -> None:
        if given and name is not None:
            ctx.params[name] = False

    negative = copy.copy(flag)  # the same kind of option, whichever click typer carries
    negative.name = f"no_{name}"
    negative.opts = [f"--no-{flag.opts[0].removeprefix('--')}"]
    negative.hidden = True  # type: ignore[attr-defined]
    negative.expose_value = False
    negative.callback = reset
    return negative


def suite_overrides(overrides: list[str] | None, data_dir: Path | None) -> list[str]:
    """The `--set` values, then `--data-dir` as the suite's `data_dir`."""
    folder = [f"data_dir = {json.dumps(str(data_dir.resolve()))}"] if data_dir else []
    return [*(overrides or ()), *folder]


def run_options(
    suite_name: str, output: Path | None, endpoints: list[str] | None, **fields: Any
) -> RunOptions:
    """`RunOptions` from a command's options: `--output` defaults to results/<suite name>;
    each `--endpoint NAME=URL` is parsed (one line when malformed)."""
    from specbench.run.plan import RunOptions, parse_endpoints

    return RunOptions(
        output=output or Path("results") / suite_name,
        endpoints=parse_endpoints(endpoints or []),
        **fields,
    )


# --- what to run --------------------------------------------------------------------------
Suite = Annotated[Path, typer.Argument(help="Suite TOML file.")]
Overrides = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="PATH=VALUE",
        help="Override a suite value (repeatable), e.g. servers.eagle3.num_speculative_tokens=4 "
        "or slurm.partition=gpu.",
        rich_help_panel=WHAT,
    ),
]
DataDir = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR",
        help="A `specbench data prepare` folder: every speed-bench:CONFIG dataset reads it "
        "(the suite's data_dir).",
        rich_help_panel=WHAT,
    ),
]
ServerFilter = Annotated[
    list[str] | None,
    typer.Option("--server", metavar="NAME", help=text.SERVERS, rich_help_panel=WHAT),
]
PlanFile = Annotated[
    Path | None,
    typer.Option("--plan", metavar="FILE", help=text.PLAN, rich_help_panel=WHAT),
]
WorkloadFilter = Annotated[
    list[str] | None,
    typer.Option("--workload", metavar="KEY", help=text.WORKLOADS, rich_help_panel=WHAT),
]
DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Check everything (preflight) and print the selected cells and each server's "
        "exact command; start nothing.",
        rich_help_panel=WHAT,
    ),
]

# --- where results go ---------------------------------------------------------------------
Output = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR",
        help=f"{text.OUTPUT} Default: results/<suite name>.",
        rich_help_panel=RESULTS,
    ),
]
Force = Annotated[bool, typer.Option("--force", help=text.FORCE, rich_help_panel=RESULTS)]

# --- servers ------------------------------------------------------------------------------
Endpoints = Annotated[
    list[str] | None,
    typer.Option("--endpoint", metavar="NAME=URL", help=text.ENDPOINTS, rich_help_panel=SERVERS),
]
AcceptServerValues = Annotated[
    bool,
    typer.Option("--accept-server-values", help=text.ACCEPT_SERVER_VALUES, rich_help_panel=SERVERS),
]
GpusUnchecked = Annotated[
    bool,
    typer.Option("--gpus-unchecked", help=text.GPUS_UNCHECKED, rich_help_panel=SERVERS),
]
VllmBin = Annotated[
    str | None, typer.Option(metavar="PATH", help=text.VLLM_BIN, rich_help_panel=SERVERS)
]
ReadyTimeout = Annotated[
    float,
    typer.Option(
        "--ready-timeout",
        min=1,
        metavar="S",
        help=text.READY_TIMEOUT_S,
        rich_help_panel=SERVERS,
    ),
]
MaxRestarts = Annotated[
    int, typer.Option(min=0, metavar="N", help=text.MAX_RESTARTS, rich_help_panel=SERVERS)
]
ApiKeyEnv = Annotated[
    str | None, typer.Option(metavar="VAR", help=text.API_KEY_ENV, rich_help_panel=SERVERS)
]

# --- CI -----------------------------------------------------------------------------------
FailFast = Annotated[bool, typer.Option("--fail-fast", help=text.FAIL_FAST, rich_help_panel=CI)]

# --- load (bench; a suite sets the same fields per workload) -------------------------------
MaxTokens = Annotated[
    int, typer.Option(min=1, metavar="N", help="Output cap per request.", rich_help_panel=LOAD)
]
Temperature = Annotated[
    float,
    typer.Option(
        min=0, metavar="T", help="Sampling temperature (SPEED-Bench uses 0).", rich_help_panel=LOAD
    ),
]
Warmup = Annotated[
    int,
    typer.Option(
        min=0,
        metavar="N",
        help="Warmup conversations before each cell (not measured).",
        rich_help_panel=LOAD,
    ),
]
Api = Annotated[
    Literal["chat", "completions"],
    typer.Option(
        metavar="API", help="chat (messages) or completions (raw prompts).", rich_help_panel=LOAD
    ),
]
Client = Annotated[
    Literal["aiohttp", "openai"],
    typer.Option(
        metavar="CLIENT",
        help="aiohttp (the hot path) or openai (the official SDK).",
        rich_help_panel=LOAD,
    ),
]
IgnoreEos = Annotated[
    bool,
    typer.Option(
        "--ignore-eos",
        help="Ask the server to ignore EOS (fixed output lengths).",
        rich_help_panel=LOAD,
    ),
]
SaveOutputs = Annotated[
    bool | None,
    typer.Option(
        "--save-outputs/--no-save-outputs",
        help="Keep output text and token ids; default on at temperature 0.",
        rich_help_panel=RESULTS,
    ),
]
RequestTimeout = Annotated[
    float,
    typer.Option(
        min=0.001,
        metavar="S",
        help="Seconds without data before a request fails.",
        rich_help_panel=LOAD,
    ),
]

# --- dataset (bench, data) -----------------------------------------------------------------
NumPrompts = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        help="Conversations per cell (stratified by category).",
        rich_help_panel=DATASET,
    ),
]
Category = Annotated[
    list[str] | None,
    typer.Option(
        metavar="NAME", help="Keep only this category (repeatable).", rich_help_panel=DATASET
    ),
]
EntropyTier = Annotated[
    list[str] | None,
    typer.Option(
        metavar="TIER",
        help="Throughput splits: keep this tier (repeatable).",
        rich_help_panel=DATASET,
    ),
]
DatasetRevision = Annotated[
    str | None,
    typer.Option(
        metavar="REV",
        help="Revision of nvidia/SPEED-Bench (default: the pinned commit).",
        rich_help_panel=DATASET,
    ),
]
Tokenizer = Annotated[
    str | None,
    typer.Option(
        metavar="DIR",
        help="Tokenizer folder for an exact context-length check.",
        rich_help_panel=DATASET,
    ),
]
Seed = Annotated[
    int,
    typer.Option(
        metavar="N", help="Seed of the stratified prompt selection.", rich_help_panel=DATASET
    ),
]
Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Fail when --num-prompts exceeds the rows (default: use all).",
        rich_help_panel=DATASET,
    ),
]

# --- readers of a results directory (report, lossless, gate, baseline save) ---------------
BaselineLabel = Annotated[
    str | None, typer.Option(help="Baseline label; default: the manifest's baseline.")
]
SpeculativeLabel = Annotated[
    str | None, typer.Option(help="Only this speculative label; default: all of them.")
]
#: Parsed by `slo_of` (`advise.slo.parse_slo`); report and advise read it the same way.
SloBounds = Annotated[
    str | None,
    typer.Option(
        "--slo",
        metavar="KEY=VALUE,...",
        help="Latency bounds for capacity under an SLO, e.g. tpot_p90=50ms,ttft_p90=2s: a "
        "latency figure and a stored statistic per key (an unknown key lists them all), units "
        # `\\[`: rich's help markup would read [slo] as a tag and print nothing.
        "ms or s; default: the suite's \\[slo] table.",
    ),
]


def slo_of(text: str | None) -> Slo | None:
    """`--slo`'s bounds; None when not given (bad input is one line naming `--slo`)."""
    from specbench.advise.slo import parse_slo

    return parse_slo(text, "--slo") if text is not None else None


GateRules = Annotated[
    Path | None,
    typer.Option(
        help="gate.toml with per-metric rules (default rules if unset); `baseline save` "
        "checks the baseline's size against them."
    ),
]

# --- cost estimate (estimate; run's hidden --estimate-from and --pilot* parse the same) ----
#: The option behind each: `estimate` shows it, `run` accepts it hidden (cli/deprecated.py).
PILOT_SIZE_OPTION = typer.Option(
    "--pilot-size",
    min=1,
    metavar="N",
    help="Pilot conversations per concurrency slot (at least "
    f"{defaults.PILOT_MIN_CONVERSATIONS} and one per category, at most "
    f"{defaults.PILOT_MAX_CONVERSATIONS:,} per cell).",
    rich_help_panel=ESTIMATE,
)
PILOT_CONCURRENCY_OPTION = typer.Option(
    "--pilot-concurrency",
    min=1,
    max=defaults.MAX_CONCURRENCY,
    metavar="C",
    help="Pilot at this concurrency (repeatable); default: each of the workload's.",
    rich_help_panel=ESTIMATE,
)
PILOT_OUTPUT_OPTION = typer.Option(
    "--pilot-output",
    metavar="DIR",
    help="Pilot results directory; default OUTPUT.pilot beside the results directory.",
    rich_help_panel=ESTIMATE,
)
EstimateFrom = Annotated[
    list[Path] | None,
    typer.Option(
        "--from",
        metavar="DIR",
        help="Fit time and GPU-hours on these earlier results of the same suite and model "
        "(repeatable).",
        rich_help_panel=ESTIMATE,
    ),
]
Pilot = Annotated[
    bool,
    typer.Option(
        "--pilot",
        help="When --from gives no estimate: start each server, measure a few conversations "
        "per workload at each of its concurrencies (a pilot, saved apart), stop the servers "
        "and estimate from that.",
        rich_help_panel=ESTIMATE,
    ),
]
PilotSize = Annotated[int, PILOT_SIZE_OPTION]
PilotConcurrency = Annotated[list[int] | None, PILOT_CONCURRENCY_OPTION]
PilotOutput = Annotated[Path | None, PILOT_OUTPUT_OPTION]
PILOT_SIZE = defaults.PILOT_SIZE

READY_TIMEOUT_S = defaults.READY_TIMEOUT_S
MAX_RESTARTS = defaults.MAX_RESTARTS
REQUEST_TIMEOUT_S = defaults.REQUEST_TIMEOUT_S

# --- Slurm executor (its [slurm] settings come from the suite or --set slurm.X=) ----------
Executor = Annotated[
    Literal["local", "slurm"],
    typer.Option(
        help="local: this machine, one server at a time. slurm: one job per shard, as the "
        "suite's slurm table (or --set slurm.FIELD=VALUE) says.",
        rich_help_panel=SLURM,
    ),
]
ShardByOption = Annotated[
    Literal["server", "workload"],
    typer.Option(
        help="A shard is one server config, or one server config × workload.",
        rich_help_panel=SLURM,
    ),
]
ShardOption = Annotated[
    list[str] | None,
    typer.Option(
        "--shard",
        metavar="GLOB",
        help="Submit only shards matching this glob (repeatable).",
        rich_help_panel=SLURM,
    ),
]
Detach = Annotated[
    bool,
    typer.Option("--detach", help="Return once the jobs are submitted.", rich_help_panel=SLURM),
]
Retries = Annotated[
    int,
    typer.Option(
        min=0, metavar="N", help="Resubmissions of a failed shard job.", rich_help_panel=SLURM
    ),
]
PollInterval = Annotated[
    float,
    typer.Option(
        min=0.1, metavar="S", help="Seconds between job state queries.", rich_help_panel=SLURM
    ),
]
