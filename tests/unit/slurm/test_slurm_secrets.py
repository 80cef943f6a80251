"""The suite a Slurm submitter saves for its jobs: secrets redacted on disk, restored by the job
from its environment; one line naming the variable when the environment lacks it."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.run.plan import suite_hash
from specbench.slurm import paths
from specbench.slurm.secrets import check_arguments, restore_secrets, server_secrets
from specbench.slurm.submit import batch_script
from specbench.suite import SlurmSettings, load_suite

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"
SECRETS = {
    "HF_TOKEN": "hf-value-AAAA1111",
    "VLLM_API_KEY": "api-value-BBBB2222",
    "CORP_PASS": "listed-value-CCCC3333",  # no secret word: redacted because it is listed
}


def suite_file(tmp_path: Path, extra_args: str = "") -> Path:
    env = ", ".join(f'{name} = "{value}"' for name, value in SECRETS.items())
    path = tmp_path / "suite.toml"
    path.write_text(
        f"""
name = "secrets"
[target]
engine = "emulator"
model = "m"
env = {{ {env}, VLLM_CPU_KVCACHE_SPACE = "1" }}
{extra_args}
[servers.base]
baseline = true
[servers.spec]
speculative = {{ method = "ngram", num_speculative_tokens = 2 }}
env = {{ HF_TOKEN = "hf-other-DDDD4444" }}
[[workloads]]
dataset = "{DATA}"
concurrency = [1]
max_tokens = 8
"""
    )
    return path


def test_saved_suite_holds_no_secret_and_the_job_restores_it_from_its_environment(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("SPECBENCH_REDACT_ENV", "CORP_PASS")
    suite = load_suite(suite_file(tmp_path))
    out = tmp_path / "results"
    paths.write_suite(out, suite)

    text = paths.suite_file(out).read_text()
    for value in [*SECRETS.values(), "hf-other-DDDD4444"]:
        assert value not in text
    assert text.count('"<redacted>"') == 6  # 3 names in each server's env
    assert '"VLLM_CPU_KVCACHE_SPACE": "1"' in text  # not a secret: kept
    saved = paths.read_suite(out)
    assert saved.servers["base"].env["HF_TOKEN"] == "<redacted>"

    # Each shard's sbatch gets its own server's values (the servers differ on HF_TOKEN).
    assert server_secrets(suite, "base") == SECRETS
    assert server_secrets(suite, "spec") == {**SECRETS, "HF_TOKEN": "hf-other-DDDD4444"}
    environ = {**server_secrets(suite, "spec"), "PATH": "/bin"}  # what spec's job inherits
    restored = restore_secrets(saved, environ, paths.suite_file(out))
    assert restored.servers["spec"].env == suite.servers["spec"].env
    assert restored.servers["spec"].env["VLLM_CPU_KVCACHE_SPACE"] == "1"


def test_the_job_restores_exactly_the_submitted_suite(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECBENCH_REDACT_ENV", "CORP_PASS")
    suite = load_suite(suite_file(tmp_path))
    suite = suite.model_copy(update={"servers": {"base": suite.servers["base"]}})
    paths.write_suite(tmp_path, suite)
    restored = restore_secrets(paths.read_suite(tmp_path), SECRETS, paths.suite_file(tmp_path))
    assert restored == suite
    assert suite_hash(restored) == suite_hash(suite)  # the job resumes the submitter's cells


def test_a_secret_missing_from_the_job_environment_is_one_line_naming_it(tmp_path):
    suite = load_suite(suite_file(tmp_path))
    paths.write_suite(tmp_path, suite)
    without = {name: value for name, value in SECRETS.items() if name != "VLLM_API_KEY"}
    with pytest.raises(SpecbenchError) as caught:
        restore_secrets(paths.read_suite(tmp_path), without, paths.suite_file(tmp_path))
    message = str(caught.value)
    assert message.startswith(
        f"servers.base.env.VLLM_API_KEY: redacted in {paths.suite_file(tmp_path)}; the job "
        "takes it from its environment, where VLLM_API_KEY is not set"
    )
    assert "\n" not in message and "api-value" not in message


def test_batch_script_names_the_inherited_variables_never_their_values(tmp_path):
    suite = load_suite(suite_file(tmp_path))
    secrets = server_secrets(suite, "base")
    script = batch_script(
        SlurmSettings(), tmp_path, "base", "job", tmp_path / "log", sorted(secrets)
    )
    assert "# The job reads HF_TOKEN, VLLM_API_KEY from its environment" in script
    assert not any(value in script for value in SECRETS.values())


@pytest.mark.parametrize(
    "argument", ['"--api-key", "sk-x"', '"--api-key=sk-x"', '"--hf-token", "x"']
)
def test_a_secret_flag_in_extra_args_is_refused_for_slurm(tmp_path, argument):
    suite = load_suite(suite_file(tmp_path, f"extra_args = [{argument}]"))
    with pytest.raises(SpecbenchError) as caught:
        check_arguments(suite)
    assert str(caught.value).startswith("servers.base.extra_args[0]: --")
    assert "set it in the server's env instead" in str(caught.value)


def test_flags_that_merely_mention_tokens_are_not_secrets(tmp_path):
    text = '"--tokenizer", "/models/tok", "--max-num-batched-tokens", "512"'
    check_arguments(load_suite(suite_file(tmp_path, f"extra_args = [{text}]")))
