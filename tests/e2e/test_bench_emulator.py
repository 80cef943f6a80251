"""`specbench bench` end to end: the real CLI against real emulator processes.

The emulator's acceptance process is known (conditional 0.8, 0.75, 0.7 per position), so
the measured acceptance can be checked against the truth, and every figure of
`summary.json` can be recomputed from the raw files the cell saved.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import bench_argv, run_cli, running_emulator

from specbench import store
from specbench.launch import EmulatorOverrides, ServerConfig, ServerProcess, SpeculativeConfig
from specbench.metrics.prometheus import (
    GENERATION_TOKENS,
    SPEC_ACCEPTED,
    SPEC_DRAFTS,
    parse_metrics,
)

TRUE_AL = 1 + 0.8 + 0.8 * 0.75 + 0.8 * 0.75 * 0.7  # 2.82
TRUE_PER_POSITION = (0.8, 0.6, 0.42)
CATEGORIES = ("coding", "math", "writing")


def emulator(name: str, log_dir: Path, *, speculative: bool) -> ServerProcess:
    config = ServerConfig(
        engine="emulator",
        model="emu",
        speculative=SpeculativeConfig(method="eagle3", model="draft", num_speculative_tokens=3)
        if speculative
        else None,
        emulator=EmulatorOverrides(
            acceptance=[0.8, 0.75, 0.7] if speculative else None,
            prefill_ms=2.0,
            step_ms=1.0,
            per_request_step_ms=0.02,
            seed=11,
        ),
    )
    return ServerProcess(config, name=name, log_dir=log_dir)


@pytest.fixture(scope="module")
def spec_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with emulator("spec", tmp_path_factory.mktemp("logs"), speculative=True) as server:
        yield server


@pytest.fixture(scope="module")
def nospec_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with emulator("nospec", tmp_path_factory.mktemp("logs"), speculative=False) as server:
        yield server


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "mixed.jsonl"
    lines = []
    for index in range(48):
        category = CATEGORIES[index % 3]
        turns = [f"question {index} about {category} with some words"]
        if index % 8 == 0:
            turns.append(f"follow-up {index}")
        lines.append(json.dumps({"category": category, "turns": turns}))
    path.write_text("\n".join(lines) + "\n")
    return path


def bench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli("bench", *args, timeout=300)


def measure(
    endpoint: str, dataset: Path, out: Path, concurrency: str, max_tokens: str, *options: str
) -> subprocess.CompletedProcess[str]:
    """`bench` of `dataset` against `endpoint` into `out` at `concurrency` (a list) and
    `max_tokens`, with `options`."""
    argv = bench_argv(
        endpoint, out, "--concurrency", concurrency, "--max-tokens", max_tokens, dataset=dataset
    )
    return run_cli(*argv, *options, timeout=300)


def read_summary(root: Path, label: str, dataset: str, concurrency: int) -> dict:
    path = root / label / dataset / f"c{concurrency}" / "r0" / "summary.json"
    return json.loads(path.read_text())


def test_acceptance_matches_the_known_process(spec_server, dataset, tmp_path):
    out = tmp_path / "results"
    result = measure(
        spec_server.base_url, dataset, out, "1,16", "192", "--ignore-eos", "--label", "eagle3"
    )
    assert result.returncode == 0, result.stderr
    for concurrency in (1, 16):
        summary = read_summary(out, "eagle3", "mixed", concurrency)
        spec = summary["spec_decode"]
        assert spec["acceptance_length"] == pytest.approx(TRUE_AL, rel=0.02)
        assert spec["per_position_acceptance"] == pytest.approx(TRUE_PER_POSITION, abs=0.02)
        assert spec["conditional_acceptance"] == pytest.approx([0.8, 0.75, 0.7], abs=0.03)
        assert summary["num_failed"] == 0
        # 48 conversations, 6 of them two-turn: 54 requests of exactly 192 tokens.
        assert summary["num_requests"] == 54
        assert summary["num_conversations"] == 48
        assert summary["output_tokens"] == 54 * 192
        assert summary["server_generation_tokens"] == summary["output_tokens"]
        # Per-category figures come from the per-request field and pool to the counters.
        per_category = summary["per_category"]
        assert set(per_category) == set(CATEGORIES)
        assert {c["acceptance_source"] for c in per_category.values()} == {"per_request_metrics"}
        assert sum(c["num_spec_steps"] for c in per_category.values()) == spec["num_drafts"]


def test_every_figure_recomputes_from_saved_raw_data(spec_server, dataset, tmp_path):
    out = tmp_path / "results"
    result = measure(spec_server.base_url, dataset, out, "4", "64")
    assert result.returncode == 0, result.stderr
    cell = out / "default" / "mixed" / "c4" / "r0"
    summary = json.loads((cell / store.SUMMARY).read_text())
    before = parse_metrics((cell / store.METRICS_BEFORE).read_text())
    after = parse_metrics((cell / store.METRICS_AFTER).read_text())
    drafts = after.get(SPEC_DRAFTS) - before.get(SPEC_DRAFTS)
    accepted = after.get(SPEC_ACCEPTED) - before.get(SPEC_ACCEPTED)
    assert summary["spec_decode"]["acceptance_length"] == 1 + accepted / drafts
    records = list(store.read_records(cell / store.REQUESTS))
    assert len(records) == summary["num_requests"]
    assert sum(r.output_tokens for r in records) == summary["output_tokens"]
    assert after.get(GENERATION_TOKENS) - before.get(GENERATION_TOKENS) == summary["output_tokens"]
    for record in records:
        assert sum(record.chunk_tokens) == record.output_tokens
        assert 0 < record.ttft_ns <= record.e2e_ns
        assert (
            record.output_token_ids is not None
            and len(record.output_token_ids) == record.output_tokens
        )
    ttfts = sorted(r.ttft_ns / 1e6 for r in records)
    assert summary["ttft_ms"]["mean"] == pytest.approx(sum(ttfts) / len(ttfts))
    assert summary["output_tok_s"] == pytest.approx(
        summary["output_tokens"] / summary["duration_s"]
    )
    manifest = json.loads((out / store.MANIFEST).read_text())
    assert manifest["schema_version"] == 2
    assert manifest["servers"]["default"]["model"] == "emu"


def test_without_speculation_spec_decode_is_null(nospec_server, dataset, tmp_path):
    out = tmp_path / "results"
    result = measure(nospec_server.base_url, dataset, out, "8", "32", "--gpus", "2")
    assert result.returncode == 0, result.stderr
    summary = read_summary(out, "default", "mixed", 8)
    assert summary["spec_decode"] is None
    assert all(c["acceptance_length"] is None for c in summary["per_category"].values())
    assert summary["output_tokens"] == summary["server_generation_tokens"]
    assert summary["output_tok_s_per_gpu"] == pytest.approx(summary["output_tok_s"] / 2)


def test_rerun_skips_complete_cells_and_force_remeasures(nospec_server, dataset, tmp_path):
    out = tmp_path / "results"
    args = (
        "--endpoint",
        nospec_server.base_url,
        "--dataset",
        dataset,
        "--concurrency",
        "2",
        "--max-tokens",
        "8",
        "--num-prompts",
        "6",
        "--output",
        out,
    )
    assert bench(*args).returncode == 0
    first = read_summary(out, "default", "mixed", 2)
    manifest = (out / "manifest.json").read_bytes()
    again = bench(*args)
    assert again.returncode == 0
    assert "already complete" in again.stderr
    assert read_summary(out, "default", "mixed", 2) == first
    # A run that measures nothing writes nothing: the directory is bound at a cell's start.
    assert (out / "manifest.json").read_bytes() == manifest
    forced = bench(*args, "--force")
    assert forced.returncode == 0
    assert read_summary(out, "default", "mixed", 2)["started_at"] != first["started_at"]
    assert len(json.loads((out / "manifest.json").read_text())["runs"]) == 2


def test_openai_client_measures_the_same_tokens(spec_server, dataset, tmp_path):
    out = tmp_path / "results"
    result = measure(
        spec_server.base_url, dataset, out, "8", "64", "--ignore-eos", "--client", "openai"
    )
    assert result.returncode == 0, result.stderr
    summary = read_summary(out, "default", "mixed", 8)
    assert summary["client"] == "openai"
    assert summary["output_tokens"] == 54 * 64 == summary["server_generation_tokens"]
    assert summary["spec_decode"]["acceptance_length"] == pytest.approx(TRUE_AL, rel=0.05)
    assert {c["acceptance_source"] for c in summary["per_category"].values()} == {
        "per_request_metrics"
    }


@pytest.mark.parametrize("client", ["aiohttp", "openai"])
def test_a_server_without_continuous_usage_stats_is_measured_by_both_clients(
    dataset, tmp_path, client
):
    out = tmp_path / "results"
    emulated = ("--model", "emu", "--acceptance", "0.8,0.75,0.7", "--seed", "11")
    with running_emulator(*emulated, "--no-continuous-usage-stats") as base:
        result = measure(base, dataset, out, "4", "32", "--ignore-eos", "--client", client)
    assert result.returncode == 0, result.stderr
    summary = read_summary(out, "default", "mixed", 4)
    assert summary["num_failed"] == 0 and summary["num_requests"] == 54
    assert summary["output_tokens"] == 54 * 32 == summary["server_generation_tokens"]
    cell = out / "default" / "mixed" / "c4" / "r0"
    records = list(store.read_records(cell / store.REQUESTS))
    # Per-chunk counts come from token_ids; the final usage chunk still gives the total.
    assert {r.token_count_source for r in records} == {"token_ids"}
    assert all(sum(r.chunk_tokens) == r.output_tokens == 32 for r in records)


@pytest.fixture
def plain_http_server(tmp_path: Path) -> Iterator[str]:
    """A web server with no OpenAI API and no /metrics: python's own http.server."""
    from specbench.launch.process import free_port

    port = free_port("127.0.0.1")
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        import time
        import urllib.request

        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_bad_input_gets_one_line_and_exit_2(spec_server, plain_http_server, dataset, tmp_path):
    out = tmp_path / "out"
    base = ("--dataset", dataset, "--output", out)
    line = one_line_error(bench("--endpoint", "http://127.0.0.1:9", *base))
    assert "unreachable" in line and "127.0.0.1:9" in line
    line = one_line_error(bench("--endpoint", plain_http_server, "--model", "m", *base))
    assert "/metrics" in line
    line = one_line_error(bench("--endpoint", spec_server.base_url, "--concurrency", "0", *base))
    assert "--concurrency" in line
    line = one_line_error(bench("--endpoint", spec_server.base_url, "--concurrency", "1,x", *base))
    assert "--concurrency" in line
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    line = one_line_error(
        bench("--endpoint", spec_server.base_url, "--dataset", empty, "--output", out)
    )
    assert "empty.jsonl" in line
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"category": "a", "turns": ["x"]}\n{"category": "a", "turns": \n')
    line = one_line_error(
        bench("--endpoint", spec_server.base_url, "--dataset", broken, "--output", out)
    )
    assert "broken.jsonl" in line and "2" in line
    assert not any(out.rglob("summary.json"))


def test_prompts_over_the_context_window_warn_then_stop_the_cell(tmp_path):
    from specbench.launch import EmulatorOverrides, ServerConfig, ServerProcess

    config = ServerConfig(
        engine="emulator", model="short", emulator=EmulatorOverrides(prefill_ms=1, step_ms=1)
    )
    # The emulator's context window is 4096 tokens by default; ask it for 64.
    config = config.model_copy(update={"max_model_len": 64})
    long_prompts = tmp_path / "long.jsonl"
    long_prompts.write_text(
        "".join(json.dumps({"category": "long", "turns": ["word " * 300]}) + "\n" for _ in range(3))
    )
    with ServerProcess(config, name="short", log_dir=tmp_path) as server:
        options = ("--max-tokens", "16", "--warmup", "0")
        argv = bench_argv(server.base_url, tmp_path / "out", *options, dataset=long_prompts)
        result = run_cli(*argv, timeout=300)
    assert result.returncode == 1, result.stderr  # a measured cell failed, as with `run`
    # Warned before any request, from the server's own max_model_len and an estimate.
    assert "warning: long: 3 of 3 conversations may exceed max_model_len 64" in result.stderr
    # Then the server's refusal stops the cell with its own message instead of a cell of failures.
    assert result.stderr.strip().splitlines()[-1].startswith("error: 1 cell(s) failed")
    (failure,) = (tmp_path / "out").rglob("failure.json")
    assert "maximum context length is 64 tokens" in json.loads(failure.read_text())["message"]
    assert not list((tmp_path / "out").rglob("summary.json"))


def test_a_changed_workload_is_refused_then_measured_under_its_own_name(
    nospec_server, dataset, tmp_path
):
    out = tmp_path / "results"
    args = ("--endpoint", nospec_server.base_url, "--dataset", dataset, "--num-prompts", "3")
    assert bench(*args, "--max-tokens", "8", "--output", out).returncode == 0
    # The same dataset at another output cap would read the 8-token cells as complete.
    changed = bench(*args, "--max-tokens", "16", "--output", out)
    assert changed.returncode == 2
    line = one_line_error(changed)
    assert "workload 'mixed' was measured here with max_tokens=8, this run asks 16" in line
    named = bench(*args, "--max-tokens", "16", "--workload-name", "mixed-16", "--output", out)
    assert named.returncode == 0, named.stderr
    assert read_summary(out, "default", "mixed", 1)["max_tokens"] == 8
    assert read_summary(out, "default", "mixed-16", 1)["max_tokens"] == 16
    manifest = json.loads((out / "manifest.json").read_text())
    assert [r["status"] for r in manifest["runs"]] == ["completed", "completed"]  # refused: none


def test_official_al_is_recorded_and_recomputes_from_the_records(spec_server, dataset, tmp_path):
    out = tmp_path / "results"
    result = measure(
        spec_server.base_url, dataset, out, "1", "64", "--ignore-eos", "--label", "eagle3"
    )
    assert result.returncode == 0, result.stderr
    cell = out / "eagle3" / "mixed" / "c1" / "r0"
    summary = json.loads((cell / store.SUMMARY).read_text())
    official = summary["official_acceptance"]
    assert official["definition"] == "official"
    assert (official["num_questions"], official["num_turns"]) == (48, 54)
    assert official["num_tokens"] == 54 * 64
    assert official["drafted_step_share"] == 1.0  # a draft model drafts at every step
    # By hand from requests.jsonl: per question Σ tokens / Σ chunks over its turns (the
    # prefill chunk counted), then the plain mean over questions / over a category's.
    tokens: dict[str, int] = {}
    chunks: dict[str, int] = {}
    category: dict[str, str] = {}
    for record in store.read_records(cell / store.REQUESTS):
        assert record.chunk_tokens[0] == 1  # the prefill chunk
        tokens[record.question_id] = tokens.get(record.question_id, 0) + sum(record.chunk_tokens)
        chunks[record.question_id] = chunks.get(record.question_id, 0) + len(record.chunk_tokens)
        category[record.question_id] = record.category
    per_question = {q: tokens[q] / chunks[q] for q in tokens}
    assert official["acceptance_length"] == pytest.approx(
        sum(per_question.values()) / len(per_question), abs=1e-12
    )
    for name in CATEGORIES:
        values = [v for q, v in per_question.items() if category[q] == name]
        got = summary["per_category"][name]["official_acceptance_length"]
        assert got == pytest.approx(sum(values) / len(values), abs=1e-12)
        assert summary["per_category"][name]["num_questions"] == 16
    # Every chunk counts (the prefill one too), so the official AL sits below vLLM's.
    assert official["acceptance_length"] < summary["spec_decode"]["acceptance_length"]
