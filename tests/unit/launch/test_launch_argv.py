"""The `vllm serve` and emulator argv/env, checked token by token against the AMD card."""

from __future__ import annotations

import json
import shlex
import sys

import pytest
from pydantic import ValidationError

from specbench.launch import (
    EmulatorOverrides,
    ServerConfig,
    SpeculativeConfig,
    build_argv,
    build_env,
    render_command,
    speculative_config_json,
)

# REFERENCE.md §1, verbatim.
AMD_CARD = (
    "VLLM_ROCM_USE_AITER=1 vllm serve amd/MiniMax-M3-MXFP4 --trust-remote-code "
    "--tensor-parallel-size 8 --block-size 128 --attention-backend TRITON_ATTN "
    "--moe-backend aiter --speculative-config "
    '\'{"method":"eagle3","model":"amd/MiniMax-M3-EAGLE3.1","num_speculative_tokens":3,'
    '"attention_backend":"TRITON_ATTN"}\''
)


def card_config(**changes: object) -> ServerConfig:
    fields: dict[str, object] = {
        "model": "amd/MiniMax-M3-MXFP4",
        "trust_remote_code": True,
        "tensor_parallel_size": 8,
        "block_size": 128,
        "attention_backend": "TRITON_ATTN",
        "moe_backend": "aiter",
        "env": {"VLLM_ROCM_USE_AITER": "1"},
        "speculative": SpeculativeConfig(
            method="eagle3",
            model="amd/MiniMax-M3-EAGLE3.1",
            num_speculative_tokens=3,
            attention_backend="TRITON_ATTN",
        ),
        "per_request_spec_decode_metrics": False,
    }
    fields.update(changes)
    return ServerConfig.model_validate(fields)


def card_tokens() -> tuple[dict[str, str], list[str]]:
    tokens = shlex.split(AMD_CARD)
    env_name, env_value = tokens[0].split("=")
    return {env_name: env_value}, tokens[1:]


def test_card_argv_matches_token_by_token() -> None:
    env, expected = card_tokens()
    config = card_config()
    argv = build_argv(config)
    assert len(argv) == len(expected)
    for position, (got, want) in enumerate(zip(argv, expected, strict=True)):
        assert got == want, f"token {position}: {got!r} != {want!r}"
    assert config.env == env


def test_card_speculative_json_key_order() -> None:
    spec = card_config().speculative
    assert spec is not None
    text = speculative_config_json(spec)
    assert text == (
        '{"method":"eagle3","model":"amd/MiniMax-M3-EAGLE3.1",'
        '"num_speculative_tokens":3,"attention_backend":"TRITON_ATTN"}'
    )
    assert list(json.loads(text)) == [
        "method",
        "model",
        "num_speculative_tokens",
        "attention_backend",
    ]


def test_card_renders_back_to_the_published_line() -> None:
    config = card_config()
    assert render_command(build_argv(config), config.env) == AMD_CARD


def test_per_request_metrics_flag_follows_the_card_and_host_port_come_last() -> None:
    _, expected = card_tokens()
    argv = build_argv(card_config(per_request_spec_decode_metrics=True), host="0.0.0.0", port=8123)
    assert argv == [
        *expected,
        "--per-request-spec-decode-metrics",
        "summary",
        "--host",
        "0.0.0.0",
        "--port",
        "8123",
    ]


def test_no_per_request_flag_without_speculation() -> None:
    argv = build_argv(card_config(speculative=None, per_request_spec_decode_metrics=True))
    assert "--per-request-spec-decode-metrics" not in argv
    assert "--speculative-config" not in argv
    assert argv[-2:] == ["--moe-backend", "aiter"]


def test_every_server_setting_reaches_argv_in_documented_order() -> None:
    config = ServerConfig(
        model="/models/target",
        served_model_name="tgt",
        tensor_parallel_size=2,
        data_parallel_size=4,
        max_model_len=40960,
        block_size=64,
        gpu_memory_utilization=0.85,
        extra_args=["--dtype", "float32", "--enforce-eager"],
        speculative=SpeculativeConfig(
            method="ngram", num_speculative_tokens=4, prompt_lookup_max=5, prompt_lookup_min=2
        ),
    )
    assert build_argv(config, vllm_executable="/opt/vllm/bin/vllm") == [
        "/opt/vllm/bin/vllm",
        "serve",
        "/models/target",
        "--served-model-name",
        "tgt",
        "--tensor-parallel-size",
        "2",
        "--data-parallel-size",
        "4",
        "--block-size",
        "64",
        "--max-model-len",
        "40960",
        "--gpu-memory-utilization",
        "0.85",
        "--dtype",
        "float32",
        "--enforce-eager",
        "--speculative-config",
        '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":5,"prompt_lookup_min":2}',
        "--per-request-spec-decode-metrics",
        "summary",
    ]
    assert config.gpus == 8


