"""Each server field declares its `vllm serve` flag and hash role once, on the field."""

from __future__ import annotations

from specbench.launch import EmulatorOverrides, ServerConfig, SpeculativeConfig, build_argv
from specbench.launch.argv import FLAG_FIELDS
from specbench.launch.config import hash_neutral_defaults


def test_the_hash_neutral_fields_are_the_ones_written_by_hand_before() -> None:
    # As main 408c852 listed them in run/plan.py (HASH_NEUTRAL_SERVER_DEFAULTS), and the
    # container `launcher` added since (absent: the suite hash of before), and the GPU energy
    # source and counted GPUs (issue 41; at their defaults a suite's hash is unchanged), and
    # the leave to run a K schedule under DP > 1 (issue 40).
    assert hash_neutral_defaults(ServerConfig) == {
        "pipeline_parallel_size": 1,
        "vllm_version": None,
        "launcher": None,
        "gpu_telemetry": "auto",
        "gpu_ids": None,
        "schedule_with_data_parallel": False,
    }
    # A K schedule in the speculative table (issue 40): absent, the hash of before.
    assert hash_neutral_defaults(SpeculativeConfig) == {
        "num_speculative_tokens_per_batch_size": None
    }


def test_flags_are_written_in_the_cards_order() -> None:
    assert FLAG_FIELDS == (
        "served_model_name", "trust_remote_code", "tensor_parallel_size",
        "pipeline_parallel_size", "data_parallel_size", "block_size", "attention_backend",
        "moe_backend", "max_model_len", "gpu_memory_utilization",
    )  # fmt: skip


def test_every_declared_flag_reaches_argv_with_its_value() -> None:
    values = {
        "served_model_name": "srv", "trust_remote_code": True, "tensor_parallel_size": 2,
        "pipeline_parallel_size": 3, "data_parallel_size": 4, "block_size": 64,
        "attention_backend": "TRITON_ATTN", "moe_backend": "aiter", "max_model_len": 2048,
        "gpu_memory_utilization": 0.5,
    }  # fmt: skip
    argv = build_argv(ServerConfig(model="m", **values))  # type: ignore[arg-type]
    for name in FLAG_FIELDS:
        flag = ServerConfig.model_fields[name].json_schema_extra["flag"]  # type: ignore[index]
        assert flag in argv, name
        if values[name] is not True:
            assert argv[argv.index(flag) + 1] == str(values[name]), name


def test_a_flag_at_its_default_is_left_out_unless_always_written() -> None:
    argv = build_argv(ServerConfig(model="m"))
    assert argv == ["vllm", "serve", "m", "--tensor-parallel-size", "1"]


#: The fields whose value is in the suite hash (main 408c852): any other is hash-neutral.
HASHED_SERVER_FIELDS = {
    "engine", "baseline", "model", "served_model_name", "tensor_parallel_size",
    "data_parallel_size", "max_model_len", "block_size", "attention_backend", "moe_backend",
    "gpu_memory_utilization", "trust_remote_code", "extra_args", "env", "speculative",
    "per_request_spec_decode_metrics", "emulator",
}  # fmt: skip
HASHED_SPECULATIVE_FIELDS = {
    "method", "model", "num_speculative_tokens", "attention_backend", "prompt_lookup_max",
    "prompt_lookup_min", "extra",
}  # fmt: skip
HASHED_EMULATOR_SETTINGS = {
    "acceptance", "prefill_ms", "step_ms", "per_request_step_ms", "seed", "corrupt_rate",
    "per_step_spec_metrics", "reasoning_tokens", "reasoning_acceptance", "reasoning_output",
    "acceptance_decay", "acceptance_decay_tokens",
}  # fmt: skip


def test_a_field_added_since_is_hash_neutral_so_old_results_still_resume() -> None:
    for model, hashed in (
        (ServerConfig, HASHED_SERVER_FIELDS),
        (SpeculativeConfig, HASHED_SPECULATIVE_FIELDS),
        (EmulatorOverrides, HASHED_EMULATOR_SETTINGS),
    ):
        neutral = hash_neutral_defaults(model)
        assert set(model.model_fields) - hashed == set(neutral), model.__name__
