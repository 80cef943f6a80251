"""Shared helpers for the emulator tests: read SSE, scrape metrics (the in-process emulator
is harness.in_process_emulator)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import orjson
from prometheus_client.parser import text_string_to_metric_families

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm"


def parse_sse(raw: bytes) -> list[Any]:
    """The `data:` payloads of an SSE body, JSON-decoded, `[DONE]` kept as a string."""
    events: list[Any] = []
    for block in raw.split(b"\n\n"):
        block = block.strip()
        if not block:
            continue
        assert block.startswith(b"data: "), block
        payload = block[len(b"data: ") :]
        events.append("[DONE]" if payload == b"[DONE]" else orjson.loads(payload))
    return events


async def scrape(session: aiohttp.ClientSession, base: str) -> dict[str, float]:
    """Every sample of `/metrics` as `name{sorted labels}` → value."""
    async with session.get(f"{base}/metrics") as response:
        assert response.status == 200
        text = await response.text()
    samples: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            samples[f"{sample.name}{{{labels}}}"] = sample.value
    return samples


def series(samples: dict[str, float], name: str) -> float:
    """Sum of the samples of exactly this name (all label sets)."""
    return sum(value for key, value in samples.items() if key.split("{", 1)[0] == name)


async def post(
    session: aiohttp.ClientSession, base: str, path: str, body: dict[str, Any]
) -> tuple[int, bytes]:
    async with session.post(f"{base}{path}", json=body) as response:
        return response.status, await response.read()
