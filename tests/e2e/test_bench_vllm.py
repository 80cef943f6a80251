"""`specbench bench` against a REAL vLLM (CPU build) whose acceptance is known exactly.

The known-acceptance pair of tools/build_tiny_models.py: the target repeats the last
prompt token forever; the EAGLE3 draft is accepted 100 % after an even last token and 0 %
after an odd one. With 3 speculative tokens and 33 output tokens (1 prefill token + 8 steps
of 4), an even prompt takes 8 steps accepting 3 drafts each and an odd prompt 32 steps
accepting none, so every acceptance figure has an exact expected value.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from harness import run_cli
from vllm_pool import VllmServers

from specbench import store
from specbench.launch import ServerProcess
from specbench.metrics.prometheus import SPEC_ACCEPTED, SPEC_DRAFTS, parse_metrics

pytestmark = pytest.mark.vllm

REPO = Path(__file__).resolve().parents[2]
MODELS = Path(os.environ.get("SPECBENCH_TINY_MODELS") or REPO / ".cache" / "tiny-models")
MAX_TOKENS = 33


@pytest.fixture
def parity_server(vllm_servers: VllmServers) -> ServerProcess:
    return vllm_servers.get("parity")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    known = json.loads((MODELS / "models.json").read_text())["known_acceptance"]
    path = tmp_path_factory.mktemp("data") / "parity.jsonl"
    rows = [{"category": "even", "turns": [p]} for p in known["even_prompts"][:6]]
    rows += [{"category": "odd", "turns": [p]} for p in known["odd_prompts"][:6]]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def bench(server: ServerProcess, dataset: Path, out: Path, *extra: str) -> dict:
    result = run_cli(
        "bench",
        "--endpoint",
        server.base_url,
        "--dataset",
        dataset,
        "--api",
        "completions",
        "--max-tokens",
        MAX_TOKENS,
        "--warmup",
        "1",
        "--output",
        out,
        *extra,
    )
    assert result.returncode == 0, result.stderr
    (summary,) = out.rglob("summary.json")
    return json.loads(summary.read_text())


def test_mixed_run_gives_the_exact_weighted_acceptance(parity_server, dataset, tmp_path):
    summary = bench(parity_server, dataset, tmp_path / "mixed", "--concurrency", "4")
    spec = summary["spec_decode"]
    # 6 even × 8 steps accepting 3, 6 odd × 32 steps accepting 0.
    assert spec["num_drafts"] == 6 * 8 + 6 * 32
    assert spec["num_accepted_tokens"] == 6 * 8 * 3
    assert spec["acceptance_length"] == pytest.approx(1 + 144 / 240)
    assert spec["per_position_acceptance"] == pytest.approx([0.2, 0.2, 0.2])
    assert summary["output_tokens"] == 12 * MAX_TOKENS == summary["server_generation_tokens"]
    assert summary["input_tokens"] == summary["server_prompt_tokens"]
    assert summary["server_preemptions"] == 0
    even, odd = summary["per_category"]["even"], summary["per_category"]["odd"]
    assert even["acceptance_source"] == "per_request_metrics"
    assert even["acceptance_length"] == pytest.approx(4.0)
    assert even["per_position_acceptance"] == pytest.approx([1.0, 1.0, 1.0])
    assert odd["acceptance_length"] == pytest.approx(1.0)
    assert even["num_spec_steps"] + odd["num_spec_steps"] == spec["num_drafts"]
    # The figure is traceable: recompute it from the raw scrapes the cell saved.
    (cell,) = {p.parent for p in (tmp_path / "mixed").rglob("summary.json")}
    before = parse_metrics((cell / store.METRICS_BEFORE).read_text())
    after = parse_metrics((cell / store.METRICS_AFTER).read_text())
    drafts = after.get(SPEC_DRAFTS) - before.get(SPEC_DRAFTS)
    accepted = after.get(SPEC_ACCEPTED) - before.get(SPEC_ACCEPTED)
    assert spec["acceptance_length"] == 1 + accepted / drafts
    for record in store.read_records(cell / store.REQUESTS):
        assert record.output_tokens == MAX_TOKENS == sum(record.chunk_tokens)
        steps = 8 if record.category == "even" else 32
        assert record.spec_decode["num_spec_steps"] == steps


@pytest.mark.parametrize(("category", "expected"), [("even", 4.0), ("odd", 1.0)])
def test_single_category_cells(parity_server, dataset, tmp_path, category, expected):
    summary = bench(
        parity_server, dataset, tmp_path / category, "--concurrency", "2", "--category", category
    )
    assert summary["category"] == category
    assert summary["spec_decode"]["acceptance_length"] == pytest.approx(expected)
    assert summary["spec_decode"]["draft_acceptance_rate"] == pytest.approx((expected - 1) / 3)
