"""Detection of vLLM's per-request flags from `vllm serve --help=<keyword>`, and the launch
command that adds `--enable-per-request-metrics` when the server has it (started with
--gpus-unchecked: the stand-in vllm is no CPU build and the GPUs are not what is tested)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from specbench.launch import ServerConfig, SpeculativeConfig
from specbench.launch.capabilities import (
    PER_REQUEST_KEYWORD,
    PER_REQUEST_METRICS_FLAG,
    PER_REQUEST_TIMING_FLAG,
    parse_flag_help,
    supports_flag,
)
from specbench.launch.command import launch_command

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm"
FIXTURE = FIXTURES / "help_per_request.txt"
#: `vllm serve --help=per-request` of vLLM 0.32.0: both per-request flags.
KEYWORD_FIXTURE = FIXTURES / "help_per_request_keyword.txt"
EAGLE3 = ServerConfig(
    model="org/target",
    speculative=SpeculativeConfig(method="eagle3", model="org/draft", num_speculative_tokens=3),
)


def test_the_recorded_vllm_032_help_says_supported() -> None:
    assert parse_flag_help(FIXTURE.read_text()) is True
    keyword = KEYWORD_FIXTURE.read_text()
    assert parse_flag_help(keyword, PER_REQUEST_METRICS_FLAG) is True
    assert parse_flag_help(keyword, PER_REQUEST_TIMING_FLAG) is True
    # The spec-decode flag's own help lists no timing flag: a match, but not that one.
    assert parse_flag_help(FIXTURE.read_text(), PER_REQUEST_TIMING_FLAG) is False


def test_an_older_vllm_says_no_match_and_garbage_is_unknown() -> None:
    assert (
        parse_flag_help("No group or arguments matching 'per-request-spec-decode-metrics'") is False
    )
    assert parse_flag_help("Traceback (most recent call last): ...") is None
    # `--no-enable-...` alone is not the flag.
    assert parse_flag_help("  --no-enable-per-request-metrics", PER_REQUEST_TIMING_FLAG) is None


def test_an_executable_is_asked_once(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    fake = tmp_path / "vllm"
    fake.write_text(f"#!/bin/sh\necho x >> {calls}\necho \"No group or arguments matching '$2'\"\n")
    fake.chmod(0o755)
    env = dict(os.environ)
    assert supports_flag(str(fake), PER_REQUEST_METRICS_FLAG, env) is False
    assert supports_flag(str(fake), PER_REQUEST_METRICS_FLAG, env) is False
    assert calls.read_text().count("x") == 1


def test_servers_starting_at_once_ask_once(tmp_path: Path) -> None:
    """Three servers launched side by side (the test pool starts three at once) share one
    question: before, each thread missed the cache and started its own vLLM CLI (about
    15 CPU-s each on 2 cores). The fake answers slowly so that all three ask meanwhile."""
    calls = tmp_path / "calls"
    fake = tmp_path / "vllm"
    fake.write_text(f'#!/bin/sh\necho x >> {calls}\nsleep 1\necho "  --${{2#--help=}}"\n')
    fake.chmod(0o755)
    env = dict(os.environ)
    with ThreadPoolExecutor(max_workers=3) as pool:
        asked = [pool.submit(supports_flag, str(fake), "some-flag", env) for _ in range(3)]
        answers = [future.result() for future in asked]
    assert answers == [True, True, True]
    assert calls.read_text().count("x") == 1


def _fake_vllm(tmp_path: Path, help_text: Path | None) -> Path:
    """A `vllm` that answers `serve --help=per-request` with `help_text` (or no match) and
    logs each question."""
    fake = tmp_path / "vllm"
    answer = f"cat {help_text}" if help_text else "echo \"No group or arguments matching '$2'\""
    fake.write_text(f'#!/bin/sh\necho "$2" >> {tmp_path / "asked"}\n{answer}\n')
    fake.chmod(0o755)
    return fake


def test_a_vllm_with_the_flag_gets_it_asking_once_for_both_flags(tmp_path: Path) -> None:
    fake = _fake_vllm(tmp_path, KEYWORD_FIXTURE)
    command = launch_command(
        EAGLE3, name="eagle3", vllm_bin=str(fake), base_env={}, gpus_unchecked=True
    )
    argv = command.argv_at("127.0.0.1", 8000)
    assert argv[-7:] == [
        "--per-request-spec-decode-metrics",
        "summary",
        "--enable-per-request-metrics",
        "--host",
        "127.0.0.1",
        "--port",
        "8000",
    ]
    assert command.argv == argv[:-4] and command.notes == ()
    baseline = ServerConfig(model="org/target", baseline=True)
    assert launch_command(
        baseline, name="b", vllm_bin=str(fake), base_env={}, gpus_unchecked=True
    ).argv[-1] == ("--enable-per-request-metrics")
    assert (tmp_path / "asked").read_text().split() == [f"--help={PER_REQUEST_KEYWORD}"]


def test_an_older_vllm_starts_without_it_and_says_so(tmp_path: Path) -> None:
    fake = _fake_vllm(tmp_path, None)
    command = launch_command(
        EAGLE3, name="eagle3", vllm_bin=str(fake), base_env={}, gpus_unchecked=True
    )
    assert "--enable-per-request-metrics" not in command.argv
    assert "--per-request-spec-decode-metrics" not in command.argv
    assert f"{fake} has no --enable-per-request-metrics: decode times come from the client's " in (
        " ".join(command.notes)
    )


def test_disable_log_stats_or_the_suites_own_choice_keeps_it_out(tmp_path: Path) -> None:
    fake = _fake_vllm(tmp_path, KEYWORD_FIXTURE)
    quiet = EAGLE3.model_copy(update={"extra_args": ["--disable-log-stats"]})
    command = launch_command(
        quiet, name="eagle3", vllm_bin=str(fake), base_env={}, gpus_unchecked=True
    )
    assert "--enable-per-request-metrics" not in command.argv
    assert command.notes == (
        "--disable-log-stats in extra_args: started without --enable-per-request-metrics "
        "(vLLM refuses both); decode times come from the client's clock",
    )
    off = EAGLE3.model_copy(update={"extra_args": ["--no-enable-per-request-metrics"]})
    argv = launch_command(
        off, name="eagle3", vllm_bin=str(fake), base_env={}, gpus_unchecked=True
    ).argv
    assert argv.count("--enable-per-request-metrics") == 0 and argv[-1] == "summary"


def test_the_emulator_always_gets_it() -> None:
    emulator = ServerConfig(engine="emulator", model="emu")
    command = launch_command(emulator, name="emu", vllm_bin=None, base_env={})
    assert command.argv_at("127.0.0.1", 8000)[-5:] == [
        "--enable-per-request-metrics",
        "--host",
        "127.0.0.1",
        "--port",
        "8000",
    ]
