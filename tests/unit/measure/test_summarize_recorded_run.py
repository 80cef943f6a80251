"""`summary.json` is a pure function of the raw files a cell saved: recompute a real one.

The recorded cells come from a real vLLM 0.32 on CPU (tests/fixtures/runs/README.md),
written by schema 1. Every figure they hold must come back, to the last digit, from
their `requests.jsonl` and the two `/metrics` scrapes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench import store
from specbench.measure.summarize import CellSpec, Window, summarize_cell
from specbench.metrics.prometheus import parse_metrics
from specbench.suite.model import WorkloadSpec

RUN = Path(__file__).resolve().parents[2] / "fixtures" / "runs" / "tiny-vllm-ngram"
#: Fields schema 2 added; the rest of the summary is unchanged.
NEW_IN_SCHEMA_2 = {"schema_version", "workload", "categories", "entropy_tiers"}


@pytest.mark.parametrize("label", ["baseline", "ngram"])
def test_the_recorded_summary_is_recomputed_from_its_raw_files(label: str) -> None:
    directory = RUN / label / "lossless-prompts" / "c1" / "r0"
    saved = store.read_json(directory / store.SUMMARY)
    records = list(store.read_records(directory / store.REQUESTS))
    before = parse_metrics((directory / store.METRICS_BEFORE).read_text())
    after = parse_metrics((directory / store.METRICS_AFTER).read_text())
    assert saved["category"] is None
    settings = WorkloadSpec(
        dataset=saved["dataset"],
        concurrency=[saved["concurrency"]],
        api=saved["api"],
        client=saved["client"],
        max_tokens=saved["max_tokens"],
        temperature=saved["temperature"],
        warmup=1,
        save_outputs=True,
    )
    spec = CellSpec(
        label=saved["label"],
        workload="lossless-prompts",
        settings=settings,
        concurrency=saved["concurrency"],
        repeat=saved["repeat"],
        gpus=saved["gpus"],
        model=saved["model"],
        endpoint=saved["endpoint"],
        warmup=1,
    )
    window = Window(saved["started_at"], saved["finished_at"], saved["duration_s"])
    recomputed = summarize_cell(records, before, after, spec, window).model_dump(mode="json")
    kept = set(saved) - NEW_IN_SCHEMA_2
    official_keys = {"official_acceptance_length", "official_trimmed_acceptance_length"}
    official_keys |= {"num_questions", "official_merged_chunks"}
    per_category = recomputed["per_category"]
    recomputed["per_category"] = {
        name: {k: v for k, v in cat.items() if k not in official_keys}
        for name, cat in per_category.items()
    }
    assert {k: recomputed[k] for k in kept} == {k: saved[k] for k in kept}
    # Fields added after the recording are recomputed too, and agree with the README.
    assert set(recomputed) - set(saved) - NEW_IN_SCHEMA_2 == {
        "num_conversations",
        "server_prompt_tokens",
        "server_preemptions",
        "num_skipped_turns",
        "achieved_concurrency",
        "generation_tokens_mismatch",
        "prefix_cache_reset",
        "prefix_cache_reset_detail",
        "server_prefix_cache_queries",
        "server_prefix_cache_hits",
        "prefix_cache_hit_rate",
        "official_acceptance",
        "history",
        # issue 19: steady-state throughput and bootstrap precision
        "steady_state_duration_s",
        "steady_state_output_tok_s_per_gpu",
        "full_window_output_tok_s_per_gpu",
        "throughput_window",
        "precision",
        # issue 18: AL along the output and thinking vs answer
        "acceptance_cuts",
        # issue 20: standard errors of the gated figures
        "standard_errors",
        # issue 39: the server launch that measured the cell
        "launch",
        # issue 41: GPU board energy (None: summarize_cell has no energy.jsonl to read)
        "energy",
        # issue 40: the running batch (no window_samples.jsonl then) and the drafts per step
        "running_batch_mean",
        "running_batch_samples",
        "effective_k",
        "per_step_drafted_counts",
    }
    assert recomputed["energy"] is None
    assert (recomputed["running_batch_mean"], recomputed["running_batch_samples"]) == (None, 0)
    # `summary` per-request metrics (this era had no `detailed`): no per-step K.
    assert recomputed["per_step_drafted_counts"] is None
    # 4 conversations: too few to resample, and the summary says so.
    assert recomputed["standard_errors"]["figures"] == {}
    assert recomputed["standard_errors"]["note"] == "no noise estimate: 4 conversations (< 5)"
    assert recomputed["history"] == "streamed_text"
    cuts = recomputed["acceptance_cuts"]
    if label == "baseline":
        assert cuts is None
    else:
        # vLLM merged n-gram steps into 6-token chunks even at c=1 (K = 3), and this era
        # had no per-step arrays: the cell's cut is refused, saying why.
        assert cuts["num_spec_tokens"] == 3
        assert "the server coalesced steps" in cuts["overall"]["refusal"]
        assert cuts["overall"]["position_bins"] is None
    assert recomputed["throughput_window"] == "full"
    assert recomputed["precision"]["stopping_rule"] == "all_conversations"
    assert recomputed["num_conversations"] == 4
    assert recomputed["num_skipped_turns"] == 0
    # vLLM counts exactly the tokens the client counted (no failure, nothing else running).
    assert recomputed["server_generation_tokens"] == saved["output_tokens"] == 120
    assert recomputed["generation_tokens_mismatch"] == 0.0
    # Every prompt token was looked up in the prefix cache; none hit (a fresh cache).
    assert recomputed["server_prefix_cache_queries"] == saved["input_tokens"] == 246
    assert recomputed["server_prefix_cache_hits"] == 0
    assert recomputed["prefix_cache_hit_rate"] == 0.0
    assert recomputed["prefix_cache_reset"] is None  # no reset outcome was given
    # Records of that era have no duration_ns: Σ E2E / window, one request at a time.
    e2e_s = sum(r.e2e_ns or 0 for r in records) / 1e9
    assert recomputed["achieved_concurrency"] == pytest.approx(e2e_s / saved["duration_s"])
    assert 0.9 < recomputed["achieved_concurrency"] <= 1.0
    assert recomputed["server_prompt_tokens"] == saved["input_tokens"]
    assert recomputed["server_preemptions"] == 0
    if label == "ngram":  # the hand-checked figures of the fixture's README
        assert recomputed["spec_decode"]["num_drafts"] == 20
        assert recomputed["spec_decode"]["num_accepted_tokens"] == 26
        assert recomputed["spec_decode"]["acceptance_length"] == pytest.approx(2.3)
        # Real vLLM n-gram at K = 3 proposed 51 tokens in 20 steps, not 60: a lookup
        # that matches fewer than K tokens drafts fewer, and the effective K shows it.
        assert recomputed["spec_decode"]["num_draft_tokens"] == 51
        assert recomputed["effective_k"] == pytest.approx(2.55)
        official = recomputed["official_acceptance"]
        assert official["definition"] == "official"
        assert official["num_questions"] == 4 and official["num_turns"] == 5
        assert official["merged_chunks"] > 0 and official["is_estimate"]
    else:
        assert recomputed["effective_k"] is None
        assert recomputed["official_acceptance"] is None
        assert all(c["official_acceptance_length"] is None for c in per_category.values())


@pytest.mark.parametrize("precision", [None, 0.5])
def test_a_cell_without_a_gpu_count_gets_its_intervals_per_server(precision: float | None) -> None:
    # `bench` on an attached endpoint without --gpus: no per-GPU figure exists.
    directory = RUN / "ngram" / "lossless-prompts" / "c1" / "r0"
    saved = store.read_json(directory / store.SUMMARY)
    records = list(store.read_records(directory / store.REQUESTS))
    before = parse_metrics((directory / store.METRICS_BEFORE).read_text())
    after = parse_metrics((directory / store.METRICS_AFTER).read_text())
    settings = WorkloadSpec(
        dataset=saved["dataset"], concurrency=[1], max_tokens=saved["max_tokens"], warmup=1,
        save_outputs=True, precision=precision,
    )  # fmt: skip
    spec = CellSpec(
        label="ngram", workload="lossless-prompts", settings=settings, concurrency=1, repeat=0,
        gpus=None, model=saved["model"], endpoint=saved["endpoint"], warmup=1,
        min_conversations=2 if precision else 0, conversations_available=4,
    )  # fmt: skip
    window = Window(saved["started_at"], saved["finished_at"], saved["duration_s"])
    summary = summarize_cell(records, before, after, spec, window)
    assert summary.output_tok_s_per_gpu is None
    assert summary.precision is not None
    figures = summary.precision.figures
    assert "output_tok_s_per_gpu" not in figures
    assert figures["output_tok_s"].value == pytest.approx(summary.output_tok_s)
    assert figures["output_tok_s"].ci_low <= summary.output_tok_s <= figures["output_tok_s"].ci_high
    assert set(figures) == {
        "output_tok_s",
        "e2e_ms_median",
        "ttft_ms_median",
        "interactivity_tok_s_per_user",
    }
    assert summary.standard_errors is not None and summary.standard_errors.figures == {}
