"""A server started through a container launcher (`launcher = "docker run ... IMAGE"`).

The launcher is a command prefix that ends with the image; specbench appends `vllm serve
...`. Two families are known, by the launcher's executable:

- docker and podman: the server runs in a container the runtime's daemon (or conmon)
  holds, not in specbench's process tree. Every start gets a unique `--name
  specbench-<server>-<hex>` and the config's variables as `-e NAME` (the value comes from
  the client's environment, so no secret is in the argv). The client is the leader of the
  server's process group, so the group's teardown reaches it, and its parent-death
  signal (SIGTERM) reaches it when specbench is killed outright; docker and podman pass
  that SIGTERM on to the container (`--sig-proxy`, their default when attached). Neither
  covers a client that dies without passing it on, so teardown first asks the runtime to
  `stop` the container by name, and the next run stops a container the manifest still
  records (`stop_left_container`).
- apptainer and singularity: the server runs as an ordinary child of the launcher, in the
  same process group, so the group's teardown stops it; the image is a file, checked to
  exist.

Preflight through `launch_command`: the executable exists, the image exists (`image
inspect`, or the file), and `vllm --version` answers inside. Provenance: the launcher's
argv, the image, its id and repo digests from `image inspect`.
"""

from __future__ import annotations

import itertools
import json
import secrets
import shlex
import shutil
import socket
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from specbench.common.errors import SpecbenchError
from specbench.common.model import Frozen

Runtime = Literal["docker", "apptainer"]
#: Launcher executables by the family that decides how a start is named and stopped.
RUNTIMES: dict[str, Runtime] = {
    "docker": "docker",
    "podman": "docker",
    "apptainer": "apptainer",
    "singularity": "apptainer",
}
#: docker/podman flags specbench sets itself, or that would detach the server from its client.
_REFUSED_FLAGS = {
    "--name": "specbench names each container itself",
    "-d": "the client must stay attached: its exit is the server's",
    "--detach": "the client must stay attached: its exit is the server's",
}
_HOST_NETWORK = ("--network=host", "--net=host")
INSPECT_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0


class ContainerProvenance(Frozen):
    """What a server's container was started from; the runner writes it into the manifest."""

    runtime: str = Field(description="The launcher's executable, as found on PATH.")
    launcher: list[str] = Field(description="The launcher's argv, secret values redacted.")
    image: str = Field(description="The image the launcher names (its last word).")
    image_id: str | None = Field(
        description="`image inspect`'s Id (sha256:...); None for an apptainer image file."
    )
    repo_digests: list[str] = Field(
        description="`image inspect`'s RepoDigests (repo@sha256:...): the pullable digest."
    )
    name: str | None = Field(description="The container's --name; None for apptainer.")


@dataclass(frozen=True)
class Launcher:
    """A parsed launcher: the runtime found on PATH, the prefix's words, and its image."""

    runtime: Runtime
    executable: str
    words: tuple[str, ...]

    @property
    def image(self) -> str:
        """The image: the launcher's last word (`docker run [OPTIONS] IMAGE`)."""
        return self.words[-1]

    def prefix(self, *, name: str | None, env_names: Sequence[str]) -> list[str]:
        """The launcher's argv with the container's name and variables before the image."""
        if self.runtime != "docker":
            return [self.executable, *self.words[1:]]
        added = [] if name is None else ["--name", name]
        for variable in env_names:
            added += ["-e", variable]
        return [self.executable, *self.words[1:-1], *added, self.image]


def parse_launcher(text: str, *, field: str, env: Mapping[str, str]) -> Launcher:
    """`text` as a `Launcher`; bad input (unknown runtime, no image, -d, no host network)
    is one line naming `field`."""
    try:
        words = tuple(shlex.split(text))
    except ValueError as error:
        raise SpecbenchError(f"{field}: {text!r} does not parse as a command ({error})") from None
    if not words:
        raise SpecbenchError(f"{field}: empty; give a command such as 'docker run --rm ... IMAGE'")
    runtime = RUNTIMES.get(Path(words[0]).name)
    if runtime is None:
        raise SpecbenchError(
            f"{field}: {words[0]!r} is not a container runtime specbench knows; "
            f"use one of {', '.join(RUNTIMES)}"
        )
    executable = shutil.which(words[0], path=env.get("PATH"))
    if executable is None:
        raise SpecbenchError(
            f"{field}: {words[0]!r} is not an executable on PATH; install it, or give its path"
        )
    subcommand = {"docker": ("run",), "apptainer": ("exec", "run")}[runtime]
    if not set(words[1:]) & set(subcommand) or len(words) < 3 or words[-1].startswith("-"):
        raise SpecbenchError(
            f"{field}: {text!r} must be `{words[0]} {subcommand[0]} [OPTIONS] IMAGE` "
            "(the image last: specbench appends `vllm serve ...`)"
        )
    if runtime == "docker":
        _check_docker_flags(words, field)
    return Launcher(runtime, str(Path(executable).absolute()), words)


