"""An attached server's answers against its suite entry: which fields differ, and the plan
that records the server's values when they are accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.launch import ServerConfig, SpeculativeConfig
from specbench.launch.argv import launch_config
from specbench.launch.command import launch_command
from specbench.run.preflight import ServerAnswer, identity_differences

EAGLE3 = ServerConfig(
    model="org/target",
    speculative=SpeculativeConfig(method="eagle3", model="org/draft", num_speculative_tokens=3),
)


def answer(**fields: object) -> ServerAnswer:
    values: dict[str, object] = {
        "model": "org/target",
        "max_model_len": 4096,
        "speculative": True,
        "num_speculative_tokens": 3,
        "vllm_version": "0.32.0",
    }
    return ServerAnswer(**{**values, **fields})  # type: ignore[arg-type]


def test_a_server_that_is_its_suite_entry_differs_in_nothing() -> None:
    assert identity_differences(EAGLE3, answer()) == {}


def test_model_speculation_and_k_are_each_named_with_both_values() -> None:
    assert identity_differences(EAGLE3, answer(num_speculative_tokens=2)) == {
        "num_speculative_tokens": (3, 2)
    }
    assert identity_differences(EAGLE3, answer(model="org/other")) == {
        "served model": ("org/target", "org/other")
    }
    # Not speculating at all: K is not compared (there is no per-position series).
    assert identity_differences(EAGLE3, answer(speculative=False, num_speculative_tokens=None)) == {
        "speculative": (True, False)
    }
    baseline = ServerConfig(model="org/target", baseline=True)
    assert identity_differences(baseline, answer()) == {"speculative": (False, True)}


def test_a_server_without_the_per_position_series_is_not_refused_for_k() -> None:
    assert identity_differences(EAGLE3, answer(num_speculative_tokens=None)) == {}


def test_the_dry_run_command_is_the_launch_command_with_dev_mode(tmp_path: Path) -> None:
    vllm = tmp_path / "vllm"
    vllm.write_text("#!/bin/sh\nexit 0\n")
    vllm.chmod(0o755)
    config = EAGLE3.model_copy(update={"env": {"HF_TOKEN": "hf_secret"}})
    command = launch_command(
        launch_config(config), name="eagle3", vllm_bin=str(vllm), base_env={}, gpus_unchecked=True
    )
    assert command.env == {"HF_TOKEN": "hf_secret", "VLLM_SERVER_DEV_MODE": "1"}
    shown = command.shown()
    assert shown.startswith(f"HF_TOKEN='<redacted>' VLLM_SERVER_DEV_MODE=1 {vllm} serve org/target")
    assert command.argv_at("127.0.0.1", 8000)[-4:] == ["--host", "127.0.0.1", "--port", "8000"]


def test_a_pinned_vllm_version_is_compared_ignoring_a_local_label() -> None:
    pinned = EAGLE3.model_copy(update={"vllm_version": "0.32.0"})
    assert identity_differences(pinned, answer(vllm_version="0.32.0+rocm")) == {}
    assert identity_differences(pinned, answer(vllm_version="0.31.1")) == {
        "vllm_version": ("0.32.0", "0.31.1")
    }
    # A server without /version cannot show it is the pinned release.
    assert identity_differences(pinned, answer(vllm_version=None)) == {
        "vllm_version": ("0.32.0", None)
    }
    # Not pinned: any version.
    assert identity_differences(EAGLE3, answer(vllm_version="0.1.0")) == {}


def test_a_server_to_start_must_be_the_pinned_vllm_before_it_starts(tmp_path: Path) -> None:
    vllm = tmp_path / "vllm"
    vllm.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "INFO noise" && echo 0.31.1+cpu\n')
    vllm.chmod(0o755)
    pinned = EAGLE3.model_copy(update={"vllm_version": "0.31.1"})
    command = launch_command(pinned, name="eagle3", vllm_bin=str(vllm), base_env={})
    assert command.executable == str(vllm)
    other = EAGLE3.model_copy(update={"vllm_version": "0.32.0"})
    with pytest.raises(SpecbenchError) as refused:
        launch_command(other, name="eagle3", vllm_bin=str(vllm), base_env={})
    assert str(refused.value) == (
        f"server 'eagle3': the suite asks vllm_version = '0.32.0', `{vllm} --version` says "
        "'0.31.1+cpu'; install that vLLM, point --vllm-bin at it, or change vllm_version"
    )
