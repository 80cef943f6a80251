"""`run`'s flags that moved, still accepted: hidden from `--help`, their behaviour unchanged,
each announced in one line on stderr naming its replacement.

- the ten that restated the suite's `[slurm]` table (`--partition` …): the suite, or
  `--set slurm.FIELD=VALUE` (`--partition gpu` → `--set slurm.partition=gpu`);
- the five of the cost estimate (`--estimate-from`, `--pilot*`, legal only with
  `--dry-run`): `specbench estimate SUITE --from DIR | --pilot …`.

The notes come when the command ends, unless it refused its input (exit 2): a refusal
stays the one line the project promises, and the notes come with the next, corrected, try.
"""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from specbench.cli import options as o
from specbench.common.errors import SpecbenchError


def hidden(option: Any) -> Any:
    """The same option (name, type, bounds), accepted but left out of `--help`."""
    moved = copy.copy(option)
    moved.hidden = True
    return moved


Partition = Annotated[str | None, typer.Option("--partition", hidden=True)]
Account = Annotated[str | None, typer.Option("--account", hidden=True)]
TimeLimit = Annotated[str | None, typer.Option("--time", hidden=True)]
Nodes = Annotated[int | None, typer.Option("--nodes", hidden=True)]
GpusPerNode = Annotated[int | None, typer.Option("--gpus-per-node", hidden=True)]
Gres = Annotated[str | None, typer.Option("--gres", hidden=True)]
Constraint = Annotated[str | None, typer.Option("--constraint", hidden=True)]
SbatchOption = Annotated[list[str] | None, typer.Option("--sbatch-option", hidden=True)]
Setup = Annotated[str | None, typer.Option("--setup", hidden=True)]
Launcher = Annotated[str | None, typer.Option("--launcher", hidden=True)]
EstimateFrom = Annotated[list[Path] | None, typer.Option("--estimate-from", hidden=True)]
Pilot = Annotated[bool, typer.Option("--pilot", hidden=True)]
PilotSize = Annotated[int, hidden(o.PILOT_SIZE_OPTION)]
PilotConcurrency = Annotated[list[int] | None, hidden(o.PILOT_CONCURRENCY_OPTION)]
PilotOutput = Annotated[Path | None, hidden(o.PILOT_OUTPUT_OPTION)]

#: `run`'s parameter → the `[slurm]` field it sets.
SLURM_FIELDS = {
    "partition": "partition",
    "account": "account",
    "time_limit": "time_limit",
    "nodes": "nodes",
    "gpus_per_node": "gpus_per_node",
    "gres": "gres",
    "constraint": "constraint",
    "sbatch_option": "sbatch_options",
    "setup": "setup",
    "launcher": "launcher",
}
#: `run`'s parameter → the `estimate` option that replaces it.
ESTIMATE_FLAGS = {
    "estimate_from": "--from",
    "pilot": "--pilot",
    "pilot_size": "--pilot-size",
    "pilot_concurrency": "--pilot-concurrency",
    "pilot_output": "--pilot-output",
}


def slurm_overrides(ctx: typer.Context) -> dict[str, Any]:
    """`[slurm]` field → the value its old flag gave, as the command's own argument would
    be (None: not given, the suite's stays)."""
    return {field: _argument(ctx.params[name]) for name, field in SLURM_FIELDS.items()}


def _argument(value: object) -> object:
    """A parsed value as typer hands it to the command: a repeatable option is a list, or
    None when not given (click keeps an empty tuple)."""
    if isinstance(value, tuple | list):
        return list(value) or None
    return value


def notes(ctx: typer.Context, suite: Path) -> list[str]:
    """One line per moved flag given on the command line: `--partition is deprecated: use
    --set slurm.partition=gpu`."""
    found = []
    typed = o.click.ParameterSource.COMMANDLINE
    for param in ctx.command.params:
        name = param.name
        if name is None or ctx.get_parameter_source(name) is not typed:
            continue
        value = _argument(ctx.params[name])
        if name in SLURM_FIELDS:
            replacement = set_option(SLURM_FIELDS[name], value)
        elif name in ESTIMATE_FLAGS:
            replacement = estimate_command(suite, name, value)
        else:
            continue
        found.append(f"{param.opts[0]} is deprecated: use {replacement}")
    return found


def set_option(field: str, value: object) -> str:
    """`--set slurm.FIELD=VALUE`, quoted for a shell; VALUE as `--set` reads it back (a bare
    word is a string; anything else, e.g. `02:00:00`, a TOML time, is written quoted)."""
    from specbench.suite import parse_override

    bare = isinstance(value, str) and parse_override(f"v={value}")[1] == value
    shown = value if bare else json.dumps(value)
    return f"--set {shlex.quote(f'slurm.{field}={shown}')}"


def estimate_command(suite: Path, name: str, value: object) -> str:
    """`specbench estimate SUITE …` with the option that replaces `run`'s `name`."""
    words = ["specbench", "estimate", str(suite)]
    if name not in ("estimate_from", "pilot"):
        words.append("--pilot")  # the pilot's settings need the pilot
    flag = ESTIMATE_FLAGS[name]
    for item in value if isinstance(value, list) else [value]:
        words += [flag] if isinstance(item, bool) else [flag, str(item)]
    return shlex.join(words)


@contextmanager
def announced(lines: list[str]) -> Iterator[None]:
    """Print `lines` (one warning each, stderr) once the block ends, unless it refused its
    input: a SpecbenchError of exit code 2 or an OS error (also exit 2) stays one line."""
    try:
        yield
    except BaseException as error:
        refused = isinstance(error, OSError) or (
            isinstance(error, SpecbenchError) and error.exit_code == 2
        )
        if not refused:
            _warn(lines)
        raise
    _warn(lines)


def _warn(lines: list[str]) -> None:
    if not lines:
        return
    from specbench.cli.console import make_console
    from specbench.cli.lines import line

    console = make_console(stderr=True, highlight=False)
    for text in lines:
        console.print(line("warning:", "yellow", text), soft_wrap=True)
