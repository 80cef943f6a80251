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


def test_fields_added_at_their_default_keep_the_suite_hash(tmp_path: Path) -> None:
    from specbench.run.plan import suite_hash

    # The hash this suite had before pipeline_parallel_size, prompt_log and per_chunk_usage
    # existed (computed with commit 17164c2): results measured then still resume. The suite
    # names no relative path, so its hash does not depend on where the checkout is.
    path = tmp_path / "suite.toml"
    path.write_text(
        'name = "hash-check"\nrepeats = 1\n\n'
        '[target]\nmodel = "/models/target"\nmax_model_len = 8192\n'
        'extra_args = ["--dtype", "float32"]\n\n'
        "[servers.baseline]\nbaseline = true\n\n"
        "[servers.ngram]\n"
        'speculative = { method = "ngram", num_speculative_tokens = 3, prompt_lookup_max = 4 }\n\n'
        '[[workloads]]\ndataset = "speed-bench:qualitative"\nconcurrency = [1, 4]\n'
        "max_tokens = 64\n"
    )
    suite = load_suite(path, ())
    assert suite_hash(suite) == "c4726fb5a40d77e5ff6869fc63b3744c9fe00d9e008cae9ec658683bf3677f83"


def test_a_new_token_leaves_the_suite_hash_unchanged(tmp_path: Path) -> None:
    from specbench.run.plan import suite_hash

    def suite_with(token: str):
        path = tmp_path / "suite.toml"
        path.write_text(
            'name = "secrets"\n[target]\nmodel = "/models/target"\n'
            f'env = {{ HF_TOKEN = "{token}", VLLM_LOGGING_LEVEL = "INFO" }}\n'
            "[servers.baseline]\nbaseline = true\n"
            '[[workloads]]\ndataset = "speed-bench:qualitative"\nconcurrency = [1]\n'
            "max_tokens = 64\n"
        )
        return load_suite(path, ())

    old, new = suite_with("hf_old"), suite_with("hf_new")
    assert suite_hash(old) == suite_hash(new)
    assert suite_hash(old, redact=False) != suite_hash(new, redact=False)
    # Resuming is decided per server and workload (tests/unit/run/test_resume.py).
