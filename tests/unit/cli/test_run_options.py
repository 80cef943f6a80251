"""`run`'s options (issue 37): grouped help that reads at 80 columns (and wraps at a wider
terminal's width, issue 42; 200 in a pipe), shared with `bench` and
`estimate`; the moved flags hidden, working, and each announced in one line naming its
replacement; an unknown option always named with the nearest one; help written once."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import typer
from harness import CLI, REPO, invoke_main, run_on_terminal

from specbench.cli import deprecated
from specbench.cli.console import UNATTENDED_WIDTH, WIDTH_ENV
from specbench.cli.main import app
from specbench.run.plan import RunOptions

SUITE = REPO / "suites" / "emulator.toml"
COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def help_text(command: str, columns: int = 80) -> str:
    """`specbench COMMAND --help` as a terminal `columns` wide shows it (no colour codes)."""
    result = run_on_terminal(command, "--help", columns=columns, timeout=60)
    assert result.returncode == 0, result.output
    return result.output


def shown(command: str) -> list[str]:
    """The long names of `command`'s options that --help lists."""
    return [
        name
        for param in COMMANDS[command].params
        if not getattr(param, "hidden", False)
        for name in [*param.opts, *param.secondary_opts]
        if name.startswith("--")
    ]


HEADS = ["Arguments", "Options", "What to run"]
PANELS = {
    "run": [*HEADS, "Where results go", "Servers", "CI", "Slurm executor"],
    "estimate": [*HEADS, "Cost estimate", "Where results go", "Servers"],
    "bench": ["Options", "What to run", "Where results go", "Servers", "Dataset", "Load"],
}


@pytest.mark.parametrize("command", sorted(PANELS))
def test_help_is_in_panels_and_reads_at_80_columns(command: str) -> None:
    text = help_text(command)
    lines = text.splitlines()
    assert max(len(line) for line in lines) == 80
    assert "…" not in text  # rich cuts what does not fit with an ellipsis
    assert re.findall(r"╭─ (.+?) ─", text) == PANELS[command]
    words = set(re.findall(r"--[a-z-]+", text))
    missing = [name for name in shown(command) if name not in words]
    assert missing == [], missing  # every option's whole name, never cut
    assert not words & {"--no-force", "--no-dry-run", "--no-fail-fast"}


@pytest.mark.parametrize("columns", [60, 80, 120, 200])
def test_help_wraps_at_the_terminal_width_never_below_80_and_cuts_no_option(columns: int) -> None:
    text = help_text("run", columns)
    lines = text.splitlines()
    assert max(len(line) for line in lines) == max(columns, 80)
    assert "…" not in text
    missing = [name for name in shown("run") if name not in set(re.findall(r"--[a-z-]+", text))]
    assert missing == [], missing
    # Wider, fewer lines: each description wraps less (80 at 80, 45 at 200 with the 22
    # options); below 80 only click's usage line wraps (it measures the terminal itself).
    assert len(lines) <= {60: 81, 80: 80, 120: 55, 200: 45}[columns]


def test_piped_help_is_as_wide_as_other_unattended_output() -> None:
    env = {k: v for k, v in os.environ.items() if k not in (WIDTH_ENV, "COLUMNS", "TERMINAL_WIDTH")}
    piped = subprocess.run(
        [*CLI, "run", "--help"], capture_output=True, text=True, env=env, check=True
    )
    lines = piped.stdout.splitlines()
    assert max(len(line) for line in lines) == UNATTENDED_WIDTH == 200
    assert "…" not in piped.stdout
    fixed = subprocess.run(
        [*CLI, "run", "--help"],
        capture_output=True,
        text=True,
        env={**env, WIDTH_ENV: "120"},
        check=True,
    )
    assert max(len(line) for line in fixed.stdout.splitlines()) == 120


