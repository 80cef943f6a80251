"""A server names a K schedule (issue 40, requirement 5): the field reaches vLLM's
`--speculative-config` and the emulator, is part of the server's identity, "advised" is read
from a results directory's `report/advice.json`, and every bad schedule is one line naming
`servers.NAME.speculative.num_speculative_tokens_per_batch_size` when the suite loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest
from harness import DATA, run_cli

from specbench.common.errors import SpecbenchError
from specbench.launch import build_argv
from specbench.launch.config import METHODS_WITHOUT_SCHEDULE, SCHEDULE_KEY, SpeculativeMethod
from specbench.run.plan import resolved_suite, suite_hash
from specbench.suite import describe_schedules, describe_suite, load_suite

FIELD = "speculative.num_speculative_tokens_per_batch_size"

VLLM_SUITE = """
name = "schedule"
[target]
model = "org/target"
tensor_parallel_size = 8
{target}
[servers.baseline]
baseline = true

[servers.dyn]
speculative = {{ method = "{method}", model = "org/draft", num_speculative_tokens = {k}{schedule} }}
{server}
[[workloads]]
dataset = "speed-bench:qualitative"
concurrency = [1, 48]
max_tokens = 64
"""


def write(
    tmp_path: Path,
    schedule: str = "",
    *,
    k: str = "5",
    method: str = "eagle3",
    server: str = "",
    target: str = "",
) -> Path:
    """A vLLM suite whose `dyn` server has `speculative = {..., <schedule>}` (TOML text)."""
    path = tmp_path / "suite.toml"
    text = VLLM_SUITE.format(
        k=k,
        method=method,
        schedule=f", {schedule}" if schedule else "",
        server=server,
        target=target,
    )
    path.write_text(text)
    return path


def ranges(value: str) -> str:
    return f"num_speculative_tokens_per_batch_size = {value}"


def error_of(path: Path) -> str:
    with pytest.raises(SpecbenchError) as caught:
        load_suite(path)
    message = str(caught.value)
    assert "\n" not in message
    return message


def speculative_json(argv: list[str]) -> str:
    return argv[argv.index("--speculative-config") + 1]


def test_the_schedule_is_written_into_the_speculative_config_after_the_named_keys(
    tmp_path: Path,
) -> None:
    text = ranges("[[1, 4, 5], [5, 16, 3], [17, 1024, 1]]") + ", extra = { enforce_eager = true }"
    server = load_suite(write(tmp_path, text)).servers["dyn"]
    assert speculative_json(build_argv(server)) == (
        '{"method":"eagle3","model":"org/draft","num_speculative_tokens":5,'
        '"num_speculative_tokens_per_batch_size":[[1,4,5],[5,16,3],[17,1024,1]],'
        '"enforce_eager":true}'
    )
    assert server.k_schedule == [[1, 4, 5], [5, 16, 3], [17, 1024, 1]]


def test_the_baseline_stays_a_baseline(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, ranges("[[1, 4, 5], [5, 64, 1]]")))
    baseline = suite.servers["baseline"]
    assert baseline.k_schedule is None
    argv = build_argv(baseline)
    assert "--speculative-config" not in argv
    assert "--per-request-spec-decode-metrics" not in argv
    # The scheduled server keeps the per-request metrics a speculative server gets.
    argv = build_argv(suite.servers["dyn"])
    assert argv[argv.index("--per-request-spec-decode-metrics") + 1] == "summary"


def test_a_schedule_is_part_of_the_servers_identity(tmp_path: Path) -> None:
    fixed = load_suite(write(tmp_path, ""))
    # Absent, the speculative table hashes as before the field existed.
    assert (
        "num_speculative_tokens_per_batch_size"
        not in (resolved_suite(fixed)["servers"]["dyn"]["speculative"])
    )
    hashes = {
        suite_hash(load_suite(write(tmp_path, text)))
        for text in ("", ranges("[[1, 4, 5], [5, 64, 1]]"), ranges("[[1, 4, 5], [5, 64, 2]]"))
    }
    assert len(hashes) == 3
    scheduled = load_suite(write(tmp_path, ranges("[[1, 4, 5], [5, 64, 1]]")))
    assert resolved_suite(scheduled)["servers"]["dyn"]["speculative"][
        "num_speculative_tokens_per_batch_size"
    ] == [[1, 4, 5], [5, 64, 1]]


@pytest.mark.parametrize(
    ("schedule", "problem"),
    [
        ("[[2, 4, 5]]", "the first range [2, 4, 5] must start at 1"),
        ("[[1, 8, 5], [5, 16, 3]]", "range [5, 16, 3] overlaps [1, 8, 5]"),
        ("[[5, 16, 3], [1, 4, 5]]", "range [1, 4, 5] comes after [5, 16, 3]: sort the ranges"),
        ("[[1, 4, -1]]", "range [1, 4, -1]: K must be 0 or more"),
        ("[]", "needs at least one range"),
        (
            "[[1, 4, 6], [5, 64, 1]]",
            "range [1, 4, 6] has K = 6, above num_speculative_tokens = 5 (the maximum): vLLM "
            "would clamp it to 5, so the schedule would not run as written",
        ),
    ],
)
def test_a_schedule_that_breaks_vllms_rules_is_one_line_naming_the_field(
    tmp_path: Path, schedule: str, problem: str
) -> None:
    path = write(tmp_path, ranges(schedule))
    assert error_of(path).startswith(f"{path}: servers.dyn.{FIELD}: {problem}")


def test_a_schedule_under_data_parallelism_is_refused_unless_the_server_knows(
    tmp_path: Path,
) -> None:
    schedule = ranges("[[1, 4, 5], [5, 64, 1]]")
    path = write(tmp_path, schedule, target="data_parallel_size = 2")
    assert error_of(path) == (
        f"{path}: servers.dyn.{FIELD}: vLLM 0.32 silently drops a K schedule when "
        "data_parallel_size > 1 (here 2): every step would draft the maximum; set "
        "schedule_with_data_parallel = true to measure it anyway, or use DP 1"
    )
    known = write(
        tmp_path,
        schedule,
        target="data_parallel_size = 2",
        server="schedule_with_data_parallel = true",
    )
    argv = build_argv(load_suite(known).servers["dyn"])
    assert argv[argv.index("--data-parallel-size") + 1] == "2"
    assert '"num_speculative_tokens_per_batch_size":[[1,4,5],[5,64,1]]' in speculative_json(argv)


@pytest.mark.parametrize("method", sorted(METHODS_WITHOUT_SCHEDULE))
def test_a_schedule_on_a_method_that_crashes_under_one_is_refused(
    tmp_path: Path, method: str
) -> None:
    # vLLM asserts K equals the maximum for these: none is a method specbench describes yet,
    # so the method itself is refused; the schedule check stands for when one is added.
    assert method not in get_args(SpeculativeMethod)
    path = write(tmp_path, ranges("[[1, 4, 5], [5, 64, 1]]"), method=method)
    assert error_of(path).startswith(
        f"{path}: servers.dyn.speculative.method: {method!r} is not allowed"
    )


def test_a_schedule_on_a_k_sweep_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, ranges("[[1, 4, 3], [5, 64, 1]]"), k="[1, 2, 3]")
    assert error_of(path) == (
        f"{path}: servers.dyn.{FIELD}: a K schedule on a K sweep [1, 2, 3]; a schedule has one "
        "maximum (num_speculative_tokens): give one K for the scheduled server, and sweep the "
        "fixed Ks in another server"
    )


def test_a_schedule_inside_extra_is_refused_alone_or_beside_the_field(tmp_path: Path) -> None:
    both = write(
        tmp_path,
        ranges("[[1, 4, 5]]") + ", extra = { num_speculative_tokens_per_batch_size = [[1, 4, 5]] }",
    )
    assert error_of(both) == (
        f"{both}: servers.dyn.speculative.extra: num_speculative_tokens_per_batch_size both as "
        "the field and inside extra: set the schedule once, as speculative."
        "num_speculative_tokens_per_batch_size, where it is checked before the server starts"
    )
    alone = write(tmp_path, "extra = { num_speculative_tokens_per_batch_size = [[1, 4, 5]] }")
    assert error_of(alone).startswith(
        f"{alone}: servers.dyn.speculative.extra: num_speculative_tokens_per_batch_size inside "
        "extra: set the schedule once"
    )


EMULATOR_SUITE = """
name = "emu-schedule"
[target]
engine = "emulator"
model = "emu"
emulator = {{ step_ms = 1.0{target} }}
[servers.baseline]
baseline = true
[servers.dyn]
speculative = {{ method = "eagle3", model = "d", num_speculative_tokens = 4{schedule} }}
{server}
[[workloads]]
dataset = "{data}"
concurrency = [1]
max_tokens = 8
"""


def write_emulator(tmp_path: Path, schedule: str, *, target: str = "", server: str = "") -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(
        EMULATOR_SUITE.format(
            schedule=f", {schedule}" if schedule else "", target=target, server=server, data=DATA
        )
    )
    return path


def test_an_emulator_server_runs_the_schedule_of_its_speculative_table(tmp_path: Path) -> None:
    suite = load_suite(write_emulator(tmp_path, ranges("[[1, 2, 4], [3, 64, 1]]")))
    argv = build_argv(suite.servers["dyn"])
    assert argv.count("--num-speculative-tokens-per-batch-size") == 1
    assert argv[argv.index("--num-speculative-tokens-per-batch-size") + 1] == "[[1,2,4],[3,64,1]]"
    assert argv[argv.index("--num-speculative-tokens") + 1] == "4"
    baseline = build_argv(suite.servers["baseline"])
    assert "--no-spec" in baseline
    assert "--num-speculative-tokens-per-batch-size" not in baseline


def test_the_emulator_setting_still_schedules_and_a_baseline_ignores_it(tmp_path: Path) -> None:
    # The `[emulator]` setting, inherited from [target] by both servers: the speculative one
    # runs it, the baseline stays a baseline.
    inherited = ", num_speculative_tokens_per_batch_size = [[1, 64, 2]]"
    suite = load_suite(write_emulator(tmp_path, "", target=inherited))
    argv = build_argv(suite.servers["dyn"])
    assert argv[argv.index("--num-speculative-tokens-per-batch-size") + 1] == "[[1,64,2]]"
    baseline = build_argv(suite.servers["baseline"])
    assert "--no-spec" in baseline
    assert "--num-speculative-tokens-per-batch-size" not in baseline
    assert suite.servers["baseline"].k_schedule is None


def test_a_schedule_given_in_both_places_is_refused(tmp_path: Path) -> None:
    path = write_emulator(
        tmp_path,
        ranges("[[1, 2, 4], [3, 64, 1]]"),
        server="emulator = { num_speculative_tokens_per_batch_size = [[1, 64, 2]] }",
    )
    assert error_of(path) == (
        f"{path}: servers.dyn.{FIELD}: the schedule is also given as emulator."
        "num_speculative_tokens_per_batch_size: give it once, here (vLLM and the emulator "
        "both read it from the speculative table)"
    )


def write_advice(folder: Path, schedule: object) -> Path:
    """folder/report/advice.json as the advice report writes it (with a recommendation)."""
    (folder / "report").mkdir(parents=True)
    document = {
        "recommendations": [
            {"workload": "tiny", "concurrency": 1, "objective": "output_tok_s_per_gpu", "k": 4}
        ],
        "excluded": [],
    }
    if schedule is not None:
        document["schedule"] = schedule
    advice = folder / "report" / "advice.json"
    advice.write_text(json.dumps(document))
    return advice


ADVISED_SCHEDULE = {
    "method": "eagle3",
    "model": "org/draft",
    "num_speculative_tokens": 4,
    "num_speculative_tokens_per_batch_size": [[1, 3, 4], [4, 15, 2], [16, 1024, 0]],
}
ADVISED = 'num_speculative_tokens_per_batch_size = "advised", advised_from = "runs/sweep"'


def test_advised_is_read_from_the_results_directory_relative_to_the_suite(
    tmp_path: Path,
) -> None:
    advice = write_advice(tmp_path / "runs" / "sweep", ADVISED_SCHEDULE)
    advised = load_suite(write(tmp_path, ADVISED))
    server = advised.servers["dyn"]
    assert server.k_schedule == [[1, 3, 4], [4, 15, 2], [16, 1024, 0]]
    assert '"num_speculative_tokens_per_batch_size":[[1,3,4],[4,15,2],[16,1024,0]]' in (
        speculative_json(build_argv(server))
    )
    assert advised.advised_schedules == {"dyn": str(advice)}
    # The identity is the schedule run: the same as those ranges written by hand.
    explicit = load_suite(write(tmp_path, ranges("[[1, 3, 4], [4, 15, 2], [16, 1024, 0]]")))
    assert suite_hash(advised) == suite_hash(explicit)
    assert describe_schedules(advised) == [
        "K schedule: dyn runs [[1,3,4],[4,15,2],[16,1024,0]] (batch size [start, end, K]), "
        f"K at most 5, advised from {advice}"
    ]
    assert describe_schedules(advised)[0] in describe_suite(advised).splitlines()


@pytest.mark.parametrize(
    ("advice", "schedule", "problem"),
    [
        (None, ADVISED, "advised_from: results directory {folder} does not exist"),
        ("no-file", ADVISED, "advised_from: {folder}/report/advice.json does not exist"),
        ("no-schedule", ADVISED, "advised_from: {advice} holds no schedule object"),
        (
            "bad-ranges",
            ADVISED,
            "advised_from: {advice}: schedule.num_speculative_tokens_per_batch_size: the first "
            "range [2, 8, 4] must start at 1",
        ),
        (
            "ok",
            'num_speculative_tokens_per_batch_size = "advised"',
            'num_speculative_tokens_per_batch_size: "advised" needs advised_from = "RESULTS_DIR"',
        ),
        (
            "ok",
            'advised_from = "runs/sweep"',
            "advised_from: it names the results directory an advised schedule is read from; "
            'set num_speculative_tokens_per_batch_size = "advised" too, or drop it',
        ),
        (
            "ok",
            'num_speculative_tokens_per_batch_size = "auto"',
            "num_speculative_tokens_per_batch_size: 'auto' is not allowed; give ranges",
        ),
    ],
)
def test_a_bad_advised_schedule_is_one_line_naming_the_field_and_file(
    tmp_path: Path, advice: str | None, schedule: str, problem: str
) -> None:
    folder = tmp_path / "runs" / "sweep"
    if advice == "no-file":
        folder.mkdir(parents=True)
    elif advice is not None:
        content = {
            "ok": ADVISED_SCHEDULE,
            "no-schedule": None,
            "bad-ranges": {**ADVISED_SCHEDULE, SCHEDULE_KEY: [[2, 8, 4]]},
        }[advice]
        write_advice(folder, content)
    path = write(tmp_path, schedule)
    expected = problem.format(folder=folder, advice=folder / "report" / "advice.json")
    assert error_of(path).startswith(f"{path}: servers.dyn.speculative.{expected}")


def test_a_suite_k_below_the_advised_maximum_is_refused(tmp_path: Path) -> None:
    advice = write_advice(tmp_path / "runs" / "sweep", ADVISED_SCHEDULE)
    path = write(tmp_path, ADVISED, k="3")
    assert error_of(path) == (
        f"{path}: servers.dyn.speculative.num_speculative_tokens: 3 is smaller than the advised "
        f"schedule's num_speculative_tokens = 4 ({advice}); raise it to 4 so every advised K "
        "runs as written"
    )


def test_run_refuses_a_bad_schedule_in_one_line_with_exit_2_before_any_server(
    tmp_path: Path,
) -> None:
    path = write_emulator(tmp_path, ranges("[[1, 2, 9]]"))
    out = tmp_path / "out"
    done = run_cli("run", path, "--output", out)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {path}: servers.dyn.{FIELD}: range [1, 2, 9] has K = 9")
    assert not out.exists()  # nothing started, nothing written
