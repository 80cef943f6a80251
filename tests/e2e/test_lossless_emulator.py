"""`specbench lossless` on a campaign of real emulator processes, one of them corrupting outputs.

The emulator's outputs at temperature 0 are a pure function of the prompt, with or without
speculation, so a clean speculative server matches the baseline exactly. With
`corrupt_rate`, the emulator shifts the ids of a hashed subset of prompts from a hashed
position on (specbench/emulator/tokens.py); the check must find exactly those prompts,
at exactly those positions.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from harness import DATA, campaign_timings, run_cli, suite_toml, workload

from specbench.data.custom import load_custom
from specbench.emulator.tokens import corruption_start, prompt_digest_of_text, render_chat

SEED = 3
CORRUPT_RATE = 0.5
MAX_TOKENS = 32


def specbench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=600)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lossless")
    tag = uuid.uuid4().hex[:10]
    suite = folder / "suite.toml"
    broken = f"""
[servers.broken]
speculative = {{ method = "eagle3", model = "draft", num_speculative_tokens = 3 }}
emulator = {{ acceptance = [0.8, 0.75, 0.7], corrupt_rate = {CORRUPT_RATE} }}
"""
    suite.write_text(
        suite_toml(
            name=f"lossless-{tag}",
            model=f"emu-{tag}",
            timings=campaign_timings(1.0, seed=SEED),
            servers_extra=broken,
            workloads=workload(DATA, [1, 4], MAX_TOKENS),
        )
    )
    out = folder / "results"
    run = specbench("run", suite, "--output", out)
    assert run.returncode == 0, run.stderr[-3000:]
    return out


def expected_corruption() -> dict[str, int]:
    """question id → first corrupted position, for the first turns the emulator corrupts."""
    expected = {}
    for conversation in load_custom(DATA):
        text = render_chat([{"role": "user", "content": conversation.turns[0]}])
        start = corruption_start(prompt_digest_of_text(text), SEED, CORRUPT_RATE, MAX_TOKENS)
        if start is not None:
            expected[conversation.question_id] = start
    return expected


def test_clean_speculation_matches_exactly_and_exits_0(results: Path, tmp_path: Path) -> None:
    result = specbench("lossless", results, "--speculative", "eagle3", "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "lossless.json").read_text())
    assert [(c["concurrency"], c["overall"]["exact_match_rate"]) for c in report["cells"]] == [
        (1, 1.0),
        (4, 1.0),
    ]
    for cell in report["cells"]:
        assert cell["compared_by"] == "token_ids"
        # tiny.jsonl: 12 conversations, two of them with a second turn.
        assert cell["first_turns"]["num_compared"] == 12
        assert cell["later_turns"] == {"num_compared": 2, "num_matched": 2, "exact_match_rate": 1.0}
    for row in report["acceptance"]:
        # The emulator attaches a per-request object to every response: same steps.
        assert row["per_request_pooled_al"] == pytest.approx(row["server_counters_al"], rel=1e-12)
        assert row["per_request_coverage"] == 1.0


def test_corruption_is_caught_where_it_happens_and_exits_1(results: Path, tmp_path: Path) -> None:
    expected = expected_corruption()
    assert 0 < len(expected) < 12  # the fixture's seed corrupts some prompts, not all
    result = specbench("lossless", results, "--speculative", "broken", "--out", tmp_path)
    assert result.returncode == 1, result.stderr
    assert "FAIL" in result.stdout
    report = json.loads((tmp_path / "lossless.json").read_text())
    assert report["passed"] is False
    for cell in report["cells"]:
        first_turns = {
            d["question_id"]: d["first_divergence"] for d in cell["divergences"] if d["turn"] == 0
        }
        assert first_turns == expected
        assert cell["first_turns"]["num_matched"] == 12 - len(expected)
        assert cell["divergence"]["min"] == min(expected.values())
        assert cell["divergence"]["max"] == max(expected.values())
        assert cell["passed"] is False
    # Below the threshold fails; a threshold at the measured rate passes.
    rate = min(c["overall"]["exact_match_rate"] for c in report["cells"])
    lenient = specbench(
        "lossless",
        results,
        "--speculative",
        "broken",
        "--min-match-rate",
        str(rate),
        "--out",
        tmp_path,
    )
    assert lenient.returncode == 0, lenient.stderr
    markdown = (tmp_path / "lossless.md").read_text()
    assert "**PASS**" in markdown and "### Divergences: broken vs baseline" in markdown


def test_default_checks_every_speculative_label_into_the_results_dir(results: Path) -> None:
    result = specbench("lossless", results)
    assert result.returncode == 1
    report = json.loads((results / "lossless.json").read_text())
    assert report["baselines"] == ["baseline"]
    assert report["speculative"] == ["broken", "eagle3"]
    assert report["totals"]["eagle3"]["exact_match_rate"] == 1.0
    assert report["totals"]["broken"]["exact_match_rate"] < 1.0
    assert len(report["acceptance"]) == 4
