"""Server lifecycle with real processes: the emulator, and stand-in `vllm` executables.

Every server here is a real child process in its own group; the tests check readiness,
provenance, fail-fast start-up errors, and that teardown leaves no process behind on a
normal exit, an exception, SIGTERM, SIGINT to `specbench serve`, and a stubborn child.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from specbench.common import interrupt
from specbench.common.errors import ServerError, SpecbenchError
from specbench.launch import EmulatorOverrides, ServerConfig, ServerProcess, SpeculativeConfig
from specbench.launch.host import group_alive

REPO = Path(__file__).resolve().parents[2]
SPECBENCH = Path(sys.executable).with_name("specbench")

SPECULATIVE = ServerConfig(
    engine="emulator",
    model="emu-target",
    speculative=SpeculativeConfig(method="eagle3", model="emu-draft", num_speculative_tokens=3),
    emulator=EmulatorOverrides(acceptance=[0.8, 0.75, 0.7], prefill_ms=1.0, step_ms=1.0, seed=3),
)
BASELINE = ServerConfig(engine="emulator", model="emu-target", baseline=True)


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode()


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _serving_children(pid: int) -> list[int]:
    """The children of `pid` running `vllm serve` (not the `--help` capability probe)."""
    found = []
    for child in children_of(pid):
        try:
            argv = (Path("/proc") / str(child) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and not any(arg.startswith(b"--help") for arg in argv):
            found.append(child)
    return found


@pytest.fixture
def fake_vllm(tmp_path: Path) -> Iterator[Path]:
    """A `vllm` stand-in: leaves a SIGTERM-ignoring child in its group, then runs the emulator.

    vLLM's engine workers share the server's process group; this child plays the worker
    that outlives the leader, so teardown must SIGKILL the group.
    """
    script = tmp_path / "vllm"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import os, signal, sys, time
            args = sys.argv[1:]
            if any(arg.startswith("--help") for arg in args):  # as vLLM: help, then exit
                print("usage: vllm serve [options]", flush=True)
                sys.exit(0)
            if args == ["--version"]:  # a CPU build: no GPU tool needed to start it
                print("0.32.0+cpu", flush=True)
                sys.exit(0)
            if "--fail" in args:
                print("starting", flush=True)
                sys.exit("vllm serve: error: unrecognized arguments: --fail")
            if "--slow" in args:
                time.sleep(300)
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                os.execvp("sleep", ["sleep", "300"])
            host = args[args.index("--host") + 1]
            port = args[args.index("--port") + 1]
            os.execv(sys.executable, [sys.executable, "-m", "specbench.cli.main", "emulate",
                     "--model", args[1], "--no-spec", "--host", host, "--port", port])
            """
        )
    )
    script.chmod(0o755)
    yield script


def test_speculative_emulator_ready_provenance_and_clean_exit(tmp_path: Path) -> None:
    server = ServerProcess(SPECULATIVE, name="speculative", log_dir=tmp_path)
    with server:
        assert server.provenance is not None and server.port is not None
        pgid = server.pid
        assert pgid is not None and os.getpgid(pgid) == pgid != os.getpgid(0)
        status, body = get(f"{server.base_url}/v1/models")
        assert status == 200 and [m["id"] for m in json.loads(body)["data"]] == ["emu-target"]
        _, metrics = get(f"{server.base_url}/metrics")
        assert "vllm:spec_decode_num_drafts_total" in metrics
        provenance = server.provenance
        assert provenance.engine == "emulator"
        assert provenance.vllm_version == "0.32.0"
        assert provenance.gpus_used == 1
        assert provenance.gpu_inventory is None and provenance.gpu_check is None
        assert provenance.argv[:4] == [sys.executable, "-m", "specbench.cli.main", "emulate"]
        assert provenance.argv[-4:] == ["--host", "127.0.0.1", "--port", str(server.port)]
        assert "--acceptance" in provenance.argv
        assert provenance.served_model_name == "emu-target"
        assert 0 < provenance.startup_s < 60
        assert json.loads(provenance.model_dump_json())["config"]["engine"] == "emulator"
        port = server.port
    assert not group_alive(pgid)
    assert not listening(port)
    log = (tmp_path / "server-speculative.log").read_text()
    assert log.startswith("# specbench ")
    assert "emulate --model emu-target" in log.splitlines()[0]


