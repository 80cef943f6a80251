"""A workload may turn off per-chunk usage: the final usage still gives exact output tokens."""

from __future__ import annotations

import aiohttp
from aiohttp.test_utils import TestServer

from specbench.client.record import RequestRecord
from specbench.client.sender import AiohttpSender, RequestSettings
from specbench.emulator import build_app, make_emulator_config


def test_the_body_asks_for_usage_per_chunk_only_when_wanted() -> None:
    on = RequestSettings(model="m").body([])
    off = RequestSettings(model="m", per_chunk_usage=False, return_token_ids=False).body([])
    assert on["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert on["return_token_ids"] is True
    assert off["stream_options"] == {"include_usage": True, "continuous_usage_stats": False}
    assert "return_token_ids" not in off


async def test_final_usage_only_keeps_output_tokens_exact_and_marks_chunks_estimates() -> None:
    config = make_emulator_config(prefill_ms=0.0, step_ms=0.0, per_request_step_ms=0.0)
    server = TestServer(build_app(config))
    await server.start_server()
    records = []
    try:
        async with aiohttp.ClientSession() as session:
            base = str(server.make_url("")).rstrip("/")
            for per_chunk in (True, False):
                settings = RequestSettings(
                    model="specbench-emulator", max_tokens=40,
                    per_chunk_usage=per_chunk, return_token_ids=per_chunk,
                )  # fmt: skip
                record = RequestRecord(question_id="q", turn=0, num_turns=1, category="c")
                await AiohttpSender(session, base, settings).send(
                    [{"role": "user", "content": "hello there"}], record
                )
                records.append(record)
    finally:
        await server.close()
    exact, final_only = records
    assert exact.ok and final_only.ok
    assert exact.output_tokens == final_only.output_tokens == 40
    assert exact.token_count_source == "usage"
    assert sum(exact.chunk_tokens) == 40
    # Speculative chunks carry several tokens: counted 1 per chunk they are an estimate.
    assert final_only.token_count_source == "chunks"
    assert sum(final_only.chunk_tokens) == len(final_only.chunk_tokens) < 40
