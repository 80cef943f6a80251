"""The emulator's HTTP behaviour, run in-process: acceptance, counters, shapes, faults."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import orjson
import pytest
from emulator_helpers import FIXTURES, parse_sse, post, scrape, series
from harness import in_process_emulator
from prometheus_client.parser import text_string_to_metric_families

from specbench.emulator import make_emulator_config

FAST = {"prefill_ms": 0.0, "step_ms": 0.0, "per_request_step_ms": 0.0}
SPEC = "vllm:spec_decode_"


def chat_body(prompt: str, max_tokens: int, **extra: Any) -> dict[str, Any]:
    return {
        "model": "specbench-emulator",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "temperature": 0,
        **extra,
    }


STREAM_ALL = {
    "stream": True,
    "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    "return_token_ids": True,
}


async def stream_token_ids(session: Any, base: str, body: dict[str, Any], path: str) -> list[int]:
    status, raw = await post(session, base, path, body)
    assert status == 200
    ids: list[int] = []
    for event in parse_sse(raw):
        if event != "[DONE]" and event["choices"]:
            ids.extend(event["choices"][0].get("token_ids") or [])
    return ids


async def test_counter_acceptance_matches_the_configured_process() -> None:
    config = make_emulator_config(acceptance=(0.8, 0.75, 0.7), seed=11, **FAST)
    async with in_process_emulator(config) as (base, session):
        before = await scrape(session, base)
        bodies = [chat_body(f"request {i} about acceptance", 1200) for i in range(40)]
        results = await asyncio.gather(
            *(post(session, base, "/v1/chat/completions", body) for body in bodies)
        )
        after = await scrape(session, base)

    def delta(name: str) -> float:
        return series(after, name) - series(before, name)

    drafts = delta(SPEC + "num_drafts_total")
    accepted = delta(SPEC + "num_accepted_tokens_total")
    assert drafts > 10_000
    assert delta(SPEC + "num_draft_tokens_total") == 3 * drafts
    acceptance_length = 1 + accepted / drafts
    assert abs(acceptance_length - 2.82) / 2.82 < 0.02
    per_position = [
        (
            after[
                f"{SPEC}num_accepted_tokens_per_pos_total{{engine=0,model_name=specbench-emulator,position={i}}}"
            ]
            - before[
                f"{SPEC}num_accepted_tokens_per_pos_total{{engine=0,model_name=specbench-emulator,position={i}}}"
            ]
        )
        / drafts
        for i in range(3)
    ]
    for measured, expected in zip(per_position, (0.80, 0.60, 0.42), strict=True):
        assert abs(measured - expected) < 0.02
    assert sum(per_position) == pytest.approx(accepted / drafts)

    # The per-request objects pool to exactly the counters.
    spec_objects = [orjson.loads(raw)["metrics"]["speculative_decoding"] for _, raw in results]
    assert sum(s["num_spec_steps"] for s in spec_objects) == drafts
    assert sum(s["num_accepted_draft_tokens"] for s in spec_objects) == accepted
    assert all(
        len(s["acceptance_histogram"]) == 4 and s["num_spec_tokens"] == 3 for s in spec_objects
    )
    for s in spec_objects:
        assert s["mean_acceptance_length"] == pytest.approx(
            1 + s["num_accepted_draft_tokens"] / s["num_spec_steps"]
        )
        assert s["draft_acceptance_rate"] == pytest.approx(
            s["num_accepted_draft_tokens"] / s["num_draft_tokens"]
        )
    completion_tokens = sum(orjson.loads(raw)["usage"]["completion_tokens"] for _, raw in results)
    assert completion_tokens == 40 * 1200
    assert delta("vllm:generation_tokens_total") == completion_tokens
    assert delta("vllm:request_success_total") == 40


async def test_no_spec_exposes_no_spec_series_and_counts_streamed_tokens() -> None:
    config = make_emulator_config(speculative=False, **FAST)
    async with in_process_emulator(config) as (base, session):
        bodies = [chat_body(f"plain {i}", 20 + i, **STREAM_ALL) for i in range(10)]
        streams = await asyncio.gather(
            *(post(session, base, "/v1/chat/completions", body) for body in bodies)
        )
        samples = await scrape(session, base)
        async with session.get(f"{base}/metrics") as response:
            text = await response.text()
    assert SPEC not in text
    streamed = 0
    for body, (status, raw) in zip(bodies, streams, strict=True):
        assert status == 200
        events = parse_sse(raw)
        content = [e for e in events if e != "[DONE]" and e["choices"]][1:]  # skip role chunk
        # Without speculation one chunk carries exactly one token.
        assert all(len(e["choices"][0]["token_ids"]) == 1 for e in content)
        assert len(content) == body["max_tokens"]
        final_usage = events[-2]
        assert final_usage["choices"] == [] and "metrics" not in final_usage
        streamed += final_usage["usage"]["completion_tokens"]
    assert streamed == sum(20 + i for i in range(10))
    assert series(samples, "vllm:generation_tokens_total") == streamed


async def test_exposition_parses_and_matches_real_vllm_families() -> None:
    config = make_emulator_config(model="tiny-repeat", max_model_len=2048, **FAST)
    async with in_process_emulator(config) as (base, session):
        await post(session, base, "/v1/completions", {"prompt": "a b c", "max_tokens": 8})
        async with session.get(f"{base}/metrics") as response:
            assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            ours = {f.name: f for f in text_string_to_metric_families(await response.text())}
    real = {
        f.name: f
        for f in text_string_to_metric_families((FIXTURES / "metrics_spec_after.prom").read_text())
    }
    vllm_names = [name for name in ours if name.startswith("vllm:")]
    assert len(vllm_names) >= 10
    for name in vllm_names:
        assert name in real, name
        assert ours[name].type == real[name].type, name
        assert ours[name].documentation == real[name].documentation, name
        our_labels = {tuple(sorted(s.labels)) for s in ours[name].samples}
        real_labels = {tuple(sorted(s.labels)) for s in real[name].samples}
        assert our_labels == real_labels, name
    for name in vllm_names:
        if ours[name].type == "histogram":
            our_bounds = {s.labels["le"] for s in ours[name].samples if "le" in s.labels}
            assert our_bounds == {s.labels["le"] for s in real[name].samples if "le" in s.labels}
    for name in ("vllm:spec_decode_num_drafts", "vllm:spec_decode_num_accepted_tokens_per_pos"):
        assert {s.name for s in ours[name].samples} == {s.name for s in real[name].samples}


def key_shape(value: Any) -> Any:
    """Keys (recursively) of a JSON value; lists described by their first element."""
    if isinstance(value, dict):
        return {key: key_shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [key_shape(value[0])] if value and isinstance(value[0], dict) else "list"
    return "scalar"


def chunk_shapes(events: list[Any]) -> list[Any]:
    """Shape of the first, second, last content, usage chunks (first: role/prompt ids)."""
    chunks = [e for e in events if e != "[DONE]"]
    return [key_shape(chunks[i]) for i in (0, 1, -2, -1)]


@pytest.mark.parametrize(
    ("fixture", "path", "extra"),
    [
        ("chat_stream_spec.sse", "/v1/chat/completions", {}),
        ("completions_stream_spec.sse", "/v1/completions", {}),
    ],
)
async def test_stream_shapes_match_recorded_vllm(
    fixture: str, path: str, extra: dict[str, Any]
) -> None:
    real_events = parse_sse((FIXTURES / fixture).read_bytes())
    config = make_emulator_config(model="tiny-repeat", **FAST)
    body: dict[str, Any] = {
        "model": "tiny-repeat",
        "max_tokens": 16,
        "temperature": 0,
        **STREAM_ALL,
    }
    if path.endswith("chat/completions"):
        body["messages"] = [{"role": "user", "content": "say something"}]
    else:
        body["prompt"] = "say something"
    async with in_process_emulator(config) as (base, session):
        status, raw = await post(session, base, path, body)
    assert status == 200
    ours = parse_sse(raw)
    assert ours[-1] == "[DONE]" and real_events[-1] == "[DONE]"
    assert chunk_shapes(ours) == chunk_shapes(real_events)
    assert (
        ours[-2]["metrics"]["speculative_decoding"].keys()
        == real_events[-2]["metrics"]["speculative_decoding"].keys()
    )
    assert ours[-2]["system_fingerprint"].startswith("vllm-0.32.0-")


async def test_nonstream_models_version_shapes_match_recorded_vllm() -> None:
    config = make_emulator_config(model="tiny-repeat", max_model_len=2048, **FAST)
    async with in_process_emulator(config) as (base, session):
        status, raw = await post(
            session,
            base,
            "/v1/chat/completions",
            {**chat_body("hello", 16, return_token_ids=True), "model": "tiny-repeat"},
        )
        async with session.get(f"{base}/v1/models") as response:
            models = await response.json()
        async with session.get(f"{base}/version") as response:
            version = await response.json()
        async with session.get(f"{base}/health") as response:
            assert response.status == 200
    assert status == 200
    real = orjson.loads((FIXTURES / "chat_nonstream_spec.json").read_bytes())
    assert key_shape(orjson.loads(raw)) == key_shape(real)
    assert key_shape(models) == key_shape(orjson.loads((FIXTURES / "models.json").read_bytes()))
    assert models["data"][0]["max_model_len"] == 2048
    assert version == orjson.loads((FIXTURES / "version.json").read_bytes())


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions"])
async def test_same_prompt_same_ids_with_and_without_speculation(path: str) -> None:
    prompts = [f"lossless check prompt {i} " * (i + 1) for i in range(6)]

    def body(prompt: str) -> dict[str, Any]:
        if path == "/v1/completions":
            return {"prompt": prompt, "max_tokens": 40, "temperature": 0, **STREAM_ALL}
        return chat_body(prompt, 40, **STREAM_ALL)

    outputs: dict[bool, list[list[int]]] = {}
    for speculative in (False, True):
        config = make_emulator_config(
            speculative=speculative, seed=3 if speculative else 99, **FAST
        )
        async with in_process_emulator(config) as (base, session):
            outputs[speculative] = [
                await stream_token_ids(session, base, body(p), path) for p in prompts
            ]
    assert outputs[True] == outputs[False]
    assert all(len(ids) == 40 for ids in outputs[True])
    assert len({tuple(ids) for ids in outputs[True]}) == len(prompts)


async def test_temperature_above_zero_varies_unless_seeded() -> None:
    config = make_emulator_config(**FAST)
    async with in_process_emulator(config) as (base, session):
        path = "/v1/chat/completions"
        sampled = [
            await stream_token_ids(
                session, base, chat_body("p", 20, temperature=1.0, **STREAM_ALL), path
            )
            for _ in range(2)
        ]
        seeded = [
            await stream_token_ids(
                session, base, chat_body("p", 20, temperature=1.0, seed=5, **STREAM_ALL), path
            )
            for _ in range(2)
        ]
        greedy = await stream_token_ids(session, base, chat_body("p", 20, **STREAM_ALL), path)
    assert sampled[0] != sampled[1]
    assert seeded[0] == seeded[1] != greedy


async def test_corrupt_rate_alters_about_that_fraction_of_requests() -> None:
    prompts = [f"corruption probe {i}" for i in range(200)]
    outputs: dict[float, list[list[int]]] = {}
    for rate in (0.0, 0.3):
        config = make_emulator_config(corrupt_rate=rate, seed=4, **FAST)
        async with in_process_emulator(config) as (base, session):
            bodies = [
                {"prompt": p, "max_tokens": 24, "temperature": 0, "return_token_ids": True}
                for p in prompts
            ]
            results = await asyncio.gather(
                *(post(session, base, "/v1/completions", b) for b in bodies)
            )
            outputs[rate] = [orjson.loads(raw)["choices"][0]["token_ids"] for _, raw in results]
    changed = [clean != dirty for clean, dirty in zip(outputs[0.0], outputs[0.3], strict=True)]
    assert 0.2 <= sum(changed) / len(changed) <= 0.4
    for clean, dirty in zip(outputs[0.0], outputs[0.3], strict=True):
        if clean != dirty:
            first = next(i for i, (a, b) in enumerate(zip(clean, dirty, strict=True)) if a != b)
            assert all(a != b for a, b in zip(clean[first:], dirty[first:], strict=True))


async def test_requests_vllm_refuses_get_its_error_bodies() -> None:
    config = make_emulator_config(max_model_len=32, **FAST)
    async with in_process_emulator(config) as (base, session):
        status, raw = await post(
            session, base, "/v1/chat/completions", {**chat_body("x", 4), "model": "other"}
        )
        assert status == 404
        assert orjson.loads(raw)["error"] == {
            "message": "The model `other` does not exist.",
            "type": "NotFoundError",
            "param": "model",
            "code": 404,
        }
        status, raw = await post(
            session, base, "/v1/completions", {"prompt": "w " * 40, "max_tokens": 4}
        )
        assert status == 400
        assert "maximum context length is 32 tokens" in orjson.loads(raw)["error"]["message"]
        # max_tokens beyond the context left is clamped, as vLLM does.
        status, raw = await post(
            session, base, "/v1/completions", {"prompt": "w " * 20, "max_tokens": 100}
        )
        assert status == 200
        assert orjson.loads(raw)["usage"] == {
            "prompt_tokens": 21,
            "total_tokens": 32,
            "completion_tokens": 11,
            "prompt_tokens_details": None,
            "completion_tokens_details": None,
        }


@pytest.mark.quiet  # wall-clock step times: `make test` runs it alone, last
async def test_ttft_is_the_prefill_time_at_concurrency_one() -> None:
    config = make_emulator_config(
        prefill_ms=60.0, step_ms=20.0, per_request_step_ms=0.0, speculative=False
    )
    async with in_process_emulator(config) as (base, session):
        ttfts: list[float] = []
        gaps: list[float] = []
        for _ in range(3):
            start = time.perf_counter()
            arrivals: list[float] = []
            async with session.post(
                f"{base}/v1/chat/completions", json=chat_body("t", 5, **STREAM_ALL)
            ) as response:
                async for line in response.content:
                    if line.startswith(b"data: {") and b'"content":" tok' in line:
                        arrivals.append(time.perf_counter())
            ttfts.append((arrivals[0] - start) * 1000)
            gaps.extend((b - a) * 1000 for a, b in itertools.pairwise(arrivals))
        samples = await scrape(session, base)
    # Shared 2-core CI machines: bounds are loose; the engine schedules to the ms.
    assert 59.0 <= min(ttfts) <= 75.0
    assert len(gaps) == 12
    assert 17.0 <= sorted(gaps)[len(gaps) // 2] <= 25.0
    # The server's own histograms saw the same: 3 first tokens, 12 decode outputs.
    assert series(samples, "vllm:time_to_first_token_seconds_count") == 3
    assert 0.0599 <= series(samples, "vllm:time_to_first_token_seconds_sum") / 3 <= 0.075
    assert series(samples, "vllm:inter_token_latency_seconds_count") == 12
    # Deadline scheduling: a late output shortens the next gap, so the mean stays ~20 ms.
    assert 0.015 <= series(samples, "vllm:inter_token_latency_seconds_sum") / 12 <= 0.025
    assert series(samples, "vllm:e2e_request_latency_seconds_count") == 3


@pytest.mark.quiet  # wall-clock step times: `make test` runs it alone, last
async def test_decode_steps_slow_down_with_batch_size() -> None:
    config = make_emulator_config(
        prefill_ms=0.0, step_ms=2.0, per_request_step_ms=2.0, speculative=False
    )
    async with in_process_emulator(config) as (base, session):

        async def timed(n: int) -> float:
            start = time.perf_counter()
            await asyncio.gather(
                *(
                    post(session, base, "/v1/completions", {"prompt": f"b{i}", "max_tokens": 21})
                    for i in range(n)
                )
            )
            return time.perf_counter() - start

        single = await timed(1)  # prefill 0 ms, then 20 decode steps of 2 ms
        batch = await timed(8)  # prefill 14 ms, then 20 decode steps of 2 + 7 × 2 = 16 ms
    assert 0.039 <= single <= 0.1
    assert 0.33 <= batch <= 0.5


async def test_a_vanished_client_is_aborted_and_counted() -> None:
    config = make_emulator_config(prefill_ms=1.0, step_ms=5.0, per_request_step_ms=0.0)
    async with in_process_emulator(config) as (base, session):
        async with session.post(
            f"{base}/v1/chat/completions", json=chat_body("abort me", 3000, stream=True)
        ) as response:
            await response.content.readline()
        # The engine notices at its next write; give it a few steps.
        for _ in range(100):
            samples = await scrape(session, base)
            if series(samples, "vllm:num_requests_running") == 0:
                break
            await asyncio.sleep(0.02)
        aborted = samples[
            "vllm:request_success_total{engine=0,finished_reason=abort,model_name=specbench-emulator}"
        ]
        assert aborted == 1
        assert series(samples, "vllm:num_requests_running") == 0
        status, _ = await post(
            session, base, "/v1/completions", {"prompt": "after", "max_tokens": 3}
        )
        assert status == 200


@pytest.mark.parametrize(
    "options", [{"speculative": False}, {"speculative": True, "per_request_spec_metrics": False}]
)
async def test_no_per_request_metrics_when_off_or_not_speculating(options: dict[str, Any]) -> None:
    config = make_emulator_config(**options, **FAST)
    async with in_process_emulator(config) as (base, session):
        status, raw = await post(session, base, "/v1/chat/completions", chat_body("m", 12))
        assert status == 200
        assert orjson.loads(raw)["metrics"] is None
        status, raw = await post(
            session, base, "/v1/completions", {"prompt": "m", "max_tokens": 12, **STREAM_ALL}
        )
        usage_chunk = parse_sse(raw)[-2]
        assert usage_chunk["choices"] == [] and usage_chunk["usage"]["completion_tokens"] == 12
        assert "metrics" not in usage_chunk
        samples = await scrape(session, base)
    has_spec_series = any(key.startswith(SPEC) for key in samples)
    assert has_spec_series == options["speculative"]


async def test_per_request_timing_is_the_step_clock_and_shaped_as_recorded_vllm() -> None:
    """`--enable-per-request-metrics`: the final usage chunk carries vLLM's timing fields (the
    recorded real vLLM's keys, in its order), from the step clock, so exact at any load:
    prefill 5 ms (TTFT from scheduling), then 9 decode steps of 2 ms (generation time)."""
    real_events = parse_sse((FIXTURES / "chat_stream_timing.sse").read_bytes())
    config = make_emulator_config(
        prefill_ms=5.0,
        step_ms=2.0,
        per_request_step_ms=0.0,
        speculative=False,
        enable_per_request_metrics=True,
    )
    async with in_process_emulator(config) as (base, session):
        status, raw = await post(
            session, base, "/v1/chat/completions", chat_body("time me", 10, **STREAM_ALL)
        )
        _, whole = await post(session, base, "/v1/completions", {"prompt": "p", "max_tokens": 10})
    assert status == 200
    metrics = parse_sse(raw)[-2]["metrics"]
    real = real_events[-2]["metrics"]
    assert list(metrics) == [key for key in real if key != "speculative_decoding"]
    expected = {
        "time_to_first_token_ms": 5.0,
        "generation_time_ms": 18.0,
        "queue_time_ms": 0.0,
        "mean_itl_ms": 2.0,
        "tokens_per_second": 10 / 0.023,
    }
    # The step clock is the event loop's time.monotonic() (seconds since boot): 23 ms is a
    # difference of two values near the uptime, each carrying its float's rounding (~7e-12 s
    # at 18 h up, more later). 10 / 0.023 amplifies that to ~1e-6 tok/s: one machine up 18 h
    # read 434.78260977618 against 434.78260869565 (1.08e-6 apart), so `abs=1e-6` failed by
    # uptime alone. Relative 1e-6 (4e-4 tok/s here) still tells one step's error (400 tok/s).
    assert metrics == pytest.approx(expected, rel=1e-6, abs=1e-6)
    # A non-streaming body dumps every field, speculative_decoding null without speculation.
    body_metrics = orjson.loads(whole)["metrics"]
    assert body_metrics == pytest.approx(
        {**expected, "speculative_decoding": None}, rel=1e-6, abs=1e-6
    )


async def test_without_the_flag_there_is_no_timing() -> None:
    config = make_emulator_config(**FAST)
    async with in_process_emulator(config) as (base, session):
        _, raw = await post(session, base, "/v1/chat/completions", chat_body("t", 4, **STREAM_ALL))
    assert list(parse_sse(raw)[-2]["metrics"]) == ["speculative_decoding"]