def test_baseline_emulator_exposes_no_spec_counters_and_exception_tears_down(
    tmp_path: Path,
) -> None:
    with (
        pytest.raises(RuntimeError, match="boom"),
        ServerProcess(BASELINE, name="baseline", log_dir=tmp_path) as server,
    ):
        pgid = server.pid
        assert pgid is not None
        _, metrics = get(f"{server.base_url}/metrics")
        assert "vllm:generation_tokens_total" in metrics
        assert "spec_decode" not in metrics
        raise RuntimeError("boom")
    assert not group_alive(pgid)


def test_sigterm_inside_the_block_stops_the_server_and_restores_the_handler(
    tmp_path: Path,
) -> None:
    before = signal.getsignal(signal.SIGTERM)
    with (
        interrupt.stop_on_signals(),
        pytest.raises(interrupt.Interrupted) as caught,
        ServerProcess(BASELINE, name="baseline", log_dir=tmp_path) as server,
    ):
        pgid = server.pid
        assert pgid is not None
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this returns
    assert caught.value.exit_code == 128 + signal.SIGTERM
    assert not group_alive(pgid)
    assert signal.getsignal(signal.SIGTERM) is before


def test_start_failure_is_one_line_quoting_the_log(tmp_path: Path) -> None:
    broken = BASELINE.model_copy(update={"max_model_len": 1})  # the emulator refuses < 2
    started = time.monotonic()
    with pytest.raises(ServerError) as caught:
        ServerProcess(broken, name="broken", log_dir=tmp_path, ready_timeout_s=120).__enter__()
    message = str(caught.value)
    assert time.monotonic() - started < 30, "must fail fast, not wait for the timeout"
    assert "\n" not in message
    assert message.startswith("emulator server 'broken' exited with code 2 before it was ready;")
    assert "max-model-len" in message or "max_model_len" in message


def test_fake_vllm_stubborn_child_is_killed_with_the_group(tmp_path: Path, fake_vllm: Path) -> None:
    config = ServerConfig(model="fake-model", env={"VLLM_FAKE": "1", "HF_TOKEN": "hf_x"})
    server = ServerProcess(
        config, name="stubborn", log_dir=tmp_path, vllm_bin=fake_vllm, stop_grace_s=1.0
    )
    with server:
        pgid = server.pid
        assert pgid is not None
        assert server.provenance is not None
        assert server.provenance.argv[:3] == [str(fake_vllm), "serve", "fake-model"]
        assert server.provenance.env["VLLM_FAKE"] == "1"
        assert "HF_TOKEN" not in server.provenance.env
        assert server.provenance.command.startswith("VLLM_FAKE=1 HF_TOKEN='<redacted>' ")
        assert len([pid for pid in children_of(pgid)]) == 1  # the SIGTERM-ignoring child
        started = time.monotonic()
    assert not group_alive(pgid)
    assert 1.0 <= time.monotonic() - started < 15


def test_fake_vllm_start_error_and_port_in_use(tmp_path: Path, fake_vllm: Path) -> None:
    failing = ServerConfig(model="m", extra_args=["--fail"])
    with (
        pytest.raises(ServerError) as caught,
        ServerProcess(failing, name="bad", log_dir=tmp_path, vllm_bin=fake_vllm),
    ):
        pass
    assert str(caught.value).endswith("vllm serve: error: unrecognized arguments: --fail"), (
        caught.value
    )
    assert "vllm server 'bad' exited with code 1 before it was ready" in str(caught.value)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        taken_port = ServerProcess(
            ServerConfig(model="m"), name="p", log_dir=tmp_path, vllm_bin=fake_vllm, port=port
        )
        with pytest.raises(SpecbenchError, match=f"port {port} on 127.0.0.1 is in use"):
            taken_port.start()
        assert taken_port.pid is None
    gpu_hungry = ServerConfig(
        model="m", tensor_parallel_size=4, env={"CUDA_VISIBLE_DEVICES": "0,1"}
    )
    hungry = ServerProcess(gpu_hungry, name="g", log_dir=tmp_path, vllm_bin=fake_vllm)
    expected = r"needs TP × PP × DP = 4 × 1 × 1 = 4 GPUs, only 2 visible"
    with pytest.raises(SpecbenchError, match=expected):
        hungry.start()
    assert hungry.pid is None


