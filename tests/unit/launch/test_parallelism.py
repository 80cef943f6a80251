"""The GPU count of a server (divisor of tok/s/GPU) is TP × PP × DP, never hidden elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.launch import build_argv
from specbench.launch.config import ServerConfig
from specbench.suite import load_suite

SUITE = """\
name = "par"

[target]
model = "org/target"
tensor_parallel_size = 4
pipeline_parallel_size = 2

[servers.base]
baseline = true
extra_args = {extra}

[[workloads]]
dataset = "speed-bench:qualitative"
concurrency = [1]
max_tokens = 16
"""


def test_pipeline_parallelism_counts_and_is_written() -> None:
    config = ServerConfig(
        model="m", tensor_parallel_size=4, pipeline_parallel_size=2, data_parallel_size=2
    )
    assert config.gpus == 16
    argv = build_argv(config, vllm_executable="vllm")
    assert argv[3:9] == [
        "--tensor-parallel-size", "4", "--pipeline-parallel-size", "2",
        "--data-parallel-size", "2",
    ]  # fmt: skip
    assert "--pipeline-parallel-size" not in build_argv(ServerConfig(model="m"))


def test_a_suite_counts_pp_into_the_divisor(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.replace("{extra}", '["--enforce-eager"]'))
    assert load_suite(path, ()).gpus_for("base") == 8


@pytest.mark.parametrize(
    ("arg", "field"),
    [
        (["-tp", "8"], "tensor_parallel_size"),
        (["--tensor-parallel-size=8"], "tensor_parallel_size"),
        (["--pipeline_parallel_size", "2"], "pipeline_parallel_size"),
        (["-pp", "2"], "pipeline_parallel_size"),
        (["--data-parallel-size", "2"], "data_parallel_size"),
        (["-dp", "2"], "data_parallel_size"),
    ],
)
def test_parallel_sizes_in_extra_args_are_refused_in_one_line(
    tmp_path: Path, arg: list[str], field: str
) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.replace("{extra}", repr(arg).replace("'", '"')))
    with pytest.raises(SpecbenchError) as caught:
        load_suite(path, ())
    message = str(caught.value)
    assert "\n" not in message
    assert "extra_args" in message and f"give `{field} = N`" in message


def test_similar_flags_pass_through() -> None:
    config = ServerConfig(model="m", extra_args=["--data-parallel-size-local", "1"])
    assert config.gpus == 1


def test_fields_added_at_their_default_keep_the_suite_hash() -> None:
    from specbench.run.plan import suite_hash

    # The hash of suites/cpu-demo.toml before pipeline_parallel_size and prompt_log existed
    # (commit 17164c2): results measured then still resume.
    suite = load_suite(Path(__file__).resolve().parents[3] / "suites" / "cpu-demo.toml", ())
    assert suite_hash(suite) == "7b74ce21738312afb9d198a218f110966517e712c2e54a30acc40f47b177f6ac"
