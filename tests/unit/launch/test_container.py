"""A server started through a container launcher: the launcher's checks, the argv (launcher,
--name, -e NAME, then `vllm serve ...`), and the preflight refusals, against the docker
stand-in on PATH (tests/harness/fake_docker.py; no container daemon runs here)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpu_tools import AMD_SMI_26, stand_in
from harness.container import IMAGE_VLLM_VERSION, FakeDocker, image_vllm, install_docker

from specbench.common.errors import SpecbenchError
from specbench.launch import ServerConfig, SpeculativeConfig
from specbench.launch.command import launch_command
from specbench.launch.container import parse_launcher

IMAGE = "rocm/vllm:specbench-test"
IMAGE_ID = "sha256:" + "ab" * 32
DIGEST = "rocm/vllm@sha256:" + "cd" * 32
LAUNCHER = (
    "docker run --rm --device=/dev/kfd --device=/dev/dri --group-add video --ipc=host "
    f"--network=host -v /models:/models {IMAGE}"
)


@pytest.fixture
def docker(tmp_path: Path) -> Iterator[FakeDocker]:
    vllm = image_vllm(tmp_path)
    installed = install_docker(
        tmp_path,
        {
            IMAGE: {"Id": IMAGE_ID, "RepoDigests": [DIGEST], "vllm": str(vllm)},
            "rocm/base:no-vllm": {"Id": "sha256:" + "ef" * 32, "RepoDigests": [], "vllm": None},
        },
    )
    # A ROCm node as the image expects it: its amd-smi lists the GPUs (without a GPU tool
    # answering, a ROCm build's start would need --gpus-unchecked).
    stand_in(installed.bin, "amd-smi", AMD_SMI_26)
    yield installed
    installed.kill_left()


def eagle3(launcher: str = LAUNCHER, **fields: object) -> ServerConfig:
    return ServerConfig(
        model="org/target",
        speculative=SpeculativeConfig(method="eagle3", model="org/draft", num_speculative_tokens=3),
        env={"VLLM_ROCM_USE_AITER": "1", "HF_TOKEN": "hf_" + "x" * 30},
        launcher=launcher,
        **fields,
    )


def test_the_argv_is_the_launcher_with_name_and_env_names_then_vllm_serve(
    docker: FakeDocker,
) -> None:
    command = launch_command(eagle3(), name="eagle3", vllm_bin=None, base_env=docker.env())
    assert command.container is not None
    name = command.container.name
    assert name is not None and re.fullmatch(r"specbench-eagle3-[0-9a-f]{8}", name)
    assert command.argv_at("127.0.0.1", 8000) == [
        str(docker.bin / "docker"),
        *LAUNCHER.split()[1:-1],
        *["--name", name, "-e", "VLLM_ROCM_USE_AITER", "-e", "HF_TOKEN", IMAGE],
        *["vllm", "serve", "org/target", "--tensor-parallel-size", "1"],
        "--speculative-config",
        '{"method":"eagle3","model":"org/draft","num_speculative_tokens":3}',
        *["--per-request-spec-decode-metrics", "summary", "--enable-per-request-metrics"],
        *["--host", "127.0.0.1", "--port", "8000"],
    ]
    # The values travel in the client's environment (docker's `-e NAME`), never the argv.
    assert command.env["HF_TOKEN"] == "hf_" + "x" * 30
    assert "hf_" + "x" * 30 not in " ".join(command.argv)
    assert command.shown().startswith("VLLM_ROCM_USE_AITER=1 HF_TOKEN='<redacted>' ")
    # Each start is a new container: another name.
    again = launch_command(eagle3(), name="eagle3", vllm_bin=None, base_env=docker.env())
    assert again.container is not None and again.container.name != name


def test_capabilities_and_version_are_asked_of_the_image_vllm(docker: FakeDocker) -> None:
    launch_command(
        eagle3(vllm_version="0.32.0"), name="eagle3", vllm_bin=None, base_env=docker.env()
    )
    asked = [call for call in docker.calls() if call[0] == "run"]
    probes = {tuple(call[call.index(IMAGE) + 1 :]) for call in asked}
    assert probes == {("vllm", "--version"), ("vllm", "serve", "--help=per-request")}
    assert all("--name" not in call for call in asked)  # only servers are named
    refused = eagle3(vllm_version="0.31.0")
    with pytest.raises(SpecbenchError) as error:
        launch_command(refused, name="eagle3", vllm_bin=None, base_env=docker.env())
    assert f"says {IMAGE_VLLM_VERSION!r}; use an image with that vLLM in launcher" in str(
        error.value
    )


def test_provenance_names_the_image_its_id_and_digest(docker: FakeDocker) -> None:
    command = launch_command(eagle3(), name="eagle3", vllm_bin=None, base_env=docker.env())
    assert command.container is not None
    recorded = command.container.provenance(lambda argv: list(argv))
    assert (recorded.image, recorded.image_id, recorded.repo_digests) == (
        IMAGE,
        IMAGE_ID,
        [DIGEST],
    )
    assert recorded.name == command.container.name
    assert recorded.launcher[-3:] == ["-e", "HF_TOKEN", IMAGE]


@pytest.mark.parametrize(
    ("launcher", "path", "message"),
    [
        (
            LAUNCHER,
            "/usr/bin:/bin",
            "server 'eagle3': launcher: 'docker' is not an executable on PATH; install it, "
            "or give its path",
        ),
        (
            LAUNCHER.replace(IMAGE, "rocm/vllm:missing"),
            None,
            "server 'eagle3': launcher: image 'rocm/vllm:missing' is not on this machine "
            "(Error response from daemon: No such image: rocm/vllm:missing); pull it first "
            "(docker pull rocm/vllm:missing)",
        ),
        (
            "docker run --rm --network=host rocm/base:no-vllm",
            None,
            "server 'eagle3': launcher: `vllm --version` in image 'rocm/base:no-vllm' gave no "
            "version (exit 127: docker: Error response from daemon: failed to create task for "
            'container: exec: "vllm": executable file not found in $PATH: unknown.); use an '
            "image with vLLM installed (e.g. rocm/vllm), or fix launcher",
        ),
        (
            "kubectl run vllm",
            None,
            "server 'eagle3': launcher: 'kubectl' is not a container runtime specbench knows; "
            "use one of docker, podman, apptainer, singularity",
        ),
        (
            "docker run --rm --network=host",
            None,
            "server 'eagle3': launcher: 'docker run --rm --network=host' must be `docker run "
            "[OPTIONS] IMAGE` (the image last: specbench appends `vllm serve ...`)",
        ),
        (
            f"docker run --rm -d --network=host {IMAGE}",
            None,
            "server 'eagle3': launcher: leave out -d (the client must stay attached: its exit "
            "is the server's)",
        ),
        (
            f"docker run --rm --name=mine --network=host {IMAGE}",
            None,
            "server 'eagle3': launcher: leave out --name (specbench names each container itself)",
        ),
        (
            f"docker run --rm {IMAGE}",
            None,
            "server 'eagle3': launcher: add --network=host (the server's port must be "
            "reachable from specbench)",
        ),
    ],
    ids=[
        "no-runtime",
        "no-image",
        "no-vllm-inside",
        "unknown",
        "no-image-word",
        "detach",
        "name",
        "no-host-network",
    ],
)
def test_bad_launchers_are_one_line_naming_the_field(
    docker: FakeDocker, launcher: str, path: str | None, message: str
) -> None:
    env = docker.env() if path is None else {**os.environ, "PATH": path}
    with pytest.raises(SpecbenchError) as error:
        launch_command(eagle3(launcher), name="eagle3", vllm_bin=None, base_env=env)
    assert str(error.value) == message
    # Refused before any server: no container was started by name.
    assert not [call for call in docker.calls() if "--name" in call]


def test_apptainer_runs_in_the_group_without_a_name(tmp_path: Path) -> None:
    image = tmp_path / "vllm.sif"
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    (tmp_path / "apptainer").write_text("#!/bin/sh\n")
    (tmp_path / "apptainer").chmod(0o755)
    with pytest.raises(SpecbenchError) as error:
        launch_command(
            eagle3(f"apptainer exec --rocm {image}"), name="e", vllm_bin=None, base_env=env
        )
    assert str(error.value) == (
        f"server 'e': launcher: the image file {str(image)!r} does not exist; build or pull "
        "it first (apptainer pull)"
    )
    launcher = parse_launcher(f"apptainer exec --rocm {image}", field="launcher", env=env)
    assert launcher.prefix(name=None, env_names=["HF_TOKEN"]) == [
        str(tmp_path / "apptainer"),
        "exec",
        "--rocm",
        str(image),
    ]


def test_an_emulator_server_refuses_a_launcher() -> None:
    with pytest.raises(ValueError, match="a `launcher` starts vllm in a container"):
        ServerConfig(engine="emulator", model="m", launcher=LAUNCHER)