def _check_docker_flags(words: Sequence[str], field: str) -> None:
    for word in words:
        flag = word.split("=", 1)[0]
        if flag in _REFUSED_FLAGS:
            raise SpecbenchError(f"{field}: leave out {flag} ({_REFUSED_FLAGS[flag]})")
    pairs = {" ".join(pair) for pair in itertools.pairwise(words)}
    if not (set(words) & set(_HOST_NETWORK) or pairs & {"--network host", "--net host"}):
        raise SpecbenchError(
            f"{field}: add --network=host (the server's port must be reachable from specbench)"
        )


def container_name(server: str) -> str:
    """A name no other start shares: `specbench-<server>-<8 hex>`."""
    return f"specbench-{server}-{secrets.token_hex(4)}"


def inspect_image(
    launcher: Launcher, *, field: str, env: Mapping[str, str]
) -> tuple[str | None, list[str]]:
    """The image's (Id, RepoDigests); bad input when the image is not on this machine."""
    if launcher.runtime == "apptainer":
        if "://" not in launcher.image and not Path(launcher.image).exists():
            raise SpecbenchError(
                f"{field}: the image file {launcher.image!r} does not exist; "
                f"build or pull it first (apptainer pull)"
            )
        return None, []
    argv = [launcher.executable, "image", "inspect", launcher.image]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=INSPECT_TIMEOUT_S, env=dict(env)
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SpecbenchError(f"{field}: `{shlex.join(argv)}` failed ({error})") from None
    if done.returncode != 0:
        said = _last_line(done.stderr or done.stdout)
        raise SpecbenchError(
            f"{field}: image {launcher.image!r} is not on this machine ({said}); "
            f"pull it first ({Path(launcher.executable).name} pull {launcher.image})"
        )
    try:
        (found,) = json.loads(done.stdout)
        digests = [str(digest) for digest in found.get("RepoDigests") or []]
        return (str(found["Id"]) if found.get("Id") else None), digests
    except (ValueError, TypeError, KeyError):
        return None, []


def stop_container(executable: str, name: str, grace_s: float) -> bool:
    """`RUNTIME stop -t GRACE NAME`: True when the runtime knew the container (and stopped
    it), False when it has none by that name (already gone) or could not be asked."""
    argv = [executable, "stop", "-t", str(max(0, round(grace_s))), name]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=grace_s + STOP_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def stop_left_container(identity: Mapping[str, object], grace_s: float = 10.0) -> str | None:
    """Stop the container a server's recorded identity names, if it is on this host: its
    name when the runtime stopped it, else None (none recorded, or none left)."""
    container = identity.get("container")
    if not isinstance(container, Mapping) or identity.get("host") != socket.gethostname():
        return None
    name, runtime = container.get("name"), container.get("runtime")
    if not isinstance(name, str) or not isinstance(runtime, str):
        return None
    return name if stop_container(runtime, name, grace_s) else None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


@dataclass(frozen=True)
class ContainerStart:
    """One server start through a launcher: its name, the variables passed in, the image."""

    launcher: Launcher
    name: str | None
    env_names: tuple[str, ...]
    image_id: str | None
    repo_digests: tuple[str, ...]

    def prefix(self) -> list[str]:
        """What comes before `vllm serve ...`: the launcher, with --name and -e NAME."""
        return self.launcher.prefix(name=self.name, env_names=self.env_names)

    def probe(self) -> tuple[str, ...]:
        """The command that runs the image's vllm for a question (no name: it is short)."""
        return (*self.launcher.prefix(name=None, env_names=self.env_names), "vllm")

    def provenance(self, redact: Callable[[Sequence[str]], list[str]]) -> ContainerProvenance:
        """What the manifest records; `redact` hides secret values in the launcher's argv."""
        return ContainerProvenance(
            runtime=self.launcher.executable,
            launcher=redact(self.prefix()),
            image=self.launcher.image,
            image_id=self.image_id,
            repo_digests=list(self.repo_digests),
            name=self.name,
        )


def resolve_container(
    launcher: str, *, server: str, env_names: Sequence[str], env: Mapping[str, str]
) -> ContainerStart:
    """Parse `launcher` and check its image is here; one line naming the field when not."""
    field = f"server {server!r}: launcher"
    parsed = parse_launcher(launcher, field=field, env=env)
    image_id, digests = inspect_image(parsed, field=field, env=env)
    name = container_name(server) if parsed.runtime == "docker" else None
    return ContainerStart(parsed, name, tuple(env_names), image_id, tuple(digests))