def test_ready_timeout_kills_a_server_that_never_serves(tmp_path: Path, fake_vllm: Path) -> None:
    slow = ServerConfig(model="m", extra_args=["--slow"])
    server = ServerProcess(
        slow, name="slow", log_dir=tmp_path, vllm_bin=fake_vllm, ready_timeout_s=2
    )
    with pytest.raises(ServerError, match=r"'slow' was not ready after 2 s"), server:
        pass
    assert server.pid is not None and not group_alive(server.pid)


def _start_serve(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SPECBENCH), "serve", *extra, "--log-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )


@pytest.mark.parametrize(("signum", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_to_specbench_serve_leaves_no_process(
    tmp_path: Path, signum: int, exit_code: int
) -> None:
    serve = _start_serve(
        tmp_path, str(REPO / "suites" / "emulator.toml"), "--config", "speculative"
    )
    try:
        assert serve.stdout is not None
        lines = []
        for line in serve.stdout:
            lines.append(line)
            if line.startswith("ready: "):
                break
        ready = lines[-1]
        assert ready.startswith("ready: http://127.0.0.1:"), lines
        port = int(ready.split()[1].rsplit(":", 1)[1])
        assert get(f"http://127.0.0.1:{port}/health")[0] == 200
        (server_pid,) = children_of(serve.pid)
        assert os.getpgid(server_pid) == server_pid
        serve.send_signal(signum)
        _, stderr = serve.communicate(timeout=60)
        assert serve.returncode == exit_code, stderr
        assert not group_alive(server_pid)
        assert not listening(port)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def test_sigint_during_startup_kills_the_starting_server(tmp_path: Path, fake_vllm: Path) -> None:
    suite = tmp_path / "slow.toml"
    suite.write_text(
        textwrap.dedent(
            """\
            name = "slow"
            [target]
            model = "m"
            extra_args = ["--slow"]
            [servers.base]
            baseline = true
            [[workloads]]
            dataset = "mt-bench"
            concurrency = [1]
            max_tokens = 8
            """
        )
    )
    serve = _start_serve(tmp_path, str(suite), "--config", "base", "--vllm-bin", str(fake_vllm))
    try:
        # Wait for the server itself: `serve` first runs `vllm --help` (the capability probe)
        # as a short-lived child, and a wait for "any child" caught the probe, which had
        # exited by the next look (one CI: "expected 1, got 0").
        deadline = time.monotonic() + 60
        while not (servers := _serving_children(serve.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        (server_pid,) = servers
        serve.send_signal(signal.SIGINT)
        _, stderr = serve.communicate(timeout=60)
        assert serve.returncode == 130, stderr
        assert not group_alive(server_pid)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def _serve_to_the_end(
    cwd: Path, suite: str, config: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The installed `specbench serve suites/SUITE --config CONFIG`, run to its exit."""
    argv = [str(SPECBENCH), "serve", str(REPO / "suites" / suite), "--config", config]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=60, env=env)


def test_serve_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    done = _serve_to_the_end(tmp_path, "emulator.toml", "nope")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {REPO / 'suites' / 'emulator.toml'}: no server config 'nope'; "
        "allowed: baseline, speculative"
    ]
    missing = _serve_to_the_end(
        tmp_path,
        "cpu-demo.toml",
        "baseline",
        env={**os.environ, "PATH": "/usr/bin:/bin", "SPECBENCH_VLLM": ""},
    )
    assert missing.returncode == 2
    assert "no vllm executable: pass --vllm-bin PATH, set SPECBENCH_VLLM" in missing.stderr


def test_ctrl_c_during_teardown_does_not_abandon_the_group(tmp_path: Path, fake_vllm: Path) -> None:
    server = ServerProcess(
        ServerConfig(model="m"),
        name="twice",
        log_dir=tmp_path,
        vllm_bin=fake_vllm,
        stop_grace_s=3.0,
    )

    def press_ctrl_c() -> None:
        for delay_s in (0.3, 0.5):
            time.sleep(delay_s)
            os.kill(os.getpid(), signal.SIGINT)

    pgid = None
    # Teardown waits out the grace period for the SIGTERM-ignoring child, then kills it, with
    # both Ctrl-C presses landing while it runs: they are held, not lost, and the interrupt
    # arrives once the group is gone (a job's scancel must still end the job).
    with pytest.raises(KeyboardInterrupt), server:
        pgid = server.pid
        assert pgid is not None
        presser = threading.Thread(target=press_ctrl_c)
        presser.start()
    presser.join()
    assert pgid is not None and not group_alive(pgid)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
