"""Pure functions from a server config to the argv and environment that start it.

Nothing here touches the file system, the network or a process, so the exact command of
a model card can be checked token by token in unit tests.

Flag order for vLLM: model, --served-model-name, --trust-remote-code,
--tensor-parallel-size, --pipeline-parallel-size, --data-parallel-size, --block-size,
--attention-backend, --moe-backend, --max-model-len, --gpu-memory-utilization, extra_args,
--speculative-config, --per-request-spec-decode-metrics, --enable-per-request-metrics (only
when the launcher found it supported: `per_request_timing`), --host, --port. The card's own
flags come first in the card's order, so a card's command is reproduced verbatim.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from typing import Any

from specbench.launch.config import ServerConfig, SpeculativeConfig

#: The module the emulator is started from (`python -m specbench.cli.main emulate ...`).
EMULATOR_MODULE = "specbench.cli.main"
#: vLLM 0.32's per-request timing in responses (the emulator takes the same flag).
PER_REQUEST_TIMING_ARG = "--enable-per-request-metrics"


def speculative_config_dict(spec: SpeculativeConfig) -> dict[str, Any]:
    """The `--speculative-config` mapping, keys in the card's order, unset keys left out.

    Order: method, model, num_speculative_tokens, attention_backend, prompt_lookup_max,
    prompt_lookup_min, then `extra` in its own order.
    """
    ordered: dict[str, Any] = {"method": spec.method}
    if spec.model is not None:
        ordered["model"] = spec.model
    ordered["num_speculative_tokens"] = spec.num_speculative_tokens
    optional = {
        "attention_backend": spec.attention_backend,
        "prompt_lookup_max": spec.prompt_lookup_max,
        "prompt_lookup_min": spec.prompt_lookup_min,
    }
    ordered.update({key: value for key, value in optional.items() if value is not None})
    ordered.update(spec.extra)
    return ordered


def speculative_config_json(spec: SpeculativeConfig) -> str:
    """Compact JSON, as model cards write it: `{"method":"eagle3","model":...}`."""
    return json.dumps(speculative_config_dict(spec), separators=(",", ":"))


def _flags_with_values(*flags: tuple[str, object]) -> list[str]:
    """`flag value` for each (flag, value) whose value is set, in the order given."""
    return [token for flag, value in flags if value is not None for token in (flag, str(value))]


def _vllm_argv(config: ServerConfig, executable: str) -> list[str]:
    argv = [executable, "serve", config.model]
    if config.served_model_name is not None:
        argv += ["--served-model-name", config.served_model_name]
    if config.trust_remote_code:
        argv.append("--trust-remote-code")
    # TP is always written (cards state it); DP only when it differs from vLLM's default.
    argv += ["--tensor-parallel-size", str(config.tensor_parallel_size)]
    if config.pipeline_parallel_size != 1:
        argv += ["--pipeline-parallel-size", str(config.pipeline_parallel_size)]
    if config.data_parallel_size != 1:
        argv += ["--data-parallel-size", str(config.data_parallel_size)]
    argv += _flags_with_values(
        ("--block-size", config.block_size),
        ("--attention-backend", config.attention_backend),
        ("--moe-backend", config.moe_backend),
        ("--max-model-len", config.max_model_len),
        ("--gpu-memory-utilization", config.gpu_memory_utilization),
    )
    argv += config.extra_args
    if config.speculative is not None:
        argv += ["--speculative-config", speculative_config_json(config.speculative)]
        level = config.per_request_spec_decode_metrics
        if level:
            argv += ["--per-request-spec-decode-metrics", "summary" if level is True else level]
    return argv


def _emulator_argv(config: ServerConfig, python: str) -> list[str]:
    argv = [python, "-m", EMULATOR_MODULE, "emulate", "--model", config.api_model_name]
    if config.speculative is None:
        argv.append("--no-spec")
    else:
        argv += ["--num-speculative-tokens", str(config.speculative.num_speculative_tokens)]
    settings = config.emulator
    # The server-level "detailed" (what a vLLM config asks for the acceptance cuts) or the
    # emulator's own switch: either gives the per-step arrays.
    detailed = config.per_request_spec_decode_metrics == "detailed" or (
        settings is not None and settings.per_step_spec_metrics
    )
    if detailed and config.speculative is not None:
        argv += ["--per-request-spec-decode-metrics", "detailed"]
    if settings is not None:
        if settings.acceptance is not None and config.speculative is not None:
            argv += ["--acceptance", ",".join(repr(p) for p in settings.acceptance)]
        if settings.reasoning_acceptance is not None and config.speculative is not None:
            argv += [
                "--reasoning-acceptance",
                ",".join(repr(p) for p in settings.reasoning_acceptance),
            ]
        argv += _flags_with_values(
            ("--prefill-ms", settings.prefill_ms),
            ("--step-ms", settings.step_ms),
            ("--per-request-step-ms", settings.per_request_step_ms),
            ("--seed", settings.seed),
            ("--corrupt-rate", settings.corrupt_rate),
            ("--prompt-log", settings.prompt_log),
            ("--reasoning-tokens", settings.reasoning_tokens),
            ("--reasoning-output", settings.reasoning_output),
            ("--acceptance-decay", settings.acceptance_decay),
            ("--acceptance-decay-tokens", settings.acceptance_decay_tokens),
        )
    if config.max_model_len is not None:
        argv += ["--max-model-len", str(config.max_model_len)]
    return argv


def build_argv(
    config: ServerConfig,
    *,
    vllm_executable: str = "vllm",
    host: str | None = None,
    port: int | None = None,
    python: str | None = None,
    per_request_timing: bool = False,
) -> list[str]:
    """The argv that starts `config`; `--host`/`--port` are appended only when given.

    vLLM configs start `vllm_executable serve MODEL ...`; emulator configs start
    `python -m specbench.cli.main emulate ...` (`python` defaults to this interpreter).
    `per_request_timing` adds `--enable-per-request-metrics` (the launcher's choice, not
    the suite's: it asks whenever the server can give it).
    """
    if config.engine == "emulator":
        argv = _emulator_argv(config, python or sys.executable)
    else:
        argv = _vllm_argv(config, vllm_executable)
    if per_request_timing:
        argv.append(PER_REQUEST_TIMING_ARG)
    if host is not None:
        argv += ["--host", host]
    if port is not None:
        argv += ["--port", str(port)]
    return argv


def build_env(config: ServerConfig, base_env: Mapping[str, str]) -> dict[str, str]:
    """The server's full environment: `base_env` with the config's variables on top."""
    return {**base_env, **config.env}


def render_command(argv: list[str], env: Mapping[str, str] | None = None) -> str:
    """One shell line, as a model card prints it: `K=V ... vllm serve ...`."""
    prefix = [f"{name}={shlex.quote(value)}" for name, value in (env or {}).items()]
    return " ".join([*prefix, shlex.join(argv)])


def prefix_caching_off(config: ServerConfig | None) -> bool:
    """The server is started with `--no-enable-prefix-caching`: there is no cache to reset."""
    return config is not None and "--no-enable-prefix-caching" in config.extra_args


def launch_config(config: ServerConfig) -> ServerConfig:
    """The server as launched, with VLLM_SERVER_DEV_MODE=1 so /reset_prefix_cache works.

    The emulator reads the same variable, so it behaves as the vLLM it stands for.
    """
    if prefix_caching_off(config):
        return config
    return config.model_copy(update={"env": {**config.env, "VLLM_SERVER_DEV_MODE": "1"}})
