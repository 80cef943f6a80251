"""`specbench run` with servers started through a container launcher, end to end.

The runtime is the docker stand-in (tests/harness/fake_docker.py) on PATH: no container
daemon runs on the test machines and no image can be pulled. Its "containers" run the
image's `vllm`, mapped to a script that serves with the emulator, in their own session (the
daemon's, not specbench's process group), and its client never passes a signal on: a
campaign killed outright leaves the container running unless specbench stops it by name.
"""

from __future__ import annotations

import json
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpu_tools import AMD_SMI_26, stand_in
from harness import REPO, background_cli, one_line, run_cli, server_pids, summary_paths
from harness.container import FakeDocker, image_vllm, install_docker
from harness.waiting import in_flight, wait_for

IMAGE = "rocm/vllm:specbench-test"
IMAGE_ID = "sha256:" + "ab" * 32
DIGEST = "rocm/vllm@sha256:" + "cd" * 32
DATA = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"
DEVICES = "--device=/dev/kfd --device=/dev/dri --group-add video --ipc=host --network=host"


@pytest.fixture
def docker(tmp_path: Path) -> Iterator[FakeDocker]:
    installed = install_docker(
        tmp_path,
        {
            IMAGE: {"Id": IMAGE_ID, "RepoDigests": [DIGEST], "vllm": str(image_vllm(tmp_path))},
            "rocm/base:no-vllm": {"Id": "sha256:" + "ef" * 32, "RepoDigests": [], "vllm": None},
        },
    )
    # A ROCm node as the image expects it: its amd-smi lists the GPUs (without a GPU tool
    # answering, a ROCm build's start would need --gpus-unchecked).
    stand_in(installed.bin, "amd-smi", AMD_SMI_26)
    yield installed
    installed.kill_left()


def container_suite(folder: Path, image: str = IMAGE, step_ms: int = 1) -> tuple[Path, str]:
    """folder/suite.toml: baseline and eagle3 through `docker run ... IMAGE`; (path, the
    served model name, unique: it finds the run's servers among the processes)."""
    tag = f"emu-{uuid.uuid4().hex[:10]}"
    suite = folder / "suite.toml"
    suite.write_text(
        f"""
name = "{tag}"
[target]
model = "{tag}"
launcher = "docker run --rm {DEVICES} -v /models:/models {image}"
env = {{ STANDIN_STEP_MS = "{step_ms}" }}
[servers.baseline]
baseline = true
[servers.eagle3]
speculative = {{ method = "eagle3", model = "draft", num_speculative_tokens = 3 }}
[[workloads]]
dataset = "{DATA}"
concurrency = [2]
max_tokens = 24
"""
    )
    return suite, tag


def started(docker: FakeDocker) -> list[list[str]]:
    """The stand-in's `run` calls that started a server (named; probes are not)."""
    return [call for call in docker.calls() if call[0] == "run" and "--name" in call]


def test_a_campaign_in_containers_records_the_image_and_stops_each_container(
    tmp_path: Path, docker: FakeDocker
) -> None:
    suite, tag = container_suite(tmp_path)
    out = tmp_path / "results"
    done = run_cli("run", suite, "--output", out, env=docker.env())
    assert done.returncode == 0, done.stderr
    assert "2 cells measured, 0 already complete, 0 failed" in done.stdout
    eagle = json.loads((out / "eagle3" / "tiny" / "c2" / "r0" / "summary.json").read_text())
    assert eagle["spec_decode"]["acceptance_length"] > 2.0

    runs = started(docker)
    names = [call[call.index("--name") + 1] for call in runs]
    assert [name.rsplit("-", 1)[0] for name in names] == [
        "specbench-baseline",
        "specbench-eagle3",
    ]
    # The server's variables go in as `-e NAME`; the emulator's reset needs the dev mode.
    assert all(
        call[call.index(IMAGE) + 1 : call.index(IMAGE) + 3] == ["vllm", "serve"] for call in runs
    )
    assert all({"STANDIN_STEP_MS", "VLLM_SERVER_DEV_MODE"} <= set(call) for call in runs)
    # Each container stopped by name when its server's cells were done.
    assert [call for call in docker.calls() if call[0] == "stop"] == [
        ["stop", "-t", "30", name] for name in names
    ]
    assert docker.containers() == {}
    assert server_pids(tag) == []

    manifest = json.loads((out / "manifest.json").read_text())
    provenance = manifest["servers"]["eagle3"]["provenance"]
    assert provenance["container"] == {
        "runtime": str(docker.bin / "docker"),
        "launcher": [
            str(docker.bin / "docker"),
            "run",
            "--rm",
            *DEVICES.split(),
            *["-v", "/models:/models", "--name", names[1]],
            *["-e", "STANDIN_STEP_MS", "-e", "VLLM_SERVER_DEV_MODE", IMAGE],
        ],
        "image": IMAGE,
        "image_id": IMAGE_ID,
        "repo_digests": [DIGEST],
        "name": names[1],
    }
    assert provenance["argv"][: len(runs[1]) + 1] == [str(docker.bin / "docker"), *runs[1]]
    assert f"--name {names[1]} -e STANDIN_STEP_MS" in provenance["command"]
    assert manifest["servers"]["eagle3"]["process"] is None


