"""Recorded environment, redaction, GPU counting, executable lookup, log quoting."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.launch.gpus import GpuInventory, available_gpus, visible_device_count
from specbench.launch.health import log_tail, quote_log
from specbench.launch.host import check_port_free, find_vllm_executable, free_port
from specbench.launch.provenance import REDACTED, recorded_env, redact_argv, redact_env


def test_recorded_env_keeps_gpu_variables_and_redacts_secrets() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz",
        "VLLM_ROCM_USE_AITER": "1",
        "VLLM_API_KEY": "plain-but-secret",
        "HIP_VISIBLE_DEVICES": "0,1,2,3",
        "ROCM_PATH": "/opt/rocm",
        "CUDA_HOME": "/usr/local/cuda",
        "ROCR_VISIBLE_DEVICES": "0",
        "VLLM_DEBUG_BLOB": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_MAX_TOKENS_PER_STEP": "64",
        "AWS_SECRET_ACCESS_KEY": "x",
        "CUDA_AUTH_TOKEN": "abc",
    }
    assert recorded_env(env) == {
        "CUDA_AUTH_TOKEN": REDACTED,
        "CUDA_HOME": "/usr/local/cuda",
        "HIP_VISIBLE_DEVICES": "0,1,2,3",
        "ROCM_PATH": "/opt/rocm",
        "ROCR_VISIBLE_DEVICES": "0",
        "VLLM_API_KEY": REDACTED,
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_DEBUG_BLOB": REDACTED,
        "VLLM_MAX_TOKENS_PER_STEP": "64",
        "VLLM_ROCM_USE_AITER": "1",
    }


def test_redact_argv_hides_secret_flags_and_token_shaped_values() -> None:
    serve = ["vllm", "serve", "/work/main/.cache/tiny-models/target"]
    # Plain options, kept as they are.
    tail = ["--max-model-len", "2048", "--num-speculative-tokens", "3"]
    tail += ["--max-num-batched-tokens", "8192"]
    argv = [
        *serve,
        "--api-key",
        "abc",
        "--hf-token=hf_abcdefghijklmnopqrstuv",
        "--served-model-name",
        "sk-abcdefghijklmnopqrstuvwx",
        *tail,
    ]
    assert redact_argv(argv) == [
        *serve,
        "--api-key",
        REDACTED,
        f"--hf-token={REDACTED}",
        "--served-model-name",
        REDACTED,
        *tail,
    ]


def test_a_flag_that_counts_tokens_keeps_its_value_in_the_record() -> None:
    # The emulator's prices and power model (issue 40, 41): settings, not credentials.
    argv = ["--verify-token-ms", "0.15", "--energy-per-generated-token-j=0.05"]
    assert redact_argv(argv) == argv
    assert redact_argv(["--x-auth", "abc", "--db-password=p"]) == [
        "--x-auth",
        REDACTED,
        f"--db-password={REDACTED}",
    ]


def test_provenance_that_only_looks_like_a_secret_is_kept() -> None:
    revision = "0123456789abcdef0123456789abcdef01234567"
    argv = ["--tokenizer=/models/tok", "--revision", revision, f"--code-revision={revision}"]
    assert redact_argv(argv) == argv
    # the same 40 characters anywhere else are still hidden
    assert redact_argv(["--served-model-name", revision]) == ["--served-model-name", REDACTED]
    assert redact_env({"TOKENIZERS_PARALLELISM": "false", "HF_TOKEN": "x"}) == {
        "TOKENIZERS_PARALLELISM": "false",
        "HF_TOKEN": REDACTED,
    }


def test_visible_devices_and_available_gpus() -> None:
    assert visible_device_count({}) is None
    assert visible_device_count({"CUDA_VISIBLE_DEVICES": ""}) is None
    assert visible_device_count({"HIP_VISIBLE_DEVICES": "0,1,2"}) == 3
    inventory = GpuInventory(tool="amd-smi list", output="GPU: 0\nGPU: 1\n", num_gpus=2)
    assert available_gpus({}, inventory) == 2
    assert available_gpus({"ROCR_VISIBLE_DEVICES": "3"}, inventory) == 1
    assert available_gpus({}, None) is None


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_vllm_lookup_order(tmp_path: Path) -> None:
    explicit = _executable(tmp_path / "explicit-vllm")
    from_env = _executable(tmp_path / "env-vllm")
    on_path = tmp_path / "bin"
    on_path.mkdir()
    _executable(on_path / "vllm")
    env = {"SPECBENCH_VLLM": str(from_env), "PATH": str(on_path)}
    assert find_vllm_executable(explicit, env) == str(explicit)
    assert find_vllm_executable(None, env) == str(from_env)
    assert find_vllm_executable(None, {"PATH": str(on_path)}) == str(on_path / "vllm")
    with pytest.raises(SpecbenchError, match="no vllm executable: pass --vllm-bin"):
        find_vllm_executable(None, {"PATH": str(tmp_path / "empty")})
    with pytest.raises(SpecbenchError, match="from --vllm-bin"):
        find_vllm_executable(tmp_path / "missing", env)
    not_executable = tmp_path / "plain"
    not_executable.write_text("")
    with pytest.raises(SpecbenchError, match="from SPECBENCH_VLLM"):
        find_vllm_executable(None, {"SPECBENCH_VLLM": str(not_executable)})


def test_port_in_use_is_a_one_line_error() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(SpecbenchError, match=f"port {port} on 127.0.0.1 is in use"):
            check_port_free("127.0.0.1", port)
    check_port_free("127.0.0.1", free_port("127.0.0.1"))


def test_log_quote_picks_the_error_and_the_last_line(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(
        b"# specbench header\n"
        b"INFO 12-02 starting\n"
        b"\x1b[1;36m(APIServer pid=1)\x1b[0m INFO loading\n"
        b"vllm serve: error: unrecognized arguments: --no-such-flag\n"
        b"\n"
    )
    offset = len(b"# specbench header\n")
    lines = log_tail(log, offset)
    assert lines[0] == "INFO 12-02 starting"
    assert lines[1] == "(APIServer pid=1) INFO loading"
    assert quote_log(lines) == "vllm serve: error: unrecognized arguments: --no-such-flag"
    traceback = ["Traceback (most recent call last):", "ValueError: bad block size", "shutdown"]
    assert quote_log(traceback) == "ValueError: bad block size | shutdown"
    assert quote_log([]) == "(log is empty)"


def test_log_tail_of_missing_file_is_empty(tmp_path: Path) -> None:
    assert log_tail(tmp_path / "absent.log") == []


def test_secret_env_names_are_redacted_in_every_copy_of_a_persisted_config(monkeypatch) -> None:
    from specbench.launch.provenance import REDACTED, redact_config

    monkeypatch.setenv("SPECBENCH_REDACT_ENV", "corp_pass, OTHER")
    config = {
        "suite": {
            "servers": {
                "a": {
                    "env": {
                        "HF_TOKEN": "plain-token-1",
                        "VLLM_API_KEY": "k1",
                        "HFTOKEN": "t2",
                        "DB_PASSWORD": "pw",
                        "AWS_SECRET_ACCESS_KEY": "s",
                        "CORP_PASS": "user-listed",
                        "VLLM_MAX_NUM_BATCHED_TOKENS": "8192",
                        "VLLM_USE_V1": "1",
                    },
                    "extra_args": ["--api-key", "k2", "--block-size", "16"],
                }
            }
        },
        "provenance": {"config": {"env": {"HF_TOKEN": "plain-token-1"}}, "argv": ["--x-token=v"]},
    }
    redacted = redact_config(config)
    env = redacted["suite"]["servers"]["a"]["env"]
    assert env == {
        "HF_TOKEN": REDACTED,
        "VLLM_API_KEY": REDACTED,
        "HFTOKEN": REDACTED,
        "DB_PASSWORD": REDACTED,
        "AWS_SECRET_ACCESS_KEY": REDACTED,
        "CORP_PASS": REDACTED,
        "VLLM_MAX_NUM_BATCHED_TOKENS": "8192",
        "VLLM_USE_V1": "1",
    }
    assert redacted["suite"]["servers"]["a"]["extra_args"] == [
        "--api-key",
        REDACTED,
        "--block-size",
        "16",
    ]
    assert redacted["provenance"]["config"]["env"] == {"HF_TOKEN": REDACTED}
    assert redacted["provenance"]["argv"] == [f"--x-token={REDACTED}"]
    assert config["suite"]["servers"]["a"]["env"]["HF_TOKEN"] == "plain-token-1"  # a copy
