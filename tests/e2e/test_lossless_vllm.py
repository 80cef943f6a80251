"""`specbench lossless` on a REAL vLLM (CPU build): baseline vs n-gram speculation, temperature 0.

Two servers of the cpu-demo suite on the tiny random target (`baseline`, `ngram`), the
session's shared ones (tests/e2e/conftest.py). Both are benchmarked through the chat API
(concurrency 1 and 4) and the completions API (concurrency 1), outputs saved, then checked:

- vLLM 0.32 puts `token_ids` on streamed chunks of both APIs, so outputs are compared as
  token ids, never as text;
- at concurrency 1 the n-gram outputs equal the baseline's token for token; at
  concurrency 4 any divergence is listed with its position (batched CPU float32 kernels
  may drift), and the verdict and exit code agree with the listed rates;
- per cell, vLLM's per-request objects pooled step-weighted give the counter AL within 1%.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from harness import run_cli
from vllm_pool import VllmServers

from specbench.launch import ServerProcess

pytestmark = pytest.mark.vllm

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"  # 12 conversations, 14 turns
MAX_TOKENS = 48


def specbench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=900)


@pytest.fixture
def servers(vllm_servers: VllmServers) -> dict[str, ServerProcess]:
    names = ("baseline", "ngram")
    return dict(zip(names, vllm_servers.get_many(names), strict=True))


def bench_both(servers: dict[str, ServerProcess], out: Path, api: str, concurrency: str) -> None:
    for name, server in servers.items():
        result = specbench(
            "bench", "--endpoint", server.base_url, "--dataset", DATA, "--output", out,
            "--label", name, "--api", api, "--max-tokens", str(MAX_TOKENS), "--warmup", "1",
            "--concurrency", concurrency,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]


def check(out: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = specbench("lossless", out)
    assert result.returncode in (0, 1), result.stderr
    report = json.loads((out / "lossless.json").read_text())
    assert result.returncode == (0 if report["passed"] else 1)
    return result.returncode, report


def assert_acceptance_lengths_reconcile(report: dict) -> None:  # type: ignore[type-arg]
    assert report["acceptance"], "no speculative cell"
    for row in report["acceptance"]:
        assert row["per_request_coverage"] == 1.0
        assert row["server_counters_al"] > 1.0
        assert abs(row["pooled_vs_counters"]) < 0.01, row
        assert row["num_spec_steps"] == row["num_drafts"]
        assert row["tokens_per_chunk_al"] is not None


def test_chat_ngram_is_lossless_at_concurrency_1(servers, tmp_path_factory) -> None:
    out = tmp_path_factory.mktemp("chat")
    bench_both(servers, out, "chat", "1,4")
    _, report = check(out)
    assert report["baselines"] == ["baseline"] and report["speculative"] == ["ngram"]
    by_concurrency = {cell["concurrency"]: cell for cell in report["cells"]}
    assert sorted(by_concurrency) == [1, 4]
    for cell in by_concurrency.values():
        assert cell["compared_by"] == "token_ids"  # streamed chat chunks carry token_ids
        assert cell["num_pairs"] == 14
        compared = cell["overall"]["num_compared"]
        diverged = len(cell["divergences"])
        assert cell["overall"]["num_matched"] + diverged == compared
        assert compared + sum(cell["not_compared"].values()) == 14
        for divergence in cell["divergences"]:
            assert 0 <= divergence["first_divergence"] <= MAX_TOKENS
    single = by_concurrency[1]
    assert single["overall"] == {"num_compared": 14, "num_matched": 14, "exact_match_rate": 1.0}
    assert single["later_turns"]["num_compared"] == 2
    assert_acceptance_lengths_reconcile(report)


def test_completions_ngram_is_lossless_at_concurrency_1(servers, tmp_path_factory) -> None:
    out = tmp_path_factory.mktemp("completions")
    bench_both(servers, out, "completions", "1")
    code, report = check(out)
    (cell,) = report["cells"]
    assert code == 0 and cell["compared_by"] == "token_ids"
    assert cell["overall"] == {"num_compared": 14, "num_matched": 14, "exact_match_rate": 1.0}
    assert_acceptance_lengths_reconcile(report)
