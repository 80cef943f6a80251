"""Real vLLM 0.32 `/metrics` text (tests/fixtures/vllm, recorded on CPU) through our parser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from specbench.common.errors import ServerError
from specbench.measure.summarize import spec_decode_summary
from specbench.metrics.prometheus import (
    GENERATION_TOKENS,
    PREEMPTIONS,
    PROMPT_TOKENS,
    REQUESTS_RUNNING,
    REQUESTS_WAITING,
    SPEC_ACCEPTED,
    SPEC_DRAFTS,
    counter_delta,
    parse_metrics,
    per_position_delta,
    select_series,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def two_engines(text: str) -> str:
    """The same exposition with every `engine="0"` sample repeated as `engine="1"`.

    This is how vLLM exposes data parallelism (one series per engine); the second engine's
    values are the first's, so every sum must exactly double.
    """
    lines = []
    for line in text.splitlines():
        lines.append(line)
        if not line.startswith("#") and 'engine="0"' in line:
            lines.append(line.replace('engine="0"', 'engine="1"'))
    return "\n".join(lines) + "\n"


def test_recorded_speculative_window_gives_the_documented_acceptance():
    before = parse_metrics(read("metrics_spec_before.prom"))
    after = parse_metrics(read("metrics_spec_after.prom"))
    spec = spec_decode_summary(before, after)
    assert spec is not None
    assert (spec.num_drafts, spec.num_draft_tokens, spec.num_accepted_tokens) == (160, 480, 96)
    assert spec.num_accepted_tokens_per_position == [32, 32, 32]
    assert spec.acceptance_length == pytest.approx(1.6)
    assert spec.draft_acceptance_rate == pytest.approx(0.2)
    assert spec.per_position_acceptance == pytest.approx([0.2, 0.2, 0.2])
    assert spec.conditional_acceptance == pytest.approx([0.2, 1.0, 1.0])
    assert counter_delta(before, after, GENERATION_TOKENS) == 264
    assert counter_delta(before, after, PROMPT_TOKENS) == 56
    assert counter_delta(before, after, PREEMPTIONS) == 0


def test_created_gauges_are_never_counted():
    text = read("metrics_spec_after.prom")
    assert re.search(r"^vllm:spec_decode_num_drafts_created\{", text, re.MULTILINE)
    snapshot = parse_metrics(text)
    assert snapshot.get(SPEC_DRAFTS) == 200.0  # not 200 + a Unix timestamp
    assert not any(name.endswith("_created") for name in snapshot.samples)


def test_baseline_server_has_no_spec_decode_series():
    snapshot = parse_metrics(read("metrics_nospec.prom"))
    assert not snapshot.has_spec_decode
    assert snapshot.get(GENERATION_TOKENS) == 144.0
    assert spec_decode_summary(snapshot, snapshot) is None


def test_data_parallel_engines_are_summed():
    before = parse_metrics(two_engines(read("metrics_spec_before.prom")))
    after = parse_metrics(two_engines(read("metrics_spec_after.prom")))
    assert counter_delta(before, after, SPEC_DRAFTS) == 320
    assert counter_delta(before, after, SPEC_ACCEPTED) == 192
    assert per_position_delta(before, after) == [64, 64, 64]
    # Ratios do not change when both engines behave alike.
    assert spec_decode_summary(before, after).acceptance_length == pytest.approx(1.6)


def test_a_counter_that_went_down_is_a_restart_error():
    before = parse_metrics(read("metrics_spec_after.prom"))
    after = parse_metrics(read("metrics_spec_before.prom"))
    with pytest.raises(ServerError, match="restarted"):
        spec_decode_summary(before, after)


def test_a_restart_inside_the_window_is_seen_by_identity_even_with_higher_counters() -> None:
    from specbench.metrics.prometheus import check_same_server

    before = parse_metrics(read("metrics_spec_before.prom"))
    after = parse_metrics(read("metrics_spec_after.prom"))
    check_same_server(before, after)  # the same vLLM process: recorded before and after
    assert before.identity["process_start_time_seconds{}"] == 1.7962073249e9
    created = "vllm:generation_tokens_created{engine=0,model_name=tiny-repeat}"
    assert before.identity[created] == after.identity[created]
    assert GENERATION_TOKENS in after.samples and created not in after.samples
    # A new process whose counters climbed above the old ones: counters cannot tell.
    text = read("metrics_spec_after.prom")
    reborn = text.replace(
        "process_start_time_seconds 1.7962073249e+09", "process_start_time_seconds 1.7962079e+09"
    )
    restarted = parse_metrics(reborn)
    assert counter_delta(before, restarted, GENERATION_TOKENS) is not None
    with pytest.raises(ServerError, match=r"process_start_time_seconds changed from 1796207324.9"):
        check_same_server(before, restarted)
    # Without the process collector (multiprocess mode), a counter's `_created` still tells.
    stamp = re.search(r"vllm:generation_tokens_created\{[^}]*\} (\S+)", text)
    assert stamp is not None
    no_process = re.sub(r"^process_start_time_seconds .*$", "", text, flags=re.M)
    recreated = parse_metrics(no_process.replace(stamp.group(1), "1.8e+09"))
    with pytest.raises(ServerError, match="vllm:generation_tokens_created"):
        check_same_server(before, recreated)


def test_a_poll_parses_only_its_series_to_the_same_values():
    polled = (REQUESTS_RUNNING, REQUESTS_WAITING, SPEC_DRAFTS, SPEC_ACCEPTED)
    for text in (read("metrics_spec_after.prom"), two_engines(read("metrics_spec_after.prom"))):
        whole = parse_metrics(text)
        selected = parse_metrics(select_series(text, polled))
        assert selected.samples == {name: whole.samples[name] for name in polled}
        assert selected.samples[SPEC_DRAFTS] in (200.0, 400.0)  # summed over engines
        assert selected.identity == {}  # no `*_created` sample comes along
    # Names match whole: `vllm:spec_decode_num_drafts` is not a prefix of the counter's
    # `_created` or `_total` sample, and the accepted-per-position series is not the total.
    text = read("metrics_spec_after.prom")
    assert select_series(text, ["vllm:spec_decode_num_drafts"]) == ""
    lines = select_series(text, [SPEC_ACCEPTED]).splitlines()
    assert len(lines) == 1 and lines[0].startswith(SPEC_ACCEPTED + "{")
    # A baseline server has the gauges but no spec-decode series.
    baseline = parse_metrics(select_series(read("metrics_nospec.prom"), polled))
    assert not baseline.has_spec_decode and baseline.get(REQUESTS_RUNNING) == 0.0
