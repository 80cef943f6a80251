"""The CPU demo suite end to end with a real vLLM: what `make demo` does, checked.

Three real servers (baseline, n-gram, EAGLE3 on the tiny random target: the session's
shared ones, attached with `--endpoint`), two workloads (the qualitative fixture at three
concurrencies and the throughput fixture), then the report. Every acceptance figure is
recomputed from the raw scrapes each cell saved.

The qualitative workload sends one conversation per domain (`num_prompts = 11`, the
stratified sample) instead of all 44: the same 12 cells, every domain in the report, at a
quarter of the serving. The three servers' nine qualitative cells were most of the
demo's vLLM CPU time (about 40 CPU-s per cell of 44 conversations at c = 4, measured
alone), and the demo fixture was the slowest setup of `make test` (390 s under the xdist
run). Each answer is 32 tokens, not the suite's 64: the real vLLM is `make test`'s
largest CPU cost (about 590 CPU-s of a fresh-clone run) and this setup still its slowest
(297-312 s under load), and 32 tokens still make every cell speculate (each cell's drafts
are checked below). `make demo` runs the whole suite.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from harness import run_cli
from vllm_pool import CPU_DEMO_OVERRIDES, VllmServers

from specbench import store
from specbench.metrics.prometheus import SPEC_ACCEPTED, SPEC_DRAFTS, parse_metrics

#: The setup (three shared servers, then 12 cells) is the longest of the suite: over the
#: default 600 s timeout on 2 cores under load (measured at load 11-14), and `make test`
#: runs this lane beside the others.
pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
#: Conversations of the qualitative workload: one per domain of the fixture's 11.
QUALITATIVE_PROMPTS = 11
#: Tokens per answer, both workloads (the suite's 64 in `make demo`).
MAX_TOKENS = 32


def specbench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=1800)


@pytest.fixture(scope="module")
def demo(
    tmp_path_factory: pytest.TempPathFactory, vllm_servers: VllmServers, vllm_bin: str
) -> tuple[Path, list[str]]:
    out = tmp_path_factory.mktemp("demo")
    overrides = ["--vllm-bin", vllm_bin]
    shorter = (f"workloads.{index}.max_tokens={MAX_TOKENS}" for index in (0, 1))
    settings = (*CPU_DEMO_OVERRIDES, f"workloads.0.num_prompts={QUALITATIVE_PROMPTS}", *shorter)
    for override in settings:
        overrides += ["--set", override]
    names = ("baseline", "ngram", "eagle3")
    for name, server in zip(names, vllm_servers.get_many(names), strict=True):
        overrides += ["--endpoint", f"{name}={server.base_url}"]
    result = specbench("run", REPO / "suites" / "cpu-demo.toml", "--output", out, *overrides)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "12 cells measured, 0 already complete, 0 failed" in result.stdout
    return out, overrides


def cells(root: Path, server: str) -> list[Path]:
    return sorted(p.parent for p in (root / server).rglob("summary.json"))


def test_every_cell_is_measured_and_traceable(demo):
    out, _ = demo
    for server in ("baseline", "ngram", "eagle3"):
        found = cells(out, server)
        assert [c.relative_to(out / server).as_posix() for c in found] == [
            "speed-bench-qualitative/c1/r0",
            "speed-bench-qualitative/c4/r0",
            "speed-bench-qualitative/c8/r0",
            "speed-bench-throughput_1k/c4/r0",
        ]
        for cell in found:
            summary = json.loads((cell / store.SUMMARY).read_text())
            assert summary["num_failed"] == 0
            assert summary["output_tokens"] == summary["server_generation_tokens"]
            records = list(store.read_records(cell / store.REQUESTS))
            assert len(records) == summary["num_requests"]
            assert all(sum(r.chunk_tokens) == r.output_tokens for r in records)
            if "qualitative" in cell.as_posix():  # one conversation of each domain
                assert summary["num_conversations"] == QUALITATIVE_PROMPTS
                assert len({r.category for r in records}) == QUALITATIVE_PROMPTS
            spec = summary["spec_decode"]
            if server == "baseline":
                assert spec is None
                continue
            before = parse_metrics((cell / store.METRICS_BEFORE).read_text())
            after = parse_metrics((cell / store.METRICS_AFTER).read_text())
            drafts = after.get(SPEC_DRAFTS) - before.get(SPEC_DRAFTS)
            accepted = after.get(SPEC_ACCEPTED) - before.get(SPEC_ACCEPTED)
            assert drafts > 0
            assert spec["acceptance_length"] == 1 + accepted / drafts
            # vLLM's per-request objects pool to the counters over the same window.
            categories = summary["per_category"].values()
            assert {c["acceptance_source"] for c in categories} == {"per_request_metrics"}
            assert sum(c["num_spec_steps"] for c in categories) == spec["num_drafts"]


def test_speculation_did_not_change_the_tokens_at_concurrency_1(demo):
    """Temperature 0, one request at a time: n-gram and EAGLE3 must reproduce the baseline."""
    out, _ = demo

    def outputs(server: str) -> dict[tuple[str, int], list[int]]:
        cell = out / server / "speed-bench-qualitative" / "c1" / "r0"
        return {
            (r.question_id, r.turn): r.output_token_ids
            for r in store.read_records(cell / store.REQUESTS)
        }

    baseline = outputs("baseline")
    for server in ("ngram", "eagle3"):
        speculative = outputs(server)
        assert speculative.keys() == baseline.keys()
        first_turns = [key for key in baseline if key[1] == 0]
        matches = sum(speculative[key] == baseline[key] for key in first_turns)
        assert matches == len(first_turns), (
            f"{server}: {matches}/{len(first_turns)} first turns identical"
        )


def test_report_builds_and_a_rerun_measures_nothing(demo):
    out, overrides = demo
    report = specbench("report", out)
    assert report.returncode == 0, report.stderr
    text = (out / "report" / "report.md").read_text()
    assert "Acceptance length by domain" in text or "AL by domain" in text
    assert list((out / "report").rglob("*.png"))
    again = specbench("run", REPO / "suites" / "cpu-demo.toml", "--output", out, *overrides)
    assert again.returncode == 0, again.stderr
    assert "0 cells measured, 12 already complete" in again.stdout
    assert "starting" not in again.stderr
