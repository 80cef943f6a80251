"""Suite TOML: loading, merging, errors, --set overrides, expansion, the shipped suites."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from harness import REPO

from specbench.common.errors import SpecbenchError
from specbench.launch import build_argv
from specbench.suite import Cell, describe_suite, load_suite, parse_override

SUITES = REPO / "suites"

MINIMAL = """\
name = "mini"
repeats = 2

[target]
model = "org/target"
tensor_parallel_size = 2
env = { VLLM_A = "1" }

[servers.base]
baseline = true

[servers.spec]
env = { VLLM_B = "2" }
speculative = { method = "eagle3", model = "./draft", num_speculative_tokens = 3 }

[[workloads]]
dataset = "speed-bench:qualitative"
concurrency = [1, 4]
max_tokens = 64

[[workloads]]
dataset = "data/custom.jsonl"
categories = ["coding"]
concurrency = [8]
max_tokens = 32
max_model_len = 8192
repeats = 1
"""


def write(tmp_path: Path, text: str, name: str = "suite.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(path: Path, overrides: tuple[str, ...] = ()) -> str:
    with pytest.raises(SpecbenchError) as caught:
        load_suite(path, overrides)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_servers_merge_over_target_and_paths_resolve_against_the_suite(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, MINIMAL))
    assert suite.name == "mini"
    assert suite.baseline == "base"
    base, spec = suite.servers["base"], suite.servers["spec"]
    assert base.model == spec.model == "org/target"
    assert base.tensor_parallel_size == spec.tensor_parallel_size == 2
    assert base.env == {"VLLM_A": "1"}
    assert spec.env == {"VLLM_A": "1", "VLLM_B": "2"}
    assert base.speculative is None
    assert spec.speculative is not None
    assert spec.speculative.model == str(tmp_path / "draft")
    assert suite.workloads[0].dataset == "speed-bench:qualitative"
    assert suite.workloads[1].dataset == str(tmp_path / "data" / "custom.jsonl")
    assert suite.workloads[0].temperature == 0.0
    assert suite.gpus_for("spec") == 2


def test_expand_order_repeats_and_max_model_len_override(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, MINIMAL))
    keys = [cell.key for cell in suite.expand()]
    assert keys == [
        "base/speed-bench-qualitative/c1/r0",
        "base/speed-bench-qualitative/c1/r1",
        "base/speed-bench-qualitative/c4/r0",
        "base/speed-bench-qualitative/c4/r1",
        "base/custom+coding/c8/r0",
        "spec/speed-bench-qualitative/c1/r0",
        "spec/speed-bench-qualitative/c1/r1",
        "spec/speed-bench-qualitative/c4/r0",
        "spec/speed-bench-qualitative/c4/r1",
        "spec/custom+coding/c8/r0",
    ]
    last = suite.expand()[-1]
    assert last == Cell(
        server="spec",
        workload_index=1,
        workload="custom+coding",
        dataset=str(tmp_path / "data" / "custom.jsonl"),
        concurrency=8,
        repeat=0,
        max_model_len=8192,
    )
    assert suite.server_config_for(last).max_model_len == 8192
    assert suite.server_config_for(suite.expand()[0]) is suite.servers["base"]


def test_set_overrides_are_toml_typed(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL)
    suite = load_suite(
        path,
        (
            "servers.spec.num_speculative_tokens=4",
            "target.attention_backend=TRITON_ATTN",
            "workloads.0.concurrency=[2, 16]",
            "repeats=1",
            "gpus=8",
            'servers.base.env.VLLM_C="x"',
        ),
    )
    spec = suite.servers["spec"].speculative
    assert spec is not None and spec.num_speculative_tokens == 4
    assert suite.servers["base"].attention_backend == "TRITON_ATTN"
    assert suite.servers["base"].env == {"VLLM_A": "1", "VLLM_C": "x"}
    assert suite.workloads[0].concurrency == [2, 16]
    assert suite.repeats == 1
    assert suite.gpus_for("spec") == 8
    assert parse_override("a.b=1.5") == (["a", "b"], 1.5)
    assert parse_override("a=true") == (["a"], True)


def test_bad_override_names_the_path(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL)
    assert "expected dotted.path=value" in error_of(path, ("servers.spec",))
    assert "workloads.5 must be an index below 2" in error_of(path, ("workloads.5.max_tokens=1",))
    message = error_of(path, ("servers.spec.tp=8",))
    assert message.startswith(f"{path}: servers.spec.tp: unknown key; allowed: engine, baseline")
    assert message.endswith("(from --set 'servers.spec.tp=8')")  # the --set is named
    typo = error_of(path, ("workloads.0.max_token=3",))
    assert typo.startswith(
        f"{path}: workloads[0].max_token: unknown key; did you mean 'max_tokens'?"
    )
    assert typo.endswith("(from --set 'workloads.0.max_token=3')")


def test_unknown_key_names_file_path_and_allowed_keys(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace("num_speculative_tokens = 3", "num_spec_tokens = 3"))
    message = error_of(path)
    # The typo is named, not the "missing" field it stands for.
    assert message.startswith(
        f"{path}: servers.spec.speculative.num_spec_tokens: unknown key; "
        "did you mean 'num_speculative_tokens'? allowed: method, "
    )
    assert message.endswith("(+1 more)")
    text = MINIMAL.replace('method = "eagle3",', 'method = "eagle3", lookahead = 2,')
    message = error_of(write(tmp_path, text, "b.toml"))
    assert message == (
        f"{tmp_path / 'b.toml'}: servers.spec.speculative.lookahead: unknown key; allowed: "
        "method, model, num_speculative_tokens, attention_backend, prompt_lookup_max, "
        "prompt_lookup_min, num_speculative_tokens_per_batch_size, extra"
    )


def test_unknown_keys_at_each_level(tmp_path: Path) -> None:
    top = error_of(write(tmp_path, "colour = 1\n" + MINIMAL, "top.toml"))
    assert top.endswith(
        "colour: unknown key; allowed: name, description, repeats, launches, max_launches, "
        "launch_order, launch_seed, gpus, target, servers, workloads, slurm, slo, data_dir"
    )
    target = error_of(
        write(tmp_path, MINIMAL.replace("[target]\n", "[target]\nbaseline = true\n"), "t.toml")
    )
    assert ": target.baseline: unknown key; allowed: engine, model," in target
    workload = error_of(
        write(tmp_path, MINIMAL.replace("max_tokens = 64", "max_token = 64"), "w.toml")
    )
    assert (
        ": workloads[0].max_token: unknown key; did you mean 'max_tokens'? allowed: dataset, "
        "categories," in workload
    )


def test_unknown_speculative_method_lists_allowed(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, MINIMAL.replace('"eagle3"', '"medusa"')))
    assert message.startswith(f"{tmp_path / 'suite.toml'}: servers.spec.speculative.method: ")
    assert (
        "'medusa' is not allowed; allowed: 'eagle3', 'eagle', 'ngram', 'mtp' or 'draft_model'"
        in (message)
    )


def test_value_inherited_from_target_is_blamed_on_target(tmp_path: Path) -> None:
    message = error_of(
        write(tmp_path, MINIMAL.replace("tensor_parallel_size = 2", "tensor_parallel_size = 0"))
    )
    assert ": target.tensor_parallel_size: Input should be greater than or equal to 1" in message


def test_malformed_toml_gives_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace("max_tokens = 64", "max_tokens = = 64"))
    message = error_of(path)
    assert message.startswith(f"{path}: malformed TOML: ")
    assert "(at line 19, column 14)" in message


def test_duplicate_server_names(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + "\n[servers.base]\nbaseline = false\n")
    assert error_of(path) == (
        f"{path}: duplicate server name 'base' (line 29): each [servers.<name>] must be unique"
    )


def test_no_baseline_two_baselines_empty_matrix(tmp_path: Path) -> None:
    none = write(tmp_path, MINIMAL.replace("baseline = true", "baseline = false"), "n.toml")
    assert (
        error_of(none) == f"{none}: no server has baseline = true (servers: base, spec); mark one"
    )
    two = write(
        tmp_path, MINIMAL.replace("[servers.spec]", "[servers.spec]\nbaseline = true"), "two.toml"
    )
    assert "exactly one server may have baseline = true, got ['base', 'spec']" in error_of(two)
    no_workloads = write(tmp_path, MINIMAL.split("[[workloads]]")[0], "nw.toml")
    assert error_of(no_workloads) == (
        f"{no_workloads}: no workloads: add at least one [[workloads]] table"
    )
    no_servers = "\n".join(
        line
        for line in MINIMAL.splitlines()
        if "servers" not in line
        and "baseline" not in line
        and "speculative" not in line
        and "VLLM_B" not in line
    )
    path = write(tmp_path, no_servers, "ns.toml")
    assert error_of(path) == f"{path}: no servers: add at least one [servers.<name>] table"
    empty = write(tmp_path, MINIMAL.replace("concurrency = [8]", "concurrency = []"), "e.toml")
    assert ": workloads[1].concurrency: List should have at least 1 item" in error_of(empty)


def test_missing_file_and_bad_server_name(tmp_path: Path) -> None:
    assert error_of(tmp_path / "nope.toml") == f"suite file {tmp_path / 'nope.toml'} does not exist"
    path = write(tmp_path, MINIMAL.replace("[servers.spec]", '[servers."spec x"]'))
    assert "servers.spec x: a server name uses letters, digits" in error_of(path)


# -- the shipped suites ------------------------------------------------------------------


def test_minimax_suite_eagle3_server_is_the_amd_card_command() -> None:
    suite = load_suite(SUITES / "minimax-m3-mxfp4-eagle3.toml")
    card = shlex.split(
        "vllm serve amd/MiniMax-M3-MXFP4 --trust-remote-code --tensor-parallel-size 8 "
        "--block-size 128 --attention-backend TRITON_ATTN --moe-backend aiter "
        '--speculative-config \'{"method":"eagle3","model":"amd/MiniMax-M3-EAGLE3.1",'
        '"num_speculative_tokens":3,"attention_backend":"TRITON_ATTN"}\''
    )
    eagle3 = suite.servers["eagle3"]
    assert eagle3.env == {"VLLM_ROCM_USE_AITER": "1"}
    # The card's tokens, with --max-model-len (the card's serving point) before the spec
    # config and the per-request acceptance flag after it.
    assert build_argv(eagle3) == [
        *card[:-2],
        "--max-model-len",
        "12288",
        *card[-2:],
        "--per-request-spec-decode-metrics",
        "summary",
    ]
    assert build_argv(suite.servers["baseline"]) == [*card[:-2], "--max-model-len", "12288"]
    qualitative = suite.workloads[0]
    assert qualitative.concurrency == [1, 2, 4, 8, 16, 32, 48, 64, 128]
    assert qualitative.max_tokens == 2048
    assert [w.dataset for w in suite.workloads[1:]] == [
        f"speed-bench:throughput_{size}" for size in ("1k", "8k", "16k", "32k")
    ]
    long_cells = [cell for cell in suite.expand() if cell.workload_index > 0]
    assert {suite.server_config_for(cell).max_model_len for cell in long_cells} == {40960}
    assert suite.repeats == 2
    assert suite.gpus_for("eagle3") == 8
    assert len(suite.expand()) == 2 * (9 * 2 + 4)


def test_gqa_suite() -> None:
    suite = load_suite(SUITES / "minimax-m3-eagle3-gqa.toml")
    assert {name: config.tensor_parallel_size for name, config in suite.servers.items()} == {
        "baseline": 4,
        "eagle3": 4,
    }
    assert [(w.dataset, w.num_prompts, w.concurrency, w.temperature) for w in suite.workloads] == [
        ("mt-bench", 64, [16], 0.0),
        ("speed-bench:qualitative", 64, [16], 0.0),
    ]


def test_emulator_suite_builds_emulator_commands() -> None:
    suite = load_suite(SUITES / "emulator.toml")
    assert suite.baseline == "baseline"
    baseline = build_argv(suite.servers["baseline"], port=1)
    speculative = build_argv(suite.servers["speculative"], port=1)
    assert baseline[:4] == [sys.executable, "-m", "specbench.cli.main", "emulate"]
    assert "--no-spec" in baseline and "--acceptance" not in baseline
    position = speculative.index("--acceptance")
    assert speculative[position + 1] == "0.8,0.75,0.7"
    fixture = REPO / "tests" / "fixtures" / "speed_bench"
    assert suite.workloads[0].dataset == f"speed-bench:qualitative:{fixture}"
    assert (fixture / "data" / "speed" / "qualitative" / "test.parquet").is_file()


def test_cpu_demo_suite_points_at_the_tiny_models() -> None:
    suite = load_suite(SUITES / "cpu-demo.toml")
    # Resolved like the suite's relative paths: .cache may be a symlink (to a bigger disk).
    models = (REPO / ".cache" / "tiny-models").resolve()
    assert list(suite.servers) == ["baseline", "ngram", "eagle3"]
    eagle3 = suite.servers["eagle3"]
    assert eagle3.model == str(models / "target")
    assert eagle3.speculative is not None and eagle3.speculative.model == str(models / "eagle3")
    argv = build_argv(eagle3)
    assert argv[argv.index("--max-model-len") + 1] == "8192"
    # One launch per server serves both workloads (CI starts each real server once).
    cells = [cell for cell in suite.expand() if cell.server == "eagle3"]
    assert all(suite.server_config_for(cell) == eagle3 for cell in cells)
    start = argv.index("--dtype")
    assert argv[start : start + 3] == ["--dtype", "float32", "--enforce-eager"]
    assert eagle3.env["VLLM_CPU_KVCACHE_SPACE"] == "1"
    ngram = suite.servers["ngram"].speculative
    assert ngram is not None and (ngram.method, ngram.prompt_lookup_max) == ("ngram", 4)


def test_describe_suite_prints_matrix_and_commands() -> None:
    suite = load_suite(SUITES / "minimax-m3-mxfp4-eagle3.toml")
    text = describe_suite(suite)
    assert text.splitlines()[0].startswith("suite minimax-m3-mxfp4-eagle3: 44 cells")
    assert "  eagle3 [vllm, speculative eagle3, 8 GPU(s), 22 cells]" in text
    assert (
        "    VLLM_ROCM_USE_AITER=1 vllm serve amd/MiniMax-M3-MXFP4 --trust-remote-code "
        "--tensor-parallel-size 8 --block-size 128" in text
    )
    assert "(relaunched with --max-model-len 40960 for some workloads)" in text
    assert "  eagle3/speed-bench-throughput_8k/c48/r0" in text


def test_decoded_history_and_tokenizer_path_resolve_against_the_suite(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        "[[workloads]]", '[[workloads]]\nhistory = "decoded"\ntokenizer = "./tok"', 1
    )
    suite = load_suite(write(tmp_path, text))
    assert suite.workloads[0].history == "decoded"
    assert suite.workloads[0].tokenizer == str(tmp_path / "tok")
    broken = MINIMAL.replace("[[workloads]]", '[[workloads]]\nhistory = "decoded"', 1)
    with pytest.raises(SpecbenchError, match="needs tokenizer"):
        load_suite(write(tmp_path, broken))


def test_set_on_an_unknown_server_name_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL)
    message = error_of(path, ("servers.ghost.model=x",))
    assert message == (
        f"--set 'servers.ghost.model=x': {path} has no server 'ghost'; servers: base, spec "
        "(a new server is added in the suite file)"
    )
    assert "no server 'sepc'" in error_of(path, ("servers.sepc.num_speculative_tokens=4",))


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            "workloads.0.concurrency=[99999999999999999999]",
            "workloads[0].concurrency: concurrency values must be between 1 and 65,536",
        ),
        ("workloads.0.concurrency=[0]", "concurrency values must be between 1 and 65,536"),
        ("workloads.0.temperature=nan", "workloads[0].temperature: Input should be"),
        ("workloads.0.temperature=inf", "workloads[0].temperature: Input should be a finite"),
        ("workloads.0.temperature=-1", "workloads[0].temperature: Input should be greater"),
        ("workloads.0.request_timeout_s=0", "workloads[0].request_timeout_s: Input should be"),
        ("workloads.0.request_timeout_s=-5", "workloads[0].request_timeout_s: Input should be"),
        ("workloads.0.request_timeout_s=inf", "request_timeout_s: Input should be a finite"),
        (
            "workloads.1.max_tokens=8192",
            "workloads[1].max_tokens = 8192 leaves no room for a prompt in max_model_len = 8192 "
            "of server 'base': every request would be rejected; allowed: below 8192",
        ),
        ("target.max_model_len=64", "workloads[0].max_tokens = 64 leaves no room"),
    ],
)
def test_numbers_are_range_checked_at_the_boundary(
    tmp_path: Path, override: str, expected: str
) -> None:
    path = write(tmp_path, MINIMAL)
    message = error_of(path, (override,))
    assert message.startswith(str(path)) and expected in message, message


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "[servers.base]\nbaseline = true",
            '[servers.base]\nbaseline = "yes"',
            "servers.base.baseline: Input should be a valid boolean",
        ),
        (
            "max_tokens = 64",
            'max_tokens = "64"',
            "workloads[0].max_tokens: Input should be a valid integer",
        ),
        (
            "max_tokens = 64",
            "max_tokens = true",
            "workloads[0].max_tokens: Input should be a valid integer",
        ),
        ("repeats = 2", 'repeats = "2"', "repeats: Input should be a valid integer"),
        (
            "tensor_parallel_size = 2",
            'tensor_parallel_size = "2"',
            "target.tensor_parallel_size: Input should be a valid integer",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_not_coerced(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    # Lax validation read "yes" as true and "64" as 64: a typo changed what was measured.
    message = error_of(write(tmp_path, MINIMAL.replace(old, new, 1)))
    assert expected in message, message


def test_toml_integers_still_fill_float_fields(tmp_path: Path) -> None:
    text = MINIMAL.replace("max_tokens = 64", "max_tokens = 64\ntemperature = 1")
    assert load_suite(write(tmp_path, text)).workloads[0].temperature == 1.0
