"""The server side of a cell, seen over HTTP: model discovery, `/metrics` scrapes, idleness.

Every call here is outside the measured window; timeouts are explicit and failures become
one-line SpecbenchErrors naming the endpoint.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import aiohttp

from specbench.common.errors import ServerError, SpecbenchError
from specbench.metrics.prometheus import (
    REQUESTS_RUNNING,
    REQUESTS_WAITING,
    MetricsSnapshot,
    parse_metrics,
    select_series,
)

CONTROL_TIMEOUT = aiohttp.ClientTimeout(total=30)


@dataclass(frozen=True, slots=True)
class Scrape:
    """One raw `/metrics` text and its parsed snapshot."""

    text: str
    snapshot: MetricsSnapshot


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


async def _get(
    session: aiohttp.ClientSession, url: str, api_key: str | None
) -> aiohttp.ClientResponse:
    try:
        response = await session.get(url, headers=auth_headers(api_key), timeout=CONTROL_TIMEOUT)
    except (aiohttp.ClientError, TimeoutError) as error:
        raise ServerError(
            f"endpoint {url} is unreachable ({type(error).__name__}: {error})"
        ) from None
    return response


async def discover_model(
    session: aiohttp.ClientSession, base_url: str, api_key: str | None
) -> dict[str, Any]:
    """The first model `/v1/models` lists (vLLM serves one), with its `max_model_len` if given."""
    url = f"{base_url}/v1/models"
    async with await _get(session, url, api_key) as response:
        if response.status != 200:
            raise SpecbenchError(
                f"{url} answered HTTP {response.status}; is this an OpenAI-compatible server?"
            )
        body = await response.json(content_type=None)
    models = body.get("data") if isinstance(body, dict) else None
    if not models:
        raise SpecbenchError(f"{url} lists no model; pass --model")
    return dict(models[0])


async def server_version(
    session: aiohttp.ClientSession, base_url: str, api_key: str | None
) -> str | None:
    """vLLM's `/version`, or None when the server does not have it."""
    try:
        async with await _get(session, f"{base_url}/version", api_key) as response:
            if response.status != 200:
                return None
            body = await response.json(content_type=None)
    except (SpecbenchError, aiohttp.ContentTypeError, ValueError):
        return None
    return str(body.get("version")) if isinstance(body, dict) and "version" in body else None


async def scrape(
    session: aiohttp.ClientSession,
    base_url: str,
    api_key: str | None,
    series: Collection[str] | None = None,
) -> Scrape:
    """GET `/metrics` (with the API key when one is set) and parse it: whole, or only the
    samples named in `series` (`select_series`: a poll inside the window)."""
    url = f"{base_url}/metrics"
    async with await _get(session, url, api_key) as response:
        if response.status == 404:
            raise SpecbenchError(
                f"{url} not found: specbench needs vLLM's Prometheus /metrics endpoint"
            )
        if response.status != 200:
            raise ServerError(f"{url} answered HTTP {response.status}")
        text = await response.text()
    parsed = text if series is None else select_series(text, series)
    return Scrape(text=text, snapshot=parse_metrics(parsed, source=url))


async def scrape_when_idle(
    session: aiohttp.ClientSession,
    base_url: str,
    api_key: str | None,
    *,
    timeout_s: float = 300.0,
    poll_s: float = 0.05,
) -> Scrape:
    """Scrape once no request is running or waiting, so no straggler leaks into a window.

    vLLM updates its gauges once per engine step, so idleness is confirmed on two
    consecutive scrapes.
    """
    deadline = time.monotonic() + timeout_s
    idle_streak = 0
    while True:
        result = await scrape(session, base_url, api_key)
        busy = (result.snapshot.get(REQUESTS_RUNNING) or 0) + (
            result.snapshot.get(REQUESTS_WAITING) or 0
        )
        idle_streak = idle_streak + 1 if busy == 0 else 0
        if idle_streak >= 2:
            return result
        if time.monotonic() > deadline:
            raise ServerError(
                f"{base_url} still has {busy:g} requests in flight after {timeout_s:g} s"
            )
        await asyncio.sleep(poll_s)


@dataclass(frozen=True, slots=True)
class PrefixCacheReset:
    """What `POST /reset_prefix_cache` did: verified by the server's answer, or why not."""

    success: bool
    detail: str


#: Tries of a reset the server refused with {"success": false} (blocks still in use).
RESET_ATTEMPTS = 3
RESET_RETRY_S = 0.5


async def reset_prefix_cache(
    session: aiohttp.ClientSession,
    base_url: str,
    api_key: str | None,
    *,
    attempts: int = RESET_ATTEMPTS,
    retry_s: float = RESET_RETRY_S,
    idle_timeout_s: float = 300.0,
) -> PrefixCacheReset:
    """Wait until the server is idle, POST /reset_prefix_cache, and check its answer.

    vLLM (0.32) serves the route only with VLLM_SERVER_DEV_MODE=1 (else 404), and answers
    200 {"success": false} while requests still hold KV blocks: so the reset follows an
    idle check, and a refusal is retried `attempts` times. `reset_running_requests` is
    never sent (it preempts running requests). Never raises for a refused reset.
    """
    url = f"{base_url}/reset_prefix_cache"
    detail = "not attempted"
    for _ in range(attempts):
        await scrape_when_idle(session, base_url, api_key, timeout_s=idle_timeout_s)
        try:
            async with session.post(
                url, headers=auth_headers(api_key), timeout=CONTROL_TIMEOUT
            ) as response:
                status = response.status
                text = await response.text(errors="replace")
        except (aiohttp.ClientError, TimeoutError) as error:
            return PrefixCacheReset(False, f"{url}: {type(error).__name__}: {error}")
        if status == 404:
            return PrefixCacheReset(
                False,
                f"{url} answered HTTP 404 (vLLM serves it only with VLLM_SERVER_DEV_MODE=1)",
            )
        if status != 200:
            return PrefixCacheReset(False, f"{url} answered HTTP {status}: {text.strip()[:200]}")
        try:
            body = json.loads(text) if text.strip() else None
        except ValueError:
            body = None
        if not isinstance(body, dict) or "success" not in body:
            # Older vLLMs answered a bare 200: accepted, but its result is not reported.
            return PrefixCacheReset(
                True, f"{url} answered HTTP 200 without a success field (result not reported)"
            )
        if body["success"] is True:
            return PrefixCacheReset(True, f"{url} answered success=true")
        detail = f"{url} answered success=false {attempts} times (KV blocks still in use)"
        await asyncio.sleep(retry_s)
    return PrefixCacheReset(False, detail)
