"""How a server was started, for the results manifest: version, argv, env, GPUs (the
inventory itself comes from `launch.gpus`).

Secrets never reach the manifest nor the screen: any variable or flag whose name looks like
a key, token, secret or password, any variable the user lists in `SPECBENCH_REDACT_ENV`
(comma-separated names), and any value shaped like a well-known token, is replaced by
`<redacted>`. `redact_config` applies the same to a whole persisted config (every `env`
table and argv list in it), so the manifest's copies of the suite are redacted too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from specbench.common.model import Frozen
from specbench.launch.config import Engine, ServerConfig
from specbench.launch.container import ContainerProvenance
from specbench.launch.gpus import GpuInventory

REDACTED = "<redacted>"
#: Comma-separated names of further variables to redact, for secrets no pattern recognizes.
REDACT_ENV_VARIABLE = "SPECBENCH_REDACT_ENV"

_RECORDED_PREFIXES = ("VLLM_", "HIP_", "ROCM_", "CUDA_")
_RECORDED_SUFFIXES = ("_VISIBLE_DEVICES",)
# Whole name parts only, singular: `HF_TOKEN`, `--api-key`, but not `--num-speculative-tokens`.
_SECRET_NAME = re.compile(
    r"(^|[_-])(TOKEN|KEY|APIKEY|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH|AUTHORIZATION)([_-]|$)",
    re.IGNORECASE,
)
# Hugging Face, OpenAI-style, GitHub and AWS tokens, and long opaque strings.
_SECRET_VALUE = re.compile(
    r"^(hf_[A-Za-z0-9]{16,}|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[A-Z0-9]{16}"
    r"|(?=[^/.]*\d)(?=[^/.]*[A-Za-z])[A-Za-z0-9_-]{40,}={0,2})$"
)
# In a variable's name, a part containing one of these words (`HF_TOKEN`, `HFTOKEN`,
# `DB_PASSWORD`), except a count of tokens (`VLLM_MAX_NUM_BATCHED_TOKENS`) or a tokenizer
# setting (`TOKENIZERS_PARALLELISM`).
_SECRET_ENV_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
_NOT_SECRET_PARTS = ("TOKENS", "TOKENIZER")
#: Keys of a persisted config whose value is a command line.
_ARGV_KEYS = frozenset({"argv", "extra_args"})


class ServerProvenance(Frozen):
    """How one server was started; the runner writes it into the manifest."""

    server_name: str = Field(description="Name of the server config in the suite.")
    engine: Engine = Field(description="vllm or emulator.")
    vllm_version: str | None = Field(description="From GET /version; None if not served.")
    argv: list[str] = Field(description="Full argv, secret values redacted.")
    command: str = Field(description="Shell line with the config's env prefix, redacted.")
    env: dict[str, str] = Field(
        description="VLLM_*, HIP_*, ROCM_*, CUDA_*, *_VISIBLE_DEVICES of the server, redacted."
    )
    gpu_inventory: GpuInventory | None = Field(
        description="What amd-smi, rocm-smi or nvidia-smi reported (`launch.gpus`); None "
        "when none answered."
    )
    gpu_check: str | None = Field(
        default=None,
        description="How the GPUs were checked before the start, one line: the inventory's "
        "summary, `unchecked: no GPU tool answered (...)` (--gpus-unchecked), or a CPU build "
        "that uses none; None for the emulator and older results.",
    )
    gpus_used: int = Field(description="TP × PP × DP: the divisor of output tok/s per GPU.")
    base_url: str = Field(description="http://host:port of the server.")
    served_model_name: str = Field(description="Model id requests are sent with.")
    config: ServerConfig = Field(description="The config the server was started from.")
    log_path: str = Field(description="Server log file.")
    started_at_utc: str = Field(description="Launch wall-clock time, UTC ISO-8601.")
    startup_s: float = Field(description="From spawn to ready (health and model listed).")
    container: ContainerProvenance | None = Field(
        default=None, description="The container it ran in (a `launcher`); None: none."
    )


def is_secret_name(name: str) -> bool:
    """Whether a variable or flag name suggests its value is a credential."""
    return bool(_SECRET_NAME.search(name))


#: A flag that takes a credential ends with the secret word (`--api-key`, `--hf-token`); one
#: that names a quantity of tokens or keys goes on (`--verify-token-ms`,
#: `--energy-per-generated-token-j`: settings, kept in the recorded command).
_SECRET_FLAG = re.compile(
    r"(^|[_-])(TOKEN|KEY|APIKEY|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH|AUTHORIZATION)$",
    re.IGNORECASE,
)


def is_secret_flag(flag: str) -> bool:
    """Whether a command-line flag's value is a credential (its last word is a secret's)."""
    return bool(_SECRET_FLAG.search(flag.lstrip("-")))


def user_listed_secrets() -> frozenset[str]:
    """Names in `SPECBENCH_REDACT_ENV` (upper case)."""
    listed = os.environ.get(REDACT_ENV_VARIABLE, "")
    return frozenset(name.strip().upper() for name in listed.split(",") if name.strip())


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable's value must be redacted, from its name alone."""
    upper = name.upper()
    if is_secret_name(name) or upper in user_listed_secrets():
        return True
    return any(
        word in part and not part.startswith(_NOT_SECRET_PARTS)
        for part in re.split(r"[_\-]", upper)
        for word in _SECRET_ENV_WORDS
    )


