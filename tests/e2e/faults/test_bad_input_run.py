"""Bad input to `run` (I34–I90, I120–I129): options and overrides out of range, a missing or
odd suite path, and malformed suites: unknown keys, wrong types, empty tables, numbers out
of range, bad datasets in any workload, launches that cannot be (I120–I125), a cap on
launches that cannot be (I126–I129).

Each is refused before any server starts: exit 2, one line naming the option, file or
field, no traceback, nothing written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fault_checks import assert_refused
from fault_scratch import FAULTS_TEST, PLACEHOLDERS, FaultCase, Observed, Scratch, bad_input

pytestmark = pytest.mark.faults

BAD_OPTIONS = "tests/unit/cli/test_bad_input_lines.py::test_bad_options_get_one_line_and_exit_2"
SUITE_BAD = "tests/unit/suite/test_suite.py"
RANGE = f"{SUITE_BAD}::test_numbers_are_range_checked_at_the_boundary"
OVERRIDE = f"{SUITE_BAD}::test_bad_override_names_the_path"
UNKNOWN_KEYS = f"{SUITE_BAD}::test_unknown_keys_at_each_level"
WRONG_TYPE = f"{SUITE_BAD}::test_a_value_of_the_wrong_type_is_refused_not_coerced"
MATRIX = f"{SUITE_BAD}::test_no_baseline_two_baselines_empty_matrix"
PRECISION = "tests/e2e/test_precision_emulator.py"
ROUNDS = "tests/unit/run/test_launch_rounds.py"
LAUNCHES_TEST = "tests/unit/suite/test_suite_launches.py"
LAUNCHES = f"{LAUNCHES_TEST}::test_bad_launch_values_are_one_line_naming_the_field"
CAP = f"{ROUNDS}::test_a_cap_that_cannot_be_is_one_line_naming_the_field"
DATASET_FIRST = f"{FAULTS_TEST}::test_every_workload_dataset_is_checked_before_any_server_starts"
WORKLOAD_2 = '\n[[workloads]]\nname = "second"\ndataset = "{}"\nconcurrency = [1]\nmax_tokens = 8\n'

Build = Callable[[Scratch, Path], list[Any]]


def run_option(id: str, args: tuple[str, ...], contains: str, tests: str) -> Any:
    """`run SUITE --output OUT ARGS` on a good suite."""

    def build(scratch: Scratch, folder: Path) -> list[Any]:
        suite, _ = scratch.suite(folder)
        return ["run", suite, "--output", folder / "o", *args]

    return bad_input(id, f"run {' '.join(args)}", tests, contains, build)


def edit(id: str, name: str, tests: str, contains: str, change: Callable[[str], str]) -> Any:
    """`run` of a good suite whose text `change` made bad."""

    def build(scratch: Scratch, folder: Path) -> list[Any]:
        suite, _ = scratch.suite(folder)
        suite.write_text(change(suite.read_text()))
        return ["run", suite, "--output", folder / "o"]

    return bad_input(id, f"suite: {name}", tests, contains, build)


def rep(old: str, new: str) -> Callable[[str], str]:
    """The first `old` in the suite's text replaced by `new` (which must be there)."""

    def change(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return change


def launches_on_an_attached_server(scratch: Scratch, folder: Path) -> list[Any]:
    suite, _ = scratch.suite(folder)
    suite.write_text(rep("repeats = 1", "repeats = 1\nlaunches = 2")(suite.read_text()))
    return ["run", suite, "--output", folder / "o", "--endpoint", "eagle3=http://127.0.0.1:9"]


def second_workload_with_a_bad_line(scratch: Scratch, folder: Path) -> list[Any]:
    bad = folder / "bad.jsonl"
    bad.write_text('{"category": "chat", "turns": ["hi"]}\n{bad json\n')
    suite, _ = scratch.suite(folder, extra=WORKLOAD_2.format(bad))
    return ["run", suite, "--output", folder / "o"]


@pytest.mark.parametrize(
    ("case", "contains", "build"),
    [
        run_option("I34", ("--max-restarts", "-1"), "--max-restarts", BAD_OPTIONS),
        run_option("I35", ("--ready-timeout", "0"), "--ready-timeout", BAD_OPTIONS),
        run_option("I36", ("--set", "servers.eagle3"), "expected dotted.path=value", OVERRIDE),
        run_option(
            "I37",
            ("--set", "servers.ghost.model=x"),
            "no server 'ghost'",
            f"{SUITE_BAD}::test_set_on_an_unknown_server_name_is_refused",
        ),
        run_option("I38", ("--set", "workloads.5.max_tokens=1"), "workloads.5", OVERRIDE),
        run_option(
            "I39", ("--set", "servers.eagle3.tp=8"), "servers.eagle3.tp: unknown key", OVERRIDE
        ),
        run_option(
            "I40",
            ("--set", "workloads.0.concurrency=[99999999999999999999]"),
            "concurrency",
            RANGE,
        ),
        run_option("I41", ("--set", "workloads.0.temperature=nan"), "temperature", RANGE),
        run_option(
            "I42", ("--set", "workloads.0.request_timeout_s=-5"), "request_timeout_s", RANGE
        ),
        run_option("I43", ("--server", "nosuch"), "nosuch", ""),
        run_option("I44", ("--workload", "nosuch"), "nosuch", ""),
        run_option("I45", ("--endpoint", "http://127.0.0.1:1"), "--endpoint", ""),
        run_option(
            "I46",
            ("--endpoint", "nosuch=http://127.0.0.1:1"),
            "nosuch",
            "tests/e2e/test_campaign_emulator.py::test_bad_suites_get_one_line_and_exit_2",
        ),
        run_option("I47", ("--estimate-from", "."), "--estimate-from", ""),
        bad_input(
            "I48", "run: no suite argument", BAD_OPTIONS, "Missing argument", lambda s, f: ["run"]
        ),
        bad_input("I49", "an unknown command", BAD_OPTIONS, "nosuch", lambda s, f: ["nosuch"]),
        bad_input(
            "I50",
            "run: suite file missing",
            f"{SUITE_BAD}::test_missing_file_and_bad_server_name",
            "does not exist",
            lambda s, f: ["run", f / "nope.toml", "--output", f / "o"],
        ),
        bad_input(
            "I51",
            "run: suite path is a folder",
            "",
            "suite",
            lambda s, f: ["run", f, "--output", f / "o"],
        ),
        bad_input(
            "I52",
            "run: a path holding `[/` and `[bold]`",
            "tests/unit/cli/test_plain_messages.py::test_a_path_with_markup_closing_tag_is_"
            "printed_verbatim",
            "a[/]b[bold]",
            lambda s, f: ["run", f / "a[/]b[bold]" / "suite.toml", "--output", f / "o"],
        ),
    ],
)
def test_run_refuses_a_bad_option(
    case: FaultCase, contains: str, build: Build, scratch: Scratch, observe: Observed
) -> None:
    folder = scratch.dir("input")
    outcome = scratch.cli(*build(scratch, folder))
    observe(outcome)
    assert_refused(outcome, contains, folder / "o")


@pytest.mark.parametrize(
    ("case", "contains", "build"),
    [
        edit(
            "I53",
            "malformed TOML",
            f"{SUITE_BAD}::test_malformed_toml_gives_file_and_line",
            "malformed TOML",
            rep("[servers.eagle3]", "[servers.eagle3"),
        ),
        edit(
            "I54",
            "unknown top-level key",
            UNKNOWN_KEYS,
            "colour: unknown key",
            lambda t: "colour = 1\n" + t,
        ),
        edit(
            "I55",
            "unknown key in [target]",
            UNKNOWN_KEYS,
            "target.baseline",
            rep('engine = "emulator"', 'engine = "emulator"\nbaseline = true'),
        ),
        edit(
            "I56",
            "unknown key in a workload",
            UNKNOWN_KEYS,
            "max_token: unknown key",
            rep("max_tokens = 16", "max_token = 16"),
        ),
        edit(
            "I57",
            "unknown key in a speculative table",
            f"{SUITE_BAD}::test_unknown_key_names_file_path_and_allowed_keys",
            "num_spec_tokens",
            rep("num_speculative_tokens", "num_spec_tokens"),
        ),
        edit(
            "I58",
            "wrong type: concurrency a string",
            "",
            "concurrency",
            rep("concurrency = [1, 4]", 'concurrency = "4"'),
        ),
        edit(
            "I59",
            "wrong type: max_tokens a string",
            "",
            "max_tokens",
            rep("max_tokens = 16", 'max_tokens = "lots"'),
        ),
        edit(
            "I60",
            "wrong type: repeats a float",
            "",
            "repeats",
            rep("repeats = 1", "repeats = 1.5"),
        ),
        edit(
            "I61",
            "wrong type: max_tokens a numeric string",
            WRONG_TYPE,
            "max_tokens",
            rep("max_tokens = 16", 'max_tokens = "16"'),
        ),
        edit(
            "I62",
            "wrong type: baseline a string",
            WRONG_TYPE,
            "baseline",
            rep("baseline = true", 'baseline = "yes"'),
        ),
        edit(
            "I63",
            "duplicate server names (bracketed text kept)",
            f"{SUITE_BAD}::test_duplicate_server_names",
            "each [servers.<name>] must be unique",
            lambda t: t + "\n[servers.baseline]\nbaseline = false\n",
        ),
        edit(
            "I64",
            "no baseline",
            MATRIX,
            "no server has baseline = true",
            rep("baseline = true", "baseline = false"),
        ),
        edit(
            "I65",
            "two baselines",
            MATRIX,
            "exactly one server",
            rep("[servers.eagle3]", "[servers.eagle3]\nbaseline = true"),
        ),
        edit(
            "I66",
            "no workloads (bracketed text kept)",
            "tests/unit/cli/test_plain_messages.py::test_bracketed_text_in_an_error_is_kept",
            "add at least one [[workloads]] table",
            lambda t: t.split("[[workloads]]")[0],
        ),
        edit(
            "I67",
            "empty concurrency list",
            MATRIX,
            "concurrency",
            rep("concurrency = [1, 4]", "concurrency = []"),
        ),
        edit(
            "I68",
            "empty [target] table",
            "",
            "model",
            lambda t: t.replace(
                'engine = "emulator"\nmodel', 'engine = "emulator"\nxmodel'
            ).replace("xmodel = ", "# "),
        ),
        edit(
            "I69",
            "unknown speculative method",
            f"{SUITE_BAD}::test_unknown_speculative_method_lists_allowed",
            "'medusa' is not allowed",
            rep('"eagle3"', '"medusa"'),
        ),
        edit(
            "I70",
            "server name with a space",
            f"{SUITE_BAD}::test_missing_file_and_bad_server_name",
            "servers.spec x",
            rep("[servers.eagle3]", '[servers."spec x"]'),
        ),
        edit(
            "I71",
            "tensor_parallel_size = 0",
            f"{SUITE_BAD}::test_value_inherited_from_target_is_blamed_on_target",
            "tensor_parallel_size",
            rep('engine = "emulator"', 'engine = "emulator"\ntensor_parallel_size = 0'),
        ),
        edit(
            "I72",
            "--tensor-parallel-size in extra_args",
            "tests/unit/launch/test_parallelism.py::test_parallel_sizes_in_extra_args_are_refused_"
            "in_one_line",
            "tensor-parallel-size",
            rep(
                'engine = "emulator"',
                'engine = "emulator"\nextra_args = ["--tensor-parallel-size", "2"]',
            ),
        ),
        edit(
            "I73",
            "an emulator table on a vLLM server",
            "",
            "emulator",
            rep('engine = "emulator"', 'engine = "vllm"'),
        ),
        edit(
            "I74",
            "concurrency 0",
            RANGE,
            "concurrency",
            rep("concurrency = [1, 4]", "concurrency = [0]"),
        ),
        edit(
            "I75",
            "concurrency -1",
            RANGE,
            "concurrency",
            rep("concurrency = [1, 4]", "concurrency = [-1]"),
        ),
        edit(
            "I76",
            "concurrency 2^64",
            RANGE,
            "concurrency",
            rep("concurrency = [1, 4]", "concurrency = [18446744073709551616]"),
        ),
        edit(
            "I77",
            "temperature nan",
            RANGE,
            "temperature",
            rep("warmup = 1", "warmup = 1\ntemperature = nan"),
        ),
        edit(
            "I78",
            "temperature inf",
            RANGE,
            "temperature",
            rep("warmup = 1", "warmup = 1\ntemperature = inf"),
        ),
        edit(
            "I79",
            "temperature -1",
            RANGE,
            "temperature",
            rep("warmup = 1", "warmup = 1\ntemperature = -1.0"),
        ),
        edit(
            "I80",
            "request_timeout_s = 0",
            RANGE,
            "request_timeout_s",
            rep("warmup = 1", "warmup = 1\nrequest_timeout_s = 0"),
        ),
        edit(
            "I81",
            "max_tokens above max_model_len",
            RANGE,
            "max_model_len",
            rep("warmup = 1", "warmup = 1\nmax_model_len = 16"),
        ),
        edit(
            "I82",
            "precision = 0",
            PRECISION,
            "precision",
            rep("warmup = 1", "warmup = 1\nprecision = 0.0"),
        ),
        edit(
            "I83",
            "precision = 1",
            PRECISION,
            "precision",
            rep("warmup = 1", "warmup = 1\nprecision = 1.0"),
        ),
        edit(
            "I84",
            "precision = 2",
            PRECISION,
            "precision",
            rep("warmup = 1", "warmup = 1\nprecision = 2.0"),
        ),
        edit(
            "I85",
            "min_conversations above the dataset",
            "",
            "min_conversations",
            rep("warmup = 1", "warmup = 1\nprecision = 0.05\nmin_conversations = 500"),
        ),
        edit(
            "I86",
            "workloads that share cells",
            "",
            "workload",
            lambda t: t + t[t.index("[[workloads]]") :].replace("[1, 4]", "[2]"),
        ),
        edit(
            "I87",
            "a second workload's dataset missing",
            DATASET_FIRST,
            "file not found",
            lambda t: t + WORKLOAD_2.format("/nonexistent/nosuch.jsonl"),
        ),
        edit(
            "I88",
            "a second workload's dataset has placeholder rows",
            DATASET_FIRST,
            "placeholder",
            lambda t: t + WORKLOAD_2.format(f"speed-bench:qualitative:{PLACEHOLDERS}"),
        ),
        edit(
            "I89",
            "unknown category",
            DATASET_FIRST,
            "nosuch",
            rep("max_tokens = 16", 'max_tokens = 16\ncategories = ["nosuch"]'),
        ),
        bad_input(
            "I90",
            "suite: a second workload's dataset has a bad JSONL line",
            DATASET_FIRST,
            "bad.jsonl:2",
            second_workload_with_a_bad_line,
        ),
        edit("I120", "launches = 0", LAUNCHES, "launches", rep("repeats = 1", "launches = 0")),
        edit(
            "I121",
            "wrong type: launches a float",
            LAUNCHES,
            "launches",
            rep("repeats = 1", "launches = 2.5"),
        ),
        edit(
            "I122",
            "wrong type: launches a numeric string",
            LAUNCHES,
            "launches",
            rep("repeats = 1", 'launches = "3"'),
        ),
        edit(
            "I123",
            "unknown launch_order",
            LAUNCHES,
            "launch_order",
            rep("repeats = 1", 'repeats = 1\nlaunch_order = "sequential"'),
        ),
        edit(
            "I124",
            "a workload's launches = 0",
            LAUNCHES,
            "workloads[0].launches",
            rep("warmup = 1", "warmup = 1\nlaunches = 0"),
        ),
        bad_input(
            "I125",
            "suite: launches = 2 with an attached server (--endpoint)",
            "tests/unit/suite/test_suite_launches.py::test_an_attached_server_cannot_give_launches",
            "launches = 2",
            launches_on_an_attached_server,
        ),
        edit(
            "I126",
            "max_launches = 2 (below the 3 launches precision needs)",
            CAP,
            "max_launches: must be at least 3: precision needs at least 3 launches",
            rep("repeats = 1", "repeats = 1\nmax_launches = 2"),
        ),
        edit(
            "I127",
            "wrong type: max_launches a float",
            CAP,
            "max_launches",
            rep("repeats = 1", "repeats = 1\nmax_launches = 4.5"),
        ),
        edit(
            "I128",
            "a workload's max_launches = 1",
            CAP,
            "workloads[0].max_launches",
            rep("warmup = 1", "warmup = 1\nmax_launches = 1"),
        ),
        edit(
            "I129",
            "launches = 5 above max_launches = 4 with precision",
            CAP,
            "launches = 5 is above max_launches = 4",
            lambda text: rep("warmup = 1", "warmup = 1\nprecision = 0.05")(
                rep("repeats = 1", "repeats = 1\nlaunches = 5\nmax_launches = 4")(text)
            ),
        ),
    ],
)
def test_run_refuses_a_bad_suite(
    case: FaultCase, contains: str, build: Build, scratch: Scratch, observe: Observed
) -> None:
    folder = scratch.dir("input")
    outcome = scratch.cli(*build(scratch, folder))
    observe(outcome)
    assert_refused(outcome, contains, folder / "o")
