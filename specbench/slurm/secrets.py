"""A Slurm campaign's secrets stay out of its files: the jobs take them from their environment.

The suite the submitter saves for its jobs (`slurm/suite.json`) has every secret-looking
value of a server's `env` redacted, by the manifest's rule (`launch.provenance`: names
with KEY, TOKEN, SECRET, PASSWORD..., names listed in `SPECBENCH_REDACT_ENV`, token-shaped
values). sbatch runs with the submitter's environment plus those variables of the shard's
server at the suite's values, and exports it to the job (its default, `--export=ALL`);
the job puts each redacted value back from `os.environ` and stops with one line naming the
variable when it is not there (a batch script resubmitted by hand from a shell without it,
or `--export=NONE` in the sbatch options). A secret after a key or token flag in a server's
`extra_args` (`--api-key X`) has no variable name to travel under: submitting refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.launch.provenance import REDACTED, is_secret_name, redact_env, redact_value
from specbench.suite import Suite


def redacted_suite(suite: Suite) -> dict[str, Any]:
    """The suite as JSON with every secret-looking `servers.*.env` value `<redacted>`."""
    data = suite.model_dump(mode="json")
    for server in data["servers"].values():
        server["env"] = redact_env(server["env"])
    return data


def server_secrets(suite: Suite, server: str) -> dict[str, str]:
    """The env variables of `server` that the saved suite redacts, with their real values."""
    env = suite.servers[server].env
    return {name: value for name, value in env.items() if redact_value(name, value) == REDACTED}


def check_arguments(suite: Suite) -> None:
    """Refuse a secret in `extra_args`: the jobs' saved suite would hold it in clear."""
    for name, config in suite.servers.items():
        for index, argument in enumerate(config.extra_args):
            flag = argument.split("=", 1)[0]
            if argument.startswith("--") and is_secret_name(flag):
                raise SpecbenchError(
                    f"servers.{name}.extra_args[{index}]: {flag} carries a secret, which the "
                    "suite saved for the Slurm jobs would hold in clear; set it in the "
                    f"server's env instead (e.g. VLLM_API_KEY for --api-key)"
                )


def restore_secrets(suite: Suite, environ: Mapping[str, str], source: Path) -> Suite:
    """`suite` (read from `source`) with each `<redacted>` env value taken from `environ`."""
    servers = {}
    for name, config in suite.servers.items():
        env = dict(config.env)
        for variable, value in config.env.items():
            if value != REDACTED:
                continue
            if variable not in environ:
                raise SpecbenchError(
                    f"servers.{name}.env.{variable}: redacted in {source}; the job takes it "
                    f"from its environment, where {variable} is not set: export it where "
                    "`specbench run --executor slurm` (or sbatch) runs, and let sbatch pass "
                    "the environment on (no --export=NONE)"
                )
            env[variable] = environ[variable]
        servers[name] = config.model_copy(update={"env": env})
    return suite.model_copy(update={"servers": servers})
