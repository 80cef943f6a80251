"""Bad input to `bench` (I01–I33): every number out of range, unknown choices, a bad endpoint,
bad datasets, and what only a live server can refuse (its max_model_len).

Each is refused before anything runs: exit 2, one line naming the option, file or field,
no traceback, nothing written. I25–I33 ask an emulator (marker `fault_server`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fault_checks import assert_refused
from fault_scratch import FAULTS_TEST, PLACEHOLDERS, FaultCase, Observed, Scratch, bad_input
from harness import DATA, bench_argv

pytestmark = pytest.mark.faults

BAD_OPTIONS = "tests/unit/cli/test_bad_input_lines.py::test_bad_options_get_one_line_and_exit_2"
BENCH_BAD = "tests/e2e/test_bench_emulator.py::test_bad_input_gets_one_line_and_exit_2"
MALFORMED_LINE = "tests/unit/data/test_custom.py::test_malformed_line_names_file_and_line"

Build = Callable[[Scratch, Path], list[Any]]


def option(id: str, name: str, value: str, tests: str) -> Any:
    """`bench NAME VALUE` against a closed port: refused before it is asked."""
    return bad_input(
        id, f"bench {name} {value!r}", tests, name, (name, value), "http://127.0.0.1:9"
    )


@pytest.mark.parametrize(
    ("case", "contains", "extra", "endpoint"),
    [
        option("I01", "--concurrency", "99999999999999999999", BAD_OPTIONS),
        option("I02", "--concurrency", "0", BENCH_BAD),
        option("I03", "--concurrency", "-4", ""),
        option("I04", "--concurrency", "65537", ""),
        option("I05", "--concurrency", "1,x", BAD_OPTIONS),
        option("I06", "--concurrency", "", ""),
        option("I07", "--request-timeout", "0", BAD_OPTIONS),
        option("I08", "--request-timeout", "-5", BAD_OPTIONS),
        option("I09", "--request-timeout", "nan", ""),
        option("I10", "--request-timeout", "inf", BAD_OPTIONS),
        option("I11", "--temperature", "nan", BAD_OPTIONS),
        option("I12", "--temperature", "inf", BAD_OPTIONS),
        option("I13", "--temperature", "-1", ""),
        option("I14", "--max-tokens", "0", BAD_OPTIONS),
        option("I15", "--max-tokens", "-3", ""),
        option("I16", "--max-tokens", "lots", ""),
        option("I17", "--repeats", "0", ""),
        option("I18", "--gpus", "0", ""),
        option("I19", "--warmup", "-1", ""),
        option("I20", "--num-prompts", "0", ""),
        option("I21", "--api", "grpc", ""),
        option("I22", "--client", "curl", ""),
        bad_input("I23", "bench --endpoint not a URL", "", "not-a-url", (), "not-a-url"),
        bad_input(
            "I24",
            "bench --api-key-env naming an unset variable",
            "",
            "SWEEP_UNSET_KEY",
            ("--api-key-env", "SWEEP_UNSET_KEY"),
            "http://127.0.0.1:9",
        ),
    ],
)
def test_bench_refuses_a_bad_option(
    case: FaultCase,
    contains: str,
    extra: tuple[str, ...],
    endpoint: str,
    scratch: Scratch,
    observe: Observed,
) -> None:
    folder = scratch.dir("input")
    outcome = scratch.cli(*bench_argv(endpoint, folder / "o", *extra))
    observe(outcome)
    assert_refused(outcome, contains, folder / "o")


def write_file(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


def dataset(make: Callable[[Path], str]) -> Build:
    """`bench` of the dataset `make(folder)` writes or names, against the case's emulator."""
    return lambda scratch, folder: bench_argv(
        scratch.emulator_url(), folder / "o", dataset=make(folder)
    )


def options(*extra: str) -> Build:
    """`bench` of DATA with `extra` options, against the case's emulator."""
    return lambda scratch, folder: bench_argv(
        scratch.emulator_url(), folder / "o", *extra, dataset=DATA
    )


@pytest.mark.parametrize(
    ("case", "contains", "build"),
    [
        bad_input(
            "I25",
            "bench dataset: missing file",
            BENCH_BAD,
            "nosuch.jsonl",
            dataset(lambda f: str(f / "nosuch.jsonl")),
            server=True,
        ),
        bad_input(
            "I26",
            "bench dataset: a bad JSONL line",
            MALFORMED_LINE,
            "bad.jsonl:2",
            dataset(
                lambda f: write_file(
                    f, "bad.jsonl", '{"category": "a", "turns": ["x"]}\n{bad json\n'
                )
            ),
            server=True,
        ),
        bad_input(
            "I27",
            "bench dataset: empty file",
            BENCH_BAD,
            "empty.jsonl",
            dataset(lambda f: write_file(f, "empty.jsonl", "")),
            server=True,
        ),
        bad_input(
            "I28",
            "bench dataset: placeholder rows",
            f"{FAULTS_TEST}::test_every_workload_dataset_is_checked_before_any_server_starts",
            "placeholder",
            dataset(lambda f: f"speed-bench:qualitative:{PLACEHOLDERS}"),
            server=True,
        ),
        bad_input(
            "I29",
            "bench dataset: unknown SPEED-Bench config",
            "",
            "nosuchsplit",
            dataset(lambda f: "speed-bench:nosuchsplit"),
            server=True,
        ),
        bad_input(
            "I30",
            "bench dataset: a row without turns",
            MALFORMED_LINE,
            "noturns.jsonl",
            dataset(lambda f: write_file(f, "noturns.jsonl", '{"category": "a"}\n')),
            server=True,
        ),
        bad_input(
            "I31",
            "bench --category unknown",
            "tests/unit/data/test_custom.py::test_unknown_category_names_the_available_ones",
            "nosuch",
            options("--category", "nosuch"),
            server=True,
        ),
        bad_input(
            "I32",
            "bench --num-prompts above the rows with --strict",
            "",
            "99",
            options("--num-prompts", "99", "--strict"),
            server=True,
        ),
        bad_input(
            "I33",
            "bench --max-tokens above the server's max_model_len",
            f"{FAULTS_TEST}::test_bench_max_tokens_above_the_served_context_is_refused_before_any_"
            "request",
            "max_model_len = 64",
            options("--max-tokens", "100"),
            server=True,
        ),
    ],
)
def test_bench_refuses_bad_input_at_a_live_server(
    case: FaultCase, contains: str, build: Build, scratch: Scratch, observe: Observed
) -> None:
    folder = scratch.dir("input")
    outcome = scratch.cli(*build(scratch, folder))
    observe(outcome)
    assert_refused(outcome, contains, folder / "o")