def test_extra_speculative_keys_pass_through_after_named_ones() -> None:
    spec = SpeculativeConfig(
        method="mtp",
        num_speculative_tokens=1,
        extra={"draft_tensor_parallel_size": 1, "disable_padded_drafter_batch": True},
    )
    assert speculative_config_json(spec) == (
        '{"method":"mtp","num_speculative_tokens":1,'
        '"draft_tensor_parallel_size":1,"disable_padded_drafter_batch":true}'
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"method": "medusa2", "num_speculative_tokens": 3}, "literal_error"),
        ({"method": "eagle3", "num_speculative_tokens": 3}, "needs `model`"),
        ({"method": "ngram", "num_speculative_tokens": 0}, "greater_than_equal"),
        (
            {"method": "eagle", "model": "d", "num_speculative_tokens": 2, "prompt_lookup_max": 3},
            "only to method 'ngram'",
        ),
        (
            {"method": "ngram", "num_speculative_tokens": 2, "extra": {"method": "eagle"}},
            "extra repeats named keys",
        ),
        ({"method": "ngram", "num_speculative_tokens": 2, "lookahead": 1}, "extra_forbidden"),
    ],
)
def test_speculative_config_rejects(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SpeculativeConfig.model_validate(fields)
    text = str(caught.value) + " ".join(error["type"] for error in caught.value.errors())
    assert message in text


def test_env_overlays_config_on_base() -> None:
    config = card_config(env={"VLLM_ROCM_USE_AITER": "1", "HIP_VISIBLE_DEVICES": "0,1"})
    env = build_env(config, {"PATH": "/usr/bin", "HIP_VISIBLE_DEVICES": "7"})
    assert env == {"PATH": "/usr/bin", "HIP_VISIBLE_DEVICES": "0,1", "VLLM_ROCM_USE_AITER": "1"}


def test_emulator_argv_speculative() -> None:
    config = ServerConfig(
        engine="emulator",
        model="emu",
        max_model_len=4096,
        speculative=SpeculativeConfig(method="eagle3", model="d", num_speculative_tokens=3),
        emulator=EmulatorOverrides(
            acceptance=[0.8, 0.75, 0.7],
            prefill_ms=5.0,
            step_ms=4.0,
            per_request_step_ms=0.25,
            seed=7,
            corrupt_rate=0.1,
        ),
    )
    assert build_argv(config, host="127.0.0.1", port=9000) == [
        sys.executable,
        "-m",
        "specbench.cli.main",
        "emulate",
        "--model",
        "emu",
        "--num-speculative-tokens",
        "3",
        "--acceptance",
        "0.8,0.75,0.7",
        "--prefill-ms",
        "5.0",
        "--step-ms",
        "4.0",
        "--per-request-step-ms",
        "0.25",
        "--seed",
        "7",
        "--corrupt-rate",
        "0.1",
        "--max-model-len",
        "4096",
        "--host",
        "127.0.0.1",
        "--port",
        "9000",
    ]


def test_emulator_argv_without_speculation_is_no_spec() -> None:
    config = ServerConfig(
        engine="emulator",
        model="emu",
        served_model_name="served",
        emulator=EmulatorOverrides(acceptance=[0.5], seed=1),
    )
    assert build_argv(config, python="/py", port=1) == [
        "/py",
        "-m",
        "specbench.cli.main",
        "emulate",
        "--model",
        "served",
        "--no-spec",
        "--seed",
        "1",
        "--port",
        "1",
    ]


def test_emulator_table_needs_emulator_engine() -> None:
    with pytest.raises(ValidationError, match="engine = 'emulator'"):
        ServerConfig(model="m", emulator=EmulatorOverrides(seed=1))


def test_server_config_is_frozen_and_strict() -> None:
    config = card_config()
    with pytest.raises(ValidationError):
        config.model = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        ServerConfig.model_validate({"model": "m", "tensor_parallel": 8})


def test_env_numbers_become_text_but_booleans_are_refused() -> None:
    config = ServerConfig.model_validate({"model": "m", "env": {"A": 1, "B": 0.5, "C": "x"}})
    assert config.env == {"A": "1", "B": "0.5", "C": "x"}
    with pytest.raises(ValidationError, match="valid string"):
        ServerConfig.model_validate({"model": "m", "env": {"A": True}})


def test_per_request_metrics_detailed_level() -> None:
    argv = build_argv(card_config(per_request_spec_decode_metrics="detailed"))
    index = argv.index("--per-request-spec-decode-metrics")
    assert argv[index + 1] == "detailed"


def test_emulator_argv_reasoning_decay_and_detailed_metrics() -> None:
    config = ServerConfig(
        engine="emulator",
        model="emu",
        speculative=SpeculativeConfig(method="eagle3", model="d", num_speculative_tokens=2),
        emulator=EmulatorOverrides(
            reasoning_tokens=300,
            reasoning_acceptance=[0.5, 0.4],
            reasoning_output="inline",
            acceptance_decay=0.9,
            acceptance_decay_tokens=128,
            per_step_spec_metrics=True,
        ),
    )
    assert build_argv(config, python="/py", port=1)[6:] == [
        "--num-speculative-tokens",
        "2",
        "--per-request-spec-decode-metrics",
        "detailed",
        "--reasoning-acceptance",
        "0.5,0.4",
        "--reasoning-tokens",
        "300",
        "--reasoning-output",
        "inline",
        "--acceptance-decay",
        "0.9",
        "--acceptance-decay-tokens",
        "128",
        "--port",
        "1",
    ]


def test_the_server_level_detailed_reaches_the_emulator_too() -> None:
    # A suite asks for the acceptance cuts once, as for vLLM; the emulator honours it.
    speculative = SpeculativeConfig(method="eagle3", model="d", num_speculative_tokens=2)
    config = ServerConfig(
        engine="emulator",
        model="emu",
        speculative=speculative,
        per_request_spec_decode_metrics="detailed",
    )
    argv = build_argv(config, python="/py", port=1)
    assert argv[argv.index("--per-request-spec-decode-metrics") + 1] == "detailed"
    off = ServerConfig(engine="emulator", model="emu", per_request_spec_decode_metrics="detailed")
    assert "--per-request-spec-decode-metrics" not in build_argv(off, python="/py", port=1)
