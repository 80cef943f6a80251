"""A stand-in for the docker CLI, for tests on machines with no container daemon.

It implements the subset specbench calls, with docker's exit codes and messages:

- `docker image inspect IMAGE`: the image's JSON ([{"Id", "RepoDigests"}]) or exit 1
  "No such image";
- `docker run [OPTIONS] IMAGE CMD...`: the "container" runs CMD, with the image's `vllm`
  mapped to a real executable on this machine, in its own session (as a daemon's child,
  not the client's group), with only the `-e` variables and a PATH (a container does not
  inherit the client's environment); the client waits for it. Exit 125 for an unknown
  image or a name in use, 127 when the image has no such executable;
- `docker stop [-t N] NAME` / `docker kill NAME`: SIGTERM (SIGKILL after N s) or SIGKILL
  the container's process group; exit 1 "No such container" when none runs by that name.

Unlike docker, the client never passes a signal on to its container (docker's
`--sig-proxy`): a client killed leaves its container running, as a client that dies
without passing on its SIGTERM would, the case specbench's teardown must cover by name.

The state lives in $FAKE_DOCKER_STATE: images.json (image → Id, RepoDigests, and
`vllm`, the path the image's vllm maps to, or null when the image has none),
containers/NAME (the container's pid) and calls.jsonl (every invocation's argv).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

from specbench.launch.host import group_alive

STATE = Path(os.environ["FAKE_DOCKER_STATE"])
#: docker run options that take a value as the next word (the rest are switches).
VALUED = {
    "--name", "-e", "--env", "-v", "--volume", "--device", "--group-add", "--ipc",
    "--network", "--net", "-p", "--publish", "--shm-size", "--security-opt", "--cap-add",
    "-w", "--workdir", "--entrypoint", "--ulimit", "-u", "--user",
}  # fmt: skip


def say(line: str, stream: TextIO = sys.stdout) -> None:
    stream.write(line + "\n")


def images() -> dict[str, dict[str, object]]:
    return json.loads((STATE / "images.json").read_text())


def inspect(image: str) -> int:
    known = images().get(image)
    if known is None:
        say(f"Error response from daemon: No such image: {image}", sys.stderr)
        return 1
    say(json.dumps([{"Id": known["Id"], "RepoDigests": known["RepoDigests"]}]))
    return 0


def run(words: list[str]) -> int:
    name, env, remove, index = None, {"PATH": "/usr/local/bin:/usr/bin:/bin"}, False, 0
    while index < len(words) and words[index].startswith("-"):
        flag, _, value = words[index].partition("=")
        if flag in VALUED and not value:
            index += 1
            value = words[index]
        if flag == "--name":
            name = value
        elif flag in ("-e", "--env"):
            variable, equals, given = value.partition("=")
            if equals or variable in os.environ:
                env[variable] = given if equals else os.environ[variable]
        elif flag == "--rm":
            remove = True
        index += 1
    image, command = words[index], words[index + 1 :]
    known = images().get(image)
    if known is None:
        say(f"Unable to find image '{image}' locally", sys.stderr)
        return 125
    if command[:1] == ["vllm"]:
        if known.get("vllm") is None:
            say(
                "docker: Error response from daemon: failed to create task for container: "
                'exec: "vllm": executable file not found in $PATH: unknown.',
                sys.stderr,
            )
            return 127
        command = [str(known["vllm"]), *command[1:]]
    record = STATE / "containers" / (name or "")
    if name is not None and record.exists() and group_alive(int(record.read_text())):
        say(f'Conflict. The container name "/{name}" is already in use', sys.stderr)
        return 125
    container = subprocess.Popen(command, env=env, start_new_session=True)
    if name is not None:
        record.write_text(str(container.pid))
    code = container.wait()
    if name is not None and remove:
        record.unlink(missing_ok=True)
    return code


def stop(words: list[str], signum: int) -> int:
    grace = float(words[words.index("-t") + 1]) if "-t" in words else 10.0
    name = words[-1]
    record = STATE / "containers" / name
    pid = int(record.read_text()) if record.exists() else None
    if pid is None or not group_alive(pid):
        say(f"Error response from daemon: No such container: {name}", sys.stderr)
        return 1
    os.killpg(pid, signum)
    deadline = time.monotonic() + grace
    while group_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if group_alive(pid):
        os.killpg(pid, signal.SIGKILL)
    while group_alive(pid):
        time.sleep(0.1)
    record.unlink(missing_ok=True)
    say(name)
    return 0


def main(argv: list[str]) -> int:
    with (STATE / "calls.jsonl").open("a") as calls:
        calls.write(json.dumps(argv) + "\n")
    if argv[:2] == ["image", "inspect"]:
        return inspect(argv[2])
    if argv[:1] == ["run"]:
        return run(argv[1:])
    if argv[:1] == ["stop"]:
        return stop(argv[1:], signal.SIGTERM)
    if argv[:1] == ["kill"]:
        return stop(argv[1:], signal.SIGKILL)
    say(f"fake docker: {argv[:1]} is not implemented", sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
