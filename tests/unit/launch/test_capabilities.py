"""Detection of --per-request-spec-decode-metrics from `vllm serve --help=<flag>`."""

from __future__ import annotations

import os
from pathlib import Path

from specbench.launch.capabilities import PER_REQUEST_METRICS_FLAG, parse_flag_help, supports_flag

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "vllm" / "help_per_request.txt"


def test_the_recorded_vllm_032_help_says_supported() -> None:
    assert parse_flag_help(FIXTURE.read_text()) is True


def test_an_older_vllm_says_no_match_and_garbage_is_unknown() -> None:
    assert (
        parse_flag_help("No group or arguments matching 'per-request-spec-decode-metrics'") is False
    )
    assert parse_flag_help("Traceback (most recent call last): ...") is None


def test_an_executable_is_asked_once(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    fake = tmp_path / "vllm"
    fake.write_text(f"#!/bin/sh\necho x >> {calls}\necho \"No group or arguments matching '$2'\"\n")
    fake.chmod(0o755)
    env = dict(os.environ)
    assert supports_flag(str(fake), PER_REQUEST_METRICS_FLAG, env) is False
    assert supports_flag(str(fake), PER_REQUEST_METRICS_FLAG, env) is False
    assert calls.read_text().count("x") == 1
