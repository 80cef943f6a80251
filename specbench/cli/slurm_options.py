"""The `run` options of the Slurm executor, defined once (Annotated aliases, one help panel).

Light on purpose: `specbench run` imports it at startup, the executor only when used.
"""

from __future__ import annotations

from typing import Annotated, Literal

import typer

PANEL = "Slurm executor"

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
