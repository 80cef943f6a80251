"""Pure functions from a server config to the argv and environment that start it.

Nothing here touches the file system, the network or a process, so the exact command of
a model card can be checked token by token in unit tests.

Flag order for vLLM: model, the typed flags (each server field declares its own with
`launch.config.server_role`; `FLAG_FIELDS` is their order), extra_args,
--speculative-config, --per-request-spec-decode-metrics, --enable-per-request-metrics
(only when the launcher found it supported: `per_request_timing`), --host, --port. The card's own
flags come first in the card's order, so a card's command is reproduced verbatim.

The emulator's argv: --model, --no-spec or --num-speculative-tokens, the K schedule
(`ServerConfig.k_schedule`, as JSON), the per-step metrics switch, then the suite's
`[emulator]` settings (declared in `common/emulator_settings.py`), --max-model-len, --host,
--port.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from typing import Any

from specbench.common.emulator_settings import ROWS, declared, flag_of
from specbench.launch.config import (
    SCHEDULE_KEY,
    EmulatorOverrides,
    ServerConfig,
    SpeculativeConfig,
)

#: The module the emulator is started from (`python -m specbench.cli.main emulate ...`).
EMULATOR_MODULE = "specbench.cli.main"
#: vLLM 0.32's per-request timing in responses (the emulator takes the same flag).
PER_REQUEST_TIMING_ARG = "--enable-per-request-metrics"


def speculative_config_dict(spec: SpeculativeConfig) -> dict[str, Any]:
    """The `--speculative-config` mapping, keys in the card's order, unset keys left out.

    Order: method, model, num_speculative_tokens, attention_backend, prompt_lookup_max,
    prompt_lookup_min, num_speculative_tokens_per_batch_size, then `extra` in its own order.
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
    if spec.num_speculative_tokens_per_batch_size is not None:
        ordered[SCHEDULE_KEY] = spec.num_speculative_tokens_per_batch_size
    ordered.update(spec.extra)
    return ordered


def speculative_config_json(spec: SpeculativeConfig) -> str:
    """Compact JSON, as model cards write it: `{"method":"eagle3","model":...}`."""
    return json.dumps(speculative_config_dict(spec), separators=(",", ":"))


def _flag_fields() -> tuple[str, ...]:
    """The server fields that declare a `vllm serve` flag, in the order they are written."""
    declared = {
        name: info.json_schema_extra
        for name, info in ServerConfig.model_fields.items()
        if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("flag")
    }
    order = [name for name, role in declared.items() if role["after"] is None]
    for name, role in declared.items():
        if role["after"] is not None:
            order.insert(order.index(str(role["after"])) + 1, name)
    return tuple(order)


#: Server fields written as typed `vllm serve` flags, in argv order.
FLAG_FIELDS = _flag_fields()


def _typed_flags(config: ServerConfig) -> list[str]:
    """Each declared flag whose value is set: `flag VALUE`, or the bare flag of a true bool."""
    argv: list[str] = []
    for name in FLAG_FIELDS:
        info = ServerConfig.model_fields[name]
        role = info.json_schema_extra
        assert isinstance(role, dict)
        value = getattr(config, name)
        if value is None or value is False:
            continue
        if value is True:
            argv.append(str(role["flag"]))
        elif role["always"] or value != info.default:
            argv += [str(role["flag"]), str(value)]
    return argv


def _vllm_argv(config: ServerConfig, executable: str) -> list[str]:
    argv = [executable, "serve", config.model, *_typed_flags(config)]
    argv += config.extra_args
    if config.speculative is not None:
        argv += ["--speculative-config", speculative_config_json(config.speculative)]
        level = config.per_request_spec_decode_metrics
        if level:
            argv += ["--per-request-spec-decode-metrics", "summary" if level is True else level]
    return argv


def _emulator_flags(settings: EmulatorOverrides, speculating: bool) -> list[str]:
    """The `[emulator]` settings that are set, as `emulate` flags: drafting ones first.

    A list is written comma-separated (as `--acceptance` is parsed), a bool as `--x` or
    `--no-x` where it differs from the emulator's default; drafting settings only when the
    server speculates.
    """
    rows = [row for row in ROWS if declared(row).suite and declared(row).in_argv]
    rows.sort(key=lambda row: not declared(row).drafting)
    argv: list[str] = []
    for row in rows:
        value = getattr(settings, row.name)
        if value is None or (declared(row).drafting and not speculating):
            continue
        flag = flag_of(row.name)
        if isinstance(value, bool):
            if value != row.default:
                argv.append(flag if value else flag.replace("--", "--no-", 1))
        elif isinstance(value, list | tuple):
            argv += [flag, ",".join(repr(p) for p in value)]
        else:
            argv += [flag, str(value)]
    return argv


def _emulator_argv(config: ServerConfig, python: str) -> list[str]:
    argv = [python, "-m", EMULATOR_MODULE, "emulate", "--model", config.api_model_name]
    speculating = config.speculative is not None
    if config.speculative is None:
        argv.append("--no-spec")
    else:
        argv += ["--num-speculative-tokens", str(config.speculative.num_speculative_tokens)]
    # The speculative table's schedule or the `[emulator]` one (never both): one flag.
    if config.k_schedule is not None:
        argv += [flag_of(SCHEDULE_KEY), json.dumps(config.k_schedule, separators=(",", ":"))]
    settings = config.emulator
    # The server-level "detailed" (what a vLLM config asks for the acceptance cuts) or the
    # emulator's own switch: either gives the per-step arrays.
    detailed = config.per_request_spec_decode_metrics == "detailed" or (
        settings is not None and settings.per_step_spec_metrics
    )
    if detailed and speculating:
        argv += ["--per-request-spec-decode-metrics", "detailed"]
    if settings is not None:
        argv += _emulator_flags(settings, speculating)
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
