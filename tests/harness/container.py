"""A container runtime for the tests: the docker stand-in (`fake_docker.py`) on PATH, its
images, and an image's `vllm` that serves with the emulator.

No container daemon runs on the test machines (the docker CLI there has no socket, and no
image can be pulled), so the tests start servers through the stand-in: a real executable
named `docker`, found on PATH as the real one would be.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from harness.cli import REPO

STAND_IN = Path(__file__).with_name("fake_docker.py")
#: What the image's vllm prints to `vllm --version`.
IMAGE_VLLM_VERSION = "0.32.0+rocm.container"
#: vLLM 0.32's `serve --help=per-request`: both per-request flags are known.
HELP = REPO / "tests" / "fixtures" / "vllm" / "help_per_request_keyword.txt"


@dataclass(frozen=True)
class FakeDocker:
    """The stand-in installed in a folder: `bin` goes first on PATH."""

    bin: Path
    state: Path

    def env(self) -> dict[str, str]:
        """This process's environment with the stand-in first on PATH."""
        return {**os.environ, "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}"}

    def calls(self) -> list[list[str]]:
        """Every invocation's argv (after `docker`), in order."""
        path = self.state / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def containers(self) -> dict[str, int]:
        """Containers the stand-in still records: name → pid."""
        return {p.name: int(p.read_text()) for p in (self.state / "containers").iterdir()}

    def kill_left(self) -> None:
        """SIGKILL every container still recorded (a failed test leaves no server)."""
        for pid in self.containers().values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


def install_docker(folder: Path, images: dict[str, dict[str, object]]) -> FakeDocker:
    """`folder/bin/docker` (the stand-in) and its state; `images`: image → Id,
    RepoDigests and `vllm` (the path the image's vllm maps to, None: it has none)."""
    state = folder / "docker-state"
    (state / "containers").mkdir(parents=True)
    (state / "images.json").write_text(json.dumps(images))
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text(
        f"#!{sys.executable}\nimport os, runpy\n"
        f"os.environ['FAKE_DOCKER_STATE'] = {str(state)!r}\n"
        f"runpy.run_path({str(STAND_IN)!r}, run_name='__main__')\n"
    )
    docker.chmod(0o755)
    return FakeDocker(bin_dir, state)


def image_vllm(folder: Path) -> Path:
    """An image's `vllm`: answers `--version` and `serve --help=`, and serves `vllm serve
    MODEL ...` with the emulator (decode steps of $STANDIN_STEP_MS ms, default 1, a
    variable only `-e` brings into the container)."""
    script = folder / "image-vllm"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import json, os, sys
            args = sys.argv[1:]
            if args == ["--version"]:
                print({IMAGE_VLLM_VERSION!r})
                sys.exit(0)
            if any(arg.startswith("--help") for arg in args):
                print(open({str(HELP)!r}).read())
                sys.exit(0)
            value = lambda flag: args[args.index(flag) + 1]
            model = value("--served-model-name") if "--served-model-name" in args else args[1]
            argv = ["--model", model, "--host", value("--host"), "--port", value("--port")]
            if "--speculative-config" in args:
                k = json.loads(value("--speculative-config"))["num_speculative_tokens"]
                argv += ["--num-speculative-tokens", str(k)]
            else:
                argv.append("--no-spec")
            if "--enable-per-request-metrics" in args:
                argv.append("--enable-per-request-metrics")
            step = os.environ.get("STANDIN_STEP_MS", "1")
            argv += ["--step-ms", step, "--prefill-ms", step, "--per-request-step-ms", "0"]
            os.execv(sys.executable, [sys.executable, "-m", "specbench.cli.main", "emulate", *argv])
            """
        )
    )
    script.chmod(0o755)
    return script