def redact_value(name: str, value: str) -> str:
    """`value`, or `<redacted>` when the name or the value looks secret."""
    if is_secret_env_name(name) or _SECRET_VALUE.match(value):
        return REDACTED
    return value


def redact_env(env: Mapping[str, Any]) -> dict[str, Any]:
    """An env table with every secret-looking value redacted (non-text values kept)."""
    return {
        name: redact_value(name, value) if isinstance(value, str) else value
        for name, value in env.items()
    }


def redact_config(data: Any) -> Any:
    """A JSON-ready config (suite, provenance, manifest) with its secrets redacted.

    Every `env` table is passed through `redact_env`, every `argv`/`extra_args` list
    through `redact_argv`; everything else is copied as is.
    """
    if isinstance(data, dict):
        out: dict[Any, Any] = {}
        for key, value in data.items():
            if key == "env" and isinstance(value, dict):
                out[key] = redact_env(value)
            elif key in _ARGV_KEYS and isinstance(value, list):
                out[key] = redact_argv([str(v) for v in value])
            else:
                out[key] = redact_config(value)
        return out
    if isinstance(data, list):
        return [redact_config(value) for value in data]
    return data


def recorded_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that shape a GPU server, sorted by name, secrets redacted."""
    kept = {
        name: redact_value(name, value)
        for name, value in env.items()
        if name.startswith(_RECORDED_PREFIXES) or name.endswith(_RECORDED_SUFFIXES)
    }
    return dict(sorted(kept.items()))


def redact_argv(argv: Sequence[str]) -> list[str]:
    """argv with the value of any secret-looking flag (`--api-key X`, `--x-token=Y`) hidden."""
    redacted: list[str] = []
    hide_next = False
    for token in argv:
        if hide_next:
            redacted.append(REDACTED)
            hide_next = False
        elif token.startswith("--") and "=" in token:
            flag, value = token.split("=", 1)
            hidden = is_secret_flag(flag) or _looks_secret(value, after=flag)
            redacted.append(f"{flag}={REDACTED if hidden else value}")
        elif token.startswith("--") and is_secret_flag(token):
            redacted.append(token)
            hide_next = True
        else:
            previous = redacted[-1] if redacted else ""
            redacted.append(REDACTED if _looks_secret(token, after=previous) else token)
    return redacted


def _looks_secret(value: str, *, after: str) -> bool:
    """A token-shaped value, unless it is a git revision (`--revision <40 hex>`): provenance."""
    if after.startswith("--") and after.endswith("revision"):
        return False
    return bool(_SECRET_VALUE.match(value))
