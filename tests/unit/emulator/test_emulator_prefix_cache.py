"""The emulator's /reset_prefix_cache and prefix-cache counters behave as vLLM 0.32's.

Reference behaviour measured on vLLM 0.32 (CPU), /work/handoff/probes/REPORT.md §2:
without VLLM_SERVER_DEV_MODE the route is 404 {"detail": "Not Found"}; in dev mode an idle
server answers 200 {"success": true}, a busy one 200 {"success": false}; a repeated
prompt hits whole blocks of the cache until a reset, then hits nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

from emulator_helpers import post, scrape, series
from harness import in_process_emulator

from specbench.emulator import make_emulator_config
from specbench.emulator.prefix_cache import PrefixCache

FAST = {"prefill_ms": 0.0, "step_ms": 0.0, "per_request_step_ms": 0.0}
QUERIES = "vllm:prefix_cache_queries_total"
HITS = "vllm:prefix_cache_hits_total"


def chat(prompt: str, max_tokens: int = 4) -> dict[str, Any]:
    return {
        "model": "specbench-emulator",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "temperature": 0,
    }


async def reset(session: Any, base: str) -> tuple[int, Any]:
    async with session.post(f"{base}/reset_prefix_cache") as response:
        return response.status, await response.json()


def test_blocks_hit_only_on_a_whole_matching_prefix() -> None:
    cache = PrefixCache(block_size=4)
    first = [f"w{i}" for i in range(10)]  # 2 full blocks
    assert cache.admit(first) == 0
    assert cache.admit(first) == 8  # both blocks; the last token is always computed
    assert cache.admit(first[:8]) == 4  # 8 tokens: the second block holds the last token
    changed = ["x", *first[1:]]  # first block differs: nothing after it can match
    assert cache.admit(changed) == 0
    cache.reset()
    assert cache.admit(first) == 0


async def test_reset_is_404_without_dev_mode() -> None:
    async with in_process_emulator(make_emulator_config(**FAST)) as (base, session):
        assert await reset(session, base) == (404, {"detail": "Not Found"})


async def test_dev_mode_resets_when_idle_and_refuses_when_busy() -> None:
    config = make_emulator_config(dev_mode=True, prefill_ms=0.0, step_ms=5.0)
    async with in_process_emulator(config) as (base, session):
        assert await reset(session, base) == (200, {"success": True})
        busy = asyncio.create_task(post(session, base, "/v1/chat/completions", chat("a b", 40)))
        await asyncio.sleep(0.05)
        assert await reset(session, base) == (200, {"success": False})
        status, _ = await busy
        assert status == 200
        assert await reset(session, base) == (200, {"success": True})


async def test_repeated_prompt_hits_until_reset() -> None:
    config = make_emulator_config(dev_mode=True, prefix_block_size=16, **FAST)
    prompt = " ".join(f"word{i}" for i in range(100))  # chat template: 100 + 2 words + BOS
    async with in_process_emulator(config) as (base, session):

        async def send() -> tuple[float, float]:
            before = await scrape(session, base)
            status, _ = await post(session, base, "/v1/chat/completions", chat(prompt))
            assert status == 200
            after = await scrape(session, base)
            return (
                series(after, QUERIES) - series(before, QUERIES),
                series(after, HITS) - series(before, HITS),
            )

        assert await send() == (103, 0)
        assert await send() == (103, 96)  # 6 whole blocks of 16 below the last token
        assert (await reset(session, base))[1] == {"success": True}
        assert await send() == (103, 0)
