"""`reset_prefix_cache` waits for idle, checks the server's answer and never hides a refusal.

Against the in-process emulator, which answers as vLLM 0.32 does (see
tests/unit/emulator/test_emulator_prefix_cache.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer
from harness import in_process_emulator

from specbench.client.control import reset_prefix_cache
from specbench.emulator import make_emulator_config


async def post(session: aiohttp.ClientSession, base: str, path: str, body: Any) -> int:
    async with session.post(f"{base}{path}", json=body) as response:
        await response.read()
        return response.status


async def test_a_refusing_endpoint_is_a_failed_reset_naming_dev_mode() -> None:
    async with in_process_emulator(make_emulator_config()) as (base, session):
        result = await reset_prefix_cache(session, base, None)
    assert result.success is False
    assert "404" in result.detail and "VLLM_SERVER_DEV_MODE=1" in result.detail


async def test_the_reset_waits_for_requests_in_flight_then_succeeds() -> None:
    config = make_emulator_config(dev_mode=True, prefill_ms=0.0, step_ms=5.0)
    async with in_process_emulator(config) as (base, session):
        body = {
            "model": "specbench-emulator",
            "messages": [{"role": "user", "content": "hello"}],
            "max_tokens": 60,
        }
        busy = asyncio.create_task(post(session, base, "/v1/chat/completions", body))
        await asyncio.sleep(0.05)
        result = await reset_prefix_cache(session, base, None)
        assert busy.done()  # the reset was sent only after the request ended
        await busy
    assert result.success is True
    assert "success=true" in result.detail


async def test_success_false_is_retried_then_reported() -> None:
    answers: list[int] = []

    async def refuse(request: web.Request) -> web.Response:
        answers.append(1)
        return web.json_response({"success": False})

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(text="vllm:num_requests_running 0\nvllm:num_requests_waiting 0\n")

    app = web.Application()
    app.router.add_post("/reset_prefix_cache", refuse)
    app.router.add_get("/metrics", metrics)
    server = TestServer(app)
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            base = str(server.make_url("")).rstrip("/")
            result = await reset_prefix_cache(session, base, None, attempts=3, retry_s=0.0)
    finally:
        await server.close()
    assert len(answers) == 3
    assert result.success is False and "success=false 3 times" in result.detail