def test_run_help_lists_22_options_instead_of_35() -> None:
    text = help_text("run")
    assert len(shown("run")) == 22  # 20, --gpus-unchecked (issue 42) and --plan (issue 40)
    rows = [line for line in text.splitlines() if re.match(r"│ (\*\s+)?--[a-z]", line)]
    assert len(rows) == 23  # and --help
    for flag in ("--partition", "--time", "--sbatch-option", "--estimate-from", "--pilot"):
        assert flag not in text


def test_each_run_option_help_is_the_run_options_description() -> None:
    params = {param.name: param for param in COMMANDS["run"].params}
    pairs = {
        "force": "force",
        "fail_fast": "fail_fast",
        "max_restarts": "max_restarts",
        "vllm_bin": "vllm_bin",
        "ready_timeout": "ready_timeout_s",
        "api_key_env": "api_key_env",
        "server": "servers",
        "workload": "workloads",
        "endpoint": "endpoints",
        "accept_server_values": "accept_server_values",
        "gpus_unchecked": "gpus_unchecked",
    }
    for option, field in pairs.items():
        description = RunOptions.model_fields[field].description
        assert description and params[option].help == description, option
    output = RunOptions.model_fields["output"].description
    assert output and params["output"].help.startswith(output)
    assert {param.name: param.help for param in COMMANDS["bench"].params}["output"] == output


def parsed(*args: str) -> typer.Context:
    return COMMANDS["run"].make_context("run", [str(SUITE), *args])


def test_a_flag_keeps_its_negative_form_hidden_and_the_last_one_given_wins() -> None:
    assert parsed("--force").params["force"] is True
    assert parsed("--force", "--no-force").params["force"] is False
    assert parsed("--no-force", "--force").params["force"] is True
    assert parsed("--no-dry-run").params["dry_run"] is False
    assert parsed("--no-accept-server-values").params["accept_server_values"] is False


MOVED = [
    (("--partition", "gpu"), "--partition is deprecated: use --set slurm.partition=gpu"),
    (("--account", "perf"), "--account is deprecated: use --set slurm.account=perf"),
    (("--time", "2:00:00"), "--time is deprecated: use --set slurm.time_limit=2:00:00"),
    (  # a TOML time if bare: written as a string
        ("--time", "02:00:00"),
        "--time is deprecated: use --set 'slurm.time_limit=\"02:00:00\"'",
    ),
    (("--nodes", "2"), "--nodes is deprecated: use --set slurm.nodes=2"),
    (("--gpus-per-node", "0"), "--gpus-per-node is deprecated: use --set slurm.gpus_per_node=0"),
    (("--gres", "gpu:8"), "--gres is deprecated: use --set slurm.gres=gpu:8"),
    (
        ("--constraint", "mi355x&ib"),
        "--constraint is deprecated: use --set 'slurm.constraint=mi355x&ib'",
    ),
    (
        ("--sbatch-option=--exclusive", "--sbatch-option=--mem=0"),
        "--sbatch-option is deprecated: use --set "
        '\'slurm.sbatch_options=["--exclusive", "--mem=0"]\'',
    ),
    (
        ("--setup", "module load rocm"),
        "--setup is deprecated: use --set 'slurm.setup=module load rocm'",
    ),
    (("--launcher", "srun"), "--launcher is deprecated: use --set slurm.launcher=srun"),
    (
        ("--estimate-from", "old", "--estimate-from", "older"),
        f"--estimate-from is deprecated: use specbench estimate {SUITE} --from old --from older",
    ),
    (("--pilot",), f"--pilot is deprecated: use specbench estimate {SUITE} --pilot"),
    (
        ("--pilot-size", "5"),
        f"--pilot-size is deprecated: use specbench estimate {SUITE} --pilot --pilot-size 5",
    ),
    (
        ("--pilot-concurrency", "4"),
        f"--pilot-concurrency is deprecated: use specbench estimate {SUITE} --pilot "
        "--pilot-concurrency 4",
    ),
    (
        ("--pilot-output", "p"),
        f"--pilot-output is deprecated: use specbench estimate {SUITE} --pilot --pilot-output p",
    ),
]