def test_a_campaign_killed_outright_leaves_a_container_the_rerun_stops(
    tmp_path: Path, docker: FakeDocker
) -> None:
    suite, tag = container_suite(tmp_path, step_ms=60)
    out = tmp_path / "results"
    with background_cli("run", suite, "--output", out, env=docker.env()) as campaign:
        wait_for(lambda: in_flight(out), timeout_s=120)
        campaign.send_signal(signal.SIGKILL)
        campaign.wait(timeout=30)
    (run,) = started(docker)
    name = run[run.index("--name") + 1]
    recorded = json.loads((out / "manifest.json").read_text())["servers"]["baseline"]
    assert recorded["process"]["container"] == {
        "runtime": str(docker.bin / "docker"),
        "name": name,
    }
    # The client died with specbench (its parent-death signal); the container did not.
    time.sleep(1.0)
    assert list(docker.containers()) == [name]
    (left,) = server_pids(tag)

    rerun = run_cli("run", suite, "--output", out, env=docker.env())
    assert rerun.returncode == 0, rerun.stderr
    assert (
        f"server 'baseline': container {name}, started by an earlier run that died, was still "
        "running; stopped it" in rerun.stderr
    )
    assert ["stop", "-t", "10", name] in docker.calls()
    assert left not in server_pids(tag)
    assert server_pids(tag) == []
    assert docker.containers() == {}
    assert len(summary_paths(out)) == 2


@pytest.mark.parametrize(
    ("image", "path", "message"),
    [
        (
            IMAGE,
            "/usr/bin:/bin",
            "error: server 'baseline': launcher: 'docker' is not an executable on PATH; "
            "install it, or give its path",
        ),
        (
            "rocm/vllm:missing",
            None,
            "error: server 'baseline': launcher: image 'rocm/vllm:missing' is not on this "
            "machine (Error response from daemon: No such image: rocm/vllm:missing); pull it "
            "first (docker pull rocm/vllm:missing)",
        ),
        (
            "rocm/base:no-vllm",
            None,
            "error: server 'baseline': launcher: `vllm --version` in image 'rocm/base:no-vllm' "
            "gave no version (exit 127: docker: Error response from daemon: failed to create "
            'task for container: exec: "vllm": executable file not found in $PATH: unknown.); '
            "use an image with vLLM installed (e.g. rocm/vllm), or fix launcher",
        ),
    ],
    ids=["no-runtime", "no-image", "no-vllm-inside"],
)
def test_a_bad_launcher_is_one_line_and_exit_2_before_any_server(
    tmp_path: Path, docker: FakeDocker, image: str, path: str | None, message: str
) -> None:
    suite, _ = container_suite(tmp_path, image)
    env = docker.env() if path is None else {**docker.env(), "PATH": path}
    done = run_cli("run", suite, "--output", tmp_path / "results", env=env)
    assert done.returncode == 2, done.stderr
    assert one_line(done.stderr) == message
    assert "Traceback" not in done.stderr
    assert started(docker) == []