@pytest.mark.parametrize(("args", "note"), MOVED)
def test_each_moved_flag_gets_one_line_naming_its_replacement(
    args: tuple[str, ...], note: str
) -> None:
    assert deprecated.notes(parsed(*args), SUITE) == [note]


def test_nothing_is_announced_without_a_moved_flag() -> None:
    assert deprecated.notes(parsed("--dry-run", "--force", "--executor", "slurm"), SUITE) == []


SLURM_FLAGS = [
    *("--partition", "gpu", "--account", "perf", "--time", "2:00:00", "--nodes", "1"),
    *("--gres", "gpu:8", "--constraint", "mi355x&ib"),  # (--gpus-per-node: not with --gres)
    *("--sbatch-option=--exclusive", "--sbatch-option=--mem=0", "--setup", "module load rocm"),
    *("--launcher", "srun"),
]


def slurm_dry_run(tmp_path: Path, *args: str) -> tuple[str, list[str]]:
    """The batch scripts `run --executor slurm --dry-run ARGS` prints, and its stderr lines."""
    out = tmp_path / "o"
    result = invoke_main("run", SUITE, "--output", out, "--executor", "slurm", "--dry-run", *args)
    assert result.code == 0, result.stderr
    return result.stdout[result.stdout.index("--- ") :], result.lines


def test_the_slurm_flags_work_as_before_and_their_replacements_do_the_same(
    tmp_path: Path,
) -> None:
    scripts, lines = slurm_dry_run(tmp_path, *SLURM_FLAGS)
    assert "#SBATCH --partition=gpu" in scripts and "#SBATCH --time=2:00:00" in scripts
    assert "#SBATCH --exclusive" in scripts and "#SBATCH --mem=0" in scripts
    assert "module load rocm" in scripts
    assert len(lines) == 9 and all(line.startswith("warning: --") for line in lines)
    replacements = [arg for line in lines for arg in shlex.split(line.split(": use ", 1)[1])]
    assert replacements.count("--set") == 9
    again, quiet = slurm_dry_run(tmp_path, *replacements)
    assert again == scripts
    assert quiet == []


def test_a_refusal_with_a_moved_flag_stays_one_line(tmp_path: Path) -> None:
    # The note would come once the command ends; a refused command line is one line only.
    result = invoke_main("run", SUITE, "--output", tmp_path / "o", "--partition", "gpu")
    assert result.code == 2
    assert result.lines == ["error: options of the Slurm executor need --executor slurm"]


@pytest.mark.parametrize(
    ("command", "typo", "named"),
    [
        ("run", "--zzzz", "--set"),  # nothing close: click would name none
        ("run", "-x", "--executor"),
        ("run", "--frce", "--force"),  # close to hidden --gres and --no-force too: not named
        ("run", "--outptu", "--output"),  # close to hidden --pilot-output too
        ("estimate", "--fromm", "--from"),
        ("bench", "--xyzzy", None),
    ],
)
def test_an_unknown_option_names_the_nearest_shown_one(
    command: str, typo: str, named: str | None
) -> None:
    args = [command, *([SUITE] if command != "bench" else []), typo]
    result = invoke_main(*args)
    assert result.code == 2
    (line,) = result.lines
    match = re.fullmatch(
        rf"error: No such option: {re.escape(typo)} \(Possible options: ([^)]+)\) "
        rf"\(see `[^`]*\b{command} --help`\)",
        line,
    )
    assert match, line
    suggested = match[1].split(", ")
    assert all(name in shown(command) for name in suggested)
    if named is not None:
        assert suggested == [named]


@pytest.mark.parametrize("command", ["advise", "report"])
def test_a_bracketed_table_name_in_help_is_printed(command: str) -> None:
    # rich's help markup read "[slo]" as a tag and printed "the suite's  table".
    text = " ".join(help_text(command, columns=200).split())
    assert "default: the suite's [slo] table" in text
